package tui

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
)

// InspectQuery asks for what the detail and log views show of one job.
type InspectQuery struct {
	ID int64
	// AfterSeq asks for the log chunks stored after this one; 0 for the
	// tail of the log (logTailBytes of it), as a view opens.
	AfterSeq int64
	// Explain asks for the dispatcher's explanation too.
	Explain bool
}

// Inspection is one job as one read of it found it.
type Inspection struct {
	At  time.Time // the clock's time of the read
	Job *engine.Job
	// EndedBy is the event of the operator who cancelled or deleted the
	// job, nil otherwise (engine.EndedBy).
	EndedBy     *engine.Event
	Explanation *dispatch.Explanation // when asked for
	// Log holds the chunks after the query's AfterSeq, oldest first.
	Log []engine.LogChunk
}

// InspectFunc reads one job for the detail and log views. Like FetchFunc,
// it is called from a command, never from Update or View.
type InspectFunc func(ctx context.Context, q InspectQuery) (*Inspection, error)

// Bounds of a log read: a view that opens reads the last logTailBytes of
// the log (the whole of it, a page at a time, keeping the newest); a view
// that follows reads at most logFollowChunks new chunks each refresh.
const (
	logTailBytes    = 64 << 10
	logPage         = 200
	logFollowChunks = 1000
)

// Inspect reads one job: the job, who ended it, its explanation when
// asked, and its new log output.
func (s *Source) Inspect(ctx context.Context, q InspectQuery) (*Inspection, error) {
	in := &Inspection{At: s.Clock.Now()}
	var err error
	// The job before its log, so output stored before it ended is in
	// this read.
	if in.Job, err = s.Store.JobGet(ctx, q.ID); err != nil {
		return nil, err
	}
	last, err := s.Store.EventList(ctx, engine.EventListParams{JobID: &q.ID, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("read the events of job %d: %w", q.ID, err)
	}
	in.EndedBy = engine.EndedBy(in.Job, last)
	if q.Explain {
		sel, err := placement.ParseSelector(placement.SelectorLoadFactor)
		if err != nil {
			return nil, err
		}
		if in.Explanation, err = dispatch.Explain(ctx, s.Store, q.ID, sel); err != nil {
			return nil, fmt.Errorf("explain job %d: %w", q.ID, err)
		}
	}
	if q.AfterSeq > 0 {
		in.Log, err = s.Store.JobLogList(ctx, engine.JobLogListParams{JobID: q.ID, AfterSeq: q.AfterSeq, Limit: logFollowChunks})
		return in, err
	}
	in.Log, err = s.logTail(ctx, q.ID)
	return in, err
}

// logTail reads a job's whole log a page at a time and keeps the newest
// chunks, logTailBytes of them.
func (s *Source) logTail(ctx context.Context, id int64) ([]engine.LogChunk, error) {
	var tail []engine.LogChunk
	size := 0
	for after := int64(0); ; {
		page, err := s.Store.JobLogList(ctx, engine.JobLogListParams{JobID: id, AfterSeq: after, Limit: logPage})
		if err != nil {
			return nil, fmt.Errorf("read the log of job %d: %w", id, err)
		}
		for _, c := range page {
			tail = append(tail, c)
			size += len(c.Data)
			for len(tail) > 1 && size-len(tail[0].Data) >= logTailBytes {
				size -= len(tail[0].Data)
				tail = tail[1:]
			}
			after = c.Seq
		}
		if len(page) < logPage {
			return tail, nil
		}
	}
}

// logBuffer holds the last lines of a job's log as the views show them:
// cleaned of terminal escapes and control characters, a marker line
// where a new attempt begins.
type logBuffer struct {
	lines    []string
	partial  string // the last line, not ended yet
	attempt  int    // of the last chunk
	afterSeq int64  // the last chunk read
	max      int
}

// maxLogLines is how many lines the views keep of a log.
const maxLogLines = 2000

func newLogBuffer() *logBuffer { return &logBuffer{max: maxLogLines} }

// add takes chunks in order; a chunk read before is skipped.
func (b *logBuffer) add(chunks []engine.LogChunk) {
	for _, c := range chunks {
		if c.Seq <= b.afterSeq {
			continue
		}
		b.afterSeq = c.Seq
		if c.Attempt != b.attempt {
			if b.partial != "" {
				b.push(b.partial)
				b.partial = ""
			}
			if b.attempt != 0 || len(b.lines) > 0 {
				b.push(fmt.Sprintf("── attempt %d ──", c.Attempt))
			}
			b.attempt = c.Attempt
		}
		text := b.partial + string(c.Data)
		parts := strings.Split(text, "\n")
		for _, line := range parts[:len(parts)-1] {
			b.push(line)
		}
		b.partial = parts[len(parts)-1]
	}
}

func (b *logBuffer) push(line string) {
	b.lines = append(b.lines, cleanLine(line))
	if over := len(b.lines) - b.max; over > 0 {
		b.lines = append(b.lines[:0], b.lines[over:]...)
	}
}

// Lines is every line kept, the unfinished last one included.
func (b *logBuffer) Lines() []string {
	if b.partial == "" {
		return b.lines
	}
	return append(b.lines[:len(b.lines):len(b.lines)], cleanLine(b.partial))
}

// cleanLine makes a line of a job's output safe to draw: its terminal
// escapes are dropped, tabs become spaces and other control characters
// a visible mark.
func cleanLine(s string) string {
	s = ansi.Strip(strings.TrimSuffix(s, "\r"))
	s = strings.ReplaceAll(s, "\t", "    ")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '·'
		}
		return r
	}, s)
}
