package node

import (
	"context"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

// jobOutput stores what a running job reports: log bytes in batched chunks,
// progress through the node's progressWriter, which writes it on its own,
// whether or not the job logs anything. Neither holds a database connection
// between writes. The log batcher, with its goroutine and ticker, starts
// with the first output: most builtin runs write none, and then cost none.
type jobOutput struct {
	r   *jobRunner
	job *engine.Job

	mu       sync.Mutex
	logs     *runner.LogBatcher // nil until the first output
	closed   bool               // the run has ended: later output is dropped
	progress bool               // the run has reported progress
}

func (r *jobRunner) newOutput(job *engine.Job) *jobOutput {
	return &jobOutput{r: r, job: job}
}

// Close stores what is left of the log and the last progress once the run
// has ended, giving up on the log at deadline.
func (o *jobOutput) Close(deadline time.Time) error {
	o.mu.Lock()
	o.closed = true
	logs, progress := o.logs, o.progress
	o.mu.Unlock()
	if progress {
		o.r.progress.Flush(o.job.ID)
	}
	if logs == nil {
		return nil
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	return logs.Close(ctx)
}

// Log implements runner.Output.
func (o *jobOutput) Log(stream engine.LogStream, p []byte) {
	o.mu.Lock()
	if o.logs == nil && !o.closed {
		o.logs = runner.NewLogBatcher(o.flush, runner.LogBatcherOptions{MaxBytes: o.r.cfg.LogCap, Logger: o.r.log})
	}
	logs := o.logs
	o.mu.Unlock()
	if logs != nil {
		logs.Log(stream, p)
	}
}

// Progress implements runner.Output.
func (o *jobOutput) Progress(percent int, message string) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	o.progress = true
	o.mu.Unlock()
	o.r.progress.Set(engine.JobProgressParams{ID: o.job.ID, Attempt: o.job.Attempt, Node: o.r.cfg.Name,
		Progress: percent, Message: message})
}

// Warning implements runner.Output; the runner keeps the warning for the result.
func (o *jobOutput) Warning(string) {}

// flush writes one batch of log, of one stream.
func (o *jobOutput) flush(ctx context.Context, stream engine.LogStream, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return o.r.store.JobLogAppend(ctx, engine.JobLogAppendParams{JobID: o.job.ID, Attempt: o.job.Attempt,
		Stream: stream, Data: data})
}
