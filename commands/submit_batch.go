package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jobctl/jobctl/engine"
)

// maxBatchLine bounds one line of a batch: a job at every limit of its
// fields (engine.MaxPayloadBytes, engine.MaxArgsBytes, …) fits with room.
const maxBatchLine = 4 << 20

// batchLine is one line of `jobctl submit --batch`. A nil field was left
// out, and the command line's flag gives it.
type batchLine struct {
	Type        *string         `json:"type"`
	Operation   *string         `json:"operation"`
	Args        *[]string       `json:"args"`
	Payload     json.RawMessage `json:"payload"`
	Load        *float64        `json:"load"`
	Priority    *int            `json:"priority"`
	Key         *string         `json:"key"`
	ParentID    *int64          `json:"parent_id"`
	MaxAttempts *int            `json:"max_attempts"`
	Backoff     *string         `json:"backoff"`
	RunTimeout  *string         `json:"run_timeout"`
	Timeout     *string         `json:"timeout"` // the old name of run_timeout
	Memory      *string         `json:"memory"`

	runTimeoutField string  // the name the line gives the run limit
	In              *string `json:"in"`
	Hold            *bool   `json:"hold"`
	Rollback        *string `json:"rollback"`
	RollbackType    *string `json:"rollback_type"`
}

// batchJobs are the jobs of a batch with the line each came from.
type batchJobs struct {
	Path     string // as --batch named it
	Requests []engine.SubmitRequest
	Lines    []int // Lines[i] is the line number of Requests[i]
	// OldTimeout is the first line that spells run_timeout "timeout", its
	// old name; 0 when none does.
	OldTimeout int
}

// readBatch reads --batch FILE ("-" for stdin).
func readBatch(path string, stdin io.Reader, defaults *SubmitOptions) (batchJobs, error) {
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return batchJobs{}, err
		}
		defer f.Close()
		in = f
	}
	jobs, err := parseBatch(in, defaults)
	jobs.Path = path
	return jobs, err
}

// parseBatch reads one JSON object a line, blank lines skipped, each field
// it leaves out taken from defaults. It stops at the first bad line, so
// nothing of a batch with one is submitted.
func parseBatch(r io.Reader, defaults *SubmitOptions) (batchJobs, error) {
	var out batchJobs
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxBatchLine)
	n := 0
	for sc.Scan() {
		n++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		req, old, err := parseBatchLine(text, defaults)
		if err != nil {
			return batchJobs{}, fmt.Errorf("line %d: %w", n, err)
		}
		if old && out.OldTimeout == 0 {
			out.OldTimeout = n
		}
		out.Requests = append(out.Requests, req)
		out.Lines = append(out.Lines, n)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return batchJobs{}, fmt.Errorf("line %d: longer than %d MiB", n+1, maxBatchLine>>20)
		}
		return batchJobs{}, err
	}
	return out, nil
}

// parseBatchLine reads one line of a batch; oldTimeout reports that it
// spells run_timeout "timeout", its old name.
func parseBatchLine(text []byte, d *SubmitOptions) (r engine.SubmitRequest, oldTimeout bool, err error) {
	// encoding/json would let invalid UTF-8 in a string through as U+FFFD:
	// the job would not be the one the line asked for.
	if !utf8.Valid(text) {
		return r, false, fmt.Errorf("not valid UTF-8 text")
	}
	var l batchLine
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return r, false, fmt.Errorf("not a JSON object of job fields: %v", err)
	}
	if dec.More() {
		return r, false, fmt.Errorf("more than one JSON value; put each job on a line of its own")
	}
	switch {
	case l.Timeout != nil && l.RunTimeout != nil:
		return r, false, fmt.Errorf(`"timeout" is the old name of "run_timeout"; give one of them`)
	case l.Timeout != nil:
		l.RunTimeout, l.runTimeoutField, oldTimeout = l.Timeout, "timeout", true
	default:
		l.runTimeoutField = "run_timeout"
	}
	r, err = l.request(d)
	return r, oldTimeout, err
}

