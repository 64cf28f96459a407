package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// hangGuard bounds every wait in these tests; reaching it means the runner
// hung, not that it was slow. The busy loops that measure CPU time need
// about a second of CPU, which a machine at load average 25 stretches to
// over twenty.
const hangGuard = time.Minute

// progress is one Output.Progress call.
type progress struct {
	percent int
	message string
}

// recordingOutput records everything a run reports.
type recordingOutput struct {
	mu       sync.Mutex
	log      bytes.Buffer // every stream, notes as "jobctl: " lines
	streams  map[engine.LogStream]*bytes.Buffer
	progress []progress
	warnings []string
	changed  chan struct{} // closed and replaced on every Log
}

func newRecordingOutput() *recordingOutput {
	return &recordingOutput{changed: make(chan struct{}), streams: map[engine.LogStream]*bytes.Buffer{}}
}

func (o *recordingOutput) Log(stream engine.LogStream, p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if stream == engine.LogNote {
		o.log.WriteString("jobctl: ")
	}
	o.log.Write(p)
	if o.streams[stream] == nil {
		o.streams[stream] = &bytes.Buffer{}
	}
	o.streams[stream].Write(p)
	close(o.changed)
	o.changed = make(chan struct{})
}

// streamText is what the run logged in one stream.
func (o *recordingOutput) streamText(stream engine.LogStream) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if b := o.streams[stream]; b != nil {
		return b.String()
	}
	return ""
}

func (o *recordingOutput) Progress(percent int, message string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.progress = append(o.progress, progress{percent, message})
}

func (o *recordingOutput) Warning(message string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.warnings = append(o.warnings, message)
}

func (o *recordingOutput) logText() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.log.String()
}

func (o *recordingOutput) progressCalls() []progress {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]progress(nil), o.progress...)
}

func (o *recordingOutput) warningCalls() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.warnings...)
}

// waitLog waits until the log contains want and returns the log.
func (o *recordingOutput) waitLog(t *testing.T, want string) string {
	t.Helper()
	deadline := time.After(hangGuard)
	for {
		o.mu.Lock()
		text, changed := o.log.String(), o.changed
		o.mu.Unlock()
		if strings.Contains(text, want) {
			return text
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("log never contained %q; log so far:\n%s", want, text)
		}
	}
}

// waitDone waits for the run to end and returns its result.
func waitDone(t *testing.T, r *Run) Result {
	t.Helper()
	select {
	case <-r.Done():
		return r.Result()
	case <-time.After(hangGuard):
		t.Fatalf("run did not end within %s", hangGuard)
		return Result{}
	}
}

// start starts a process run and cancels it when the test ends.
func start(t *testing.T, s Spec, out Output) *Run {
	t.Helper()
	r, err := Start(s, out)
	if err != nil {
		t.Fatalf("Start(%q): %v", s.Argv, err)
	}
	t.Cleanup(func() {
		r.Cancel("test ended", 0)
		<-r.Done()
	})
	return r
}

// processGone reports whether pid has ended: it no longer exists, or it is a
// zombie that nobody reaped (as under an init that does not reap orphans).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name, which is in parentheses and may hold anything.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

// waitGone waits until pid has ended.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	waitfor.Until(t, hangGuard, fmt.Sprintf("process %d to end", pid), func() bool { return processGone(pid) })
}

// fakeNodeEnv makes the test binary act as a node (see runFakeNode).
const fakeNodeEnv = "JOBCTL_RUNNER_TEST_FAKE_NODE"

func init() {
	if os.Getenv(fakeNodeEnv) != "" {
		// Keep the main thread for the main goroutine, so the goroutine in
		// runFakeNode runs on another thread, which ends when it returns
		// (the main thread would only be parked).
		runtime.LockOSThread()
	}
}

func TestMain(m *testing.M) {
	if os.Getenv(fakeNodeEnv) != "" {
		runFakeNode()
		return
	}
	os.Exit(m.Run())
}

// stdoutOutput forwards a job's log to the fake node's stdout.
type stdoutOutput struct{}

func (stdoutOutput) Log(_ engine.LogStream, p []byte) { _, _ = os.Stdout.Write(p) }
func (stdoutOutput) Progress(int, string)             {}
func (stdoutOutput) Warning(string)                   {}

// runFakeNode starts a job that prints its pid, then checks that the job
// survives the end of the OS thread that asked for it, prints "alive", and
// waits to be killed. Its test then checks that the job dies with it.
func runFakeNode() {
	started := make(chan *Run)
	go func() {
		// Returning while locked ends this goroutine's OS thread. Had the
		// child been forked on it, its parent-death signal would fire now.
		runtime.LockOSThread()
		r, err := Start(Spec{Argv: []string{"sh", "-c", `echo "$$"; exec sleep 1000`}}, stdoutOutput{})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		started <- r
	}()
	r := <-started
	select {
	case <-r.Done():
		fmt.Println("died:", r.Result().Reason)
		os.Exit(1)
	case <-time.After(300 * time.Millisecond):
	}
	fmt.Println("alive")
	time.Sleep(time.Hour)
}

// measuredDone waits for a process run to end and returns its result
// without its usage, which it checks is there: tests of how a run ended
// compare the rest exactly.
func measuredDone(t *testing.T, r *Run) Result {
	t.Helper()
	res := waitDone(t, r)
	if res.Usage == nil {
		t.Errorf("the process run ended without its usage: %+v", res)
	}
	res.Usage = nil
	return res
}
