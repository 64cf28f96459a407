package node

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

// jobOutput stores what a running job reports: log bytes in batched chunks,
// progress coalesced to the latest value and written with the next flush.
// Neither holds a database connection between writes.
type jobOutput struct {
	n    *Runtime
	job  *engine.Job
	logs *runner.LogBatcher

	mu       sync.Mutex
	progress *engine.JobProgressParams // latest unsaved progress
}

func (n *Runtime) newOutput(job *engine.Job) *jobOutput {
	o := &jobOutput{n: n, job: job}
	o.logs = runner.NewLogBatcher(o.flush, runner.LogBatcherOptions{MaxBytes: n.cfg.LogCap, Logger: n.log})
	return o
}

// Close stores what is left of the log once the run has ended.
func (o *jobOutput) Close(ctx context.Context) error { return o.logs.Close(ctx) }

// Log implements runner.Output.
func (o *jobOutput) Log(p []byte) { o.logs.Log(p) }

// Progress implements runner.Output.
func (o *jobOutput) Progress(percent int, message string) {
	o.mu.Lock()
	o.progress = &engine.JobProgressParams{ID: o.job.ID, Attempt: o.job.Attempt, Node: o.n.cfg.Name,
		Progress: percent, Message: message}
	o.mu.Unlock()
}

// Warning implements runner.Output; the runner keeps the warning for the result.
func (o *jobOutput) Warning(string) {}

// flush writes one batch of log and the latest progress.
func (o *jobOutput) flush(ctx context.Context, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if len(data) > 0 {
		if err := o.n.store.JobLogAppend(ctx, engine.JobLogAppendParams{JobID: o.job.ID, Attempt: o.job.Attempt, Data: data}); err != nil {
			return err
		}
	}
	o.mu.Lock()
	p := o.progress
	o.progress = nil
	o.mu.Unlock()
	if p != nil {
		if err := o.n.store.JobProgressSet(ctx, *p); err != nil && !errors.Is(err, engine.ErrConflict) {
			return err
		}
	}
	return nil
}
