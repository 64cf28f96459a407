package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/jobctl/jobctl/engine"
)

// addRollbackLines shows a job's rollback: its spec, and once made, the
// rollback job and its state, "double fault" when it failed; on a rollback
// job, the job it undoes.
func addRollbackLines(ctx context.Context, store engine.TxStore, kv *keyValues, j *engine.Job) error {
	if j.RollbackOf != nil {
		kv.add("rollback of", fmt.Sprint(*j.RollbackOf))
	}
	if j.Rollback == "" {
		return nil
	}
	spec := j.Rollback
	if j.RollbackType != "" {
		spec += fmt.Sprintf(" (type %s)", j.RollbackType)
	}
	kv.add("rollback spec", spec)
	switch {
	case j.RollbackJobID != nil:
		r, err := store.JobGet(ctx, *j.RollbackJobID)
		state := ""
		switch {
		case errors.Is(err, engine.ErrNotFound):
			state = "pruned"
		case err != nil:
			return err
		default:
			state = string(r.Status)
		}
		line := fmt.Sprintf("job %d %s", *j.RollbackJobID, state)
		if j.DoubleFault {
			line += ": double fault"
		}
		kv.add("rollback", line)
	case j.RollbackPending():
		kv.add("rollback", "pending: the dispatcher creates it next round")
	}
	return nil
}