// request is the job the line asks for, its fields over d's.
func (l *batchLine) request(d *SubmitOptions) (engine.SubmitRequest, error) {
	r := engine.SubmitRequest{
		Type: d.Type, Operation: d.Operation, Args: d.Args, Payload: d.Payload, Load: d.Load, Priority: d.Priority,
		Timeout: d.RunTimeout, MemoryLimit: d.Memory, Hold: d.Hold, Key: d.Key, ParentID: d.ParentID, MaxAttempts: d.MaxAttempts,
		Backoff: d.Backoff, RunAt: d.At, RunIn: d.In, Creator: d.Creator, Rollback: d.Rollback,
		RollbackType: d.RollbackType,
	}
	if l.Type != nil {
		r.Type = strings.TrimSpace(*l.Type)
	}
	if l.Operation != nil {
		r.Operation = *l.Operation
	}
	if l.Args != nil {
		r.Args = *l.Args
	}
	switch {
	case r.Type == "" && len(r.Args) == 0:
		return r, fmt.Errorf(`no job type: give "type" (or --type), or "args" to run a command`)
	case r.Type == "":
		r.Type = engine.TypeExec
	case r.Type == engine.TypeExec && len(r.Args) == 0:
		return r, fmt.Errorf(`an exec job needs a command: give "args"`)
	}
	if l.Payload != nil {
		r.Payload = l.Payload
	}
	if l.Load != nil {
		if *l.Load < 0 {
			return r, fmt.Errorf(`invalid "load" %v: must not be negative`, *l.Load)
		}
		r.Load = l.Load
	}
	if l.Priority != nil {
		if p := *l.Priority; p < engine.MinPriority || p > engine.MaxPriority {
			return r, fmt.Errorf(`invalid "priority" %d: must be between %d and %d`, p, engine.MinPriority, engine.MaxPriority)
		}
		r.Priority = *l.Priority
	}
	if l.Key != nil {
		r.Key = *l.Key
	}
	if l.ParentID != nil {
		if *l.ParentID <= 0 {
			return r, fmt.Errorf(`invalid "parent_id" %d: job ids are positive`, *l.ParentID)
		}
		r.ParentID = l.ParentID
	}
	if l.MaxAttempts != nil {
		if *l.MaxAttempts < 1 {
			return r, fmt.Errorf(`invalid "max_attempts" %d: must be at least 1`, *l.MaxAttempts)
		}
		r.MaxAttempts = *l.MaxAttempts
	}
	if l.Backoff != nil {
		v, err := lineDuration("backoff", *l.Backoff, false)
		if err != nil {
			return r, err
		}
		r.Backoff = v
	}
	if l.Memory != nil {
		limit, err := engine.ParseMemoryLimit(*l.Memory)
		if err != nil {
			return r, fmt.Errorf(`invalid "memory": %v`, err)
		}
		r.MemoryLimit = &limit
	}
	if l.RunTimeout != nil {
		v, err := lineDuration(l.runTimeoutField, *l.RunTimeout, true)
		if err != nil {
			return r, err
		}
		r.Timeout = &v
	}
	if l.In != nil {
		v, err := lineDuration("in", *l.In, false)
		if err != nil {
			return r, err
		}
		// The line's own start time replaces the command line's, --at included.
		r.RunIn, r.RunAt = &v, nil
	}
	if l.Rollback != nil {
		r.Rollback = *l.Rollback
	}
	if l.RollbackType != nil {
		r.RollbackType = *l.RollbackType
	}
	if r.Rollback != "" {
		if _, err := engine.RollbackArgs(r.Rollback); err != nil {
			return r, fmt.Errorf(`invalid "rollback": %v`, err)
		}
	} else if r.RollbackType != "" {
		return r, fmt.Errorf(`"rollback_type" %q needs a "rollback"`, r.RollbackType)
	}
	if l.Hold != nil {
		r.Hold = *l.Hold
	}
	return r, nil
}

// lineDuration reads a Go duration such as "90s" or "1h30m".
func lineDuration(field, s string, positive bool) (time.Duration, error) {
	v, err := time.ParseDuration(strings.TrimSpace(s))
	switch {
	case err != nil:
		return 0, fmt.Errorf(`invalid %q %q: want a duration like 90s or 1h30m`, field, s)
	case positive && v <= 0:
		return 0, fmt.Errorf(`invalid %q %s: must be positive`, field, v)
	case v < 0:
		return 0, fmt.Errorf(`invalid %q %s: must not be negative`, field, v)
	}
	return v, nil
}
