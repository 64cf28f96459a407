package runner

import (
	"fmt"
	"sync"

	"github.com/jobctl/jobctl/engine"
)

// Output receives what a running job reports. Implementations must be safe
// for concurrent use: stdout and stderr are read by separate goroutines.
type Output interface {
	// Log receives the job's log in arrival order, each piece of one
	// stream: the job's own stdout and stderr bytes (engine.LogOutput),
	// its progress and warning lines, each whole (engine.LogProtocol), and
	// the runner's own lines about the run (engine.LogNote). Like
	// io.Writer, it must not keep p after returning.
	Log(stream engine.LogStream, p []byte)
	// Progress reports a percentage (0-100) and an optional message.
	Progress(percent int, message string)
	// Warning reports a warning; a successful run then ends SucceededWithWarning.
	Warning(message string)
}

// trackingOutput forwards to the node's Output and remembers whether a
// warning was reported, which decides between Succeeded and
// SucceededWithWarning.
type trackingOutput struct {
	Output

	mu      sync.Mutex
	warned  bool
	warning string // the most recent warning
}

// Warning records the warning and forwards it.
func (t *trackingOutput) Warning(message string) {
	t.mu.Lock()
	t.warned, t.warning = true, message
	t.mu.Unlock()
	t.Output.Warning(message)
}

// lastWarning reports whether a warning was seen, and the latest text.
func (t *trackingOutput) lastWarning() (bool, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.warned, t.warning
}

// logf writes one of the runner's own lines to the job's log, as a note.
func (t *trackingOutput) logf(format string, args ...any) {
	t.Log(engine.LogNote, fmt.Appendf(nil, format+"\n", args...))
}
