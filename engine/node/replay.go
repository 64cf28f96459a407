package node

import (
	"context"
	"fmt"
	"time"
)

// replayResults records the results an earlier process of this node kept
// on disk (resultSpool), each decided as a live one would be: written while
// the job is still this node's at that attempt, dropped as fenced off once
// it has moved on, removed when the job is gone. It runs before
// recoverOwnJobs, so a job whose result was kept is not run again. A
// database that does not answer is retried until ctx ends.
func (r *resultRecorder) replayResults(ctx context.Context) error {
	spool := r.batcher.spool
	if spool.dir == "" {
		r.log.Info("no state directory: job results the database cannot take are kept in memory only")
		return nil
	}
	kept, err := spool.load()
	if err != nil {
		return err
	}
	if len(kept) == 0 {
		return nil
	}
	r.log.Info("recording job results kept by an earlier run of this node", "results", len(kept), "dir", spool.dir)
	var recorded, dropped, gone int
	warned := false
	for _, c := range kept {
		verdict, err := r.replayOne(ctx, c, &warned)
		if err != nil {
			return fmt.Errorf("cannot record the job results kept in %s: %w", spool.dir, err)
		}
		switch verdict {
		case resultRecorded:
			recorded++
		case resultFenced:
			dropped++
			r.log.Warn("dropped a kept job result: the job has moved on", "job", c.run.job.ID,
				"attempt", c.run.attempt, "result", c.result.Reason)
		case resultGone:
			gone++
		}
		r.settle(c)
	}
	r.log.Info("recorded the job results kept on disk", "recorded", recorded, "dropped", dropped,
		"of_jobs_gone", gone)
	return nil
}

// replayOne records one kept result, trying until the store answers or ctx
// ends; the node says once that it waits (warned).
func (r *resultRecorder) replayOne(ctx context.Context, c *completion, warned *bool) (resultVerdict, error) {
	delay := r.batcher.minDelay
	for {
		try, cancel := context.WithTimeout(ctx, resultTryTimeout)
		verdict, err := r.recordResult(try, c.run, c.result)
		cancel()
		if err == nil {
			return verdict, nil
		}
		if !*warned {
			r.log.Warn("cannot record the kept job results yet; retrying", "err", err)
			*warned = true
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, r.batcher.maxDelay)
	}
}
