package workflow

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jobctl/jobctl/engine"
)

// cancelPasses bounds how often Cancel looks again for jobs a step
// created while it was cancelling.
const cancelPasses = 5

// CancelStore is what Cancel needs: the workflow's jobs to read and the
// transactions that cancel them.
type CancelStore interface {
	engine.Transactor
	Reader
}

// Cancel cancels every unfinished job of workflow id, steps first so no
// step creates more, with the cancel verb (a running job is stopped on
// its node; a job's own children go with it). It looks again until a
// pass finds nothing left to cancel, since a step that committed just as
// it was cancelled may have created its next jobs. It returns the ids of
// the jobs it cancelled or began cancelling, and what went wrong; errors
// for single jobs do not stop it. Each job's cancel is recorded for by as
// a "workflow cancel" event naming the workflow.
func Cancel(ctx context.Context, store CancelStore, id int64, by engine.Actor) ([]int64, error) {
	ev := engine.VerbEvent{Verb: engine.EventWorkflowCancel, Note: fmt.Sprintf("with workflow %d", id)}
	var cancelled []int64
	var errs []error
	failed := map[int64]bool{}
	for range cancelPasses {
		w, err := Get(ctx, store, id)
		if err != nil {
			return cancelled, err
		}
		pending := slices.DeleteFunc(w.Unfinished(), func(j *engine.Job) bool {
			return j.Status == engine.StatusCancelling || failed[j.ID]
		})
		if len(pending) == 0 {
			break
		}
		slices.SortStableFunc(pending, func(a, b *engine.Job) int {
			return boolRank(a.Type != engine.TypeWorkflow) - boolRank(b.Type != engine.TypeWorkflow)
		})
		for _, j := range pending {
			if _, err := engine.ApplyVerbAs(ctx, store, j.ID, engine.VerbCancel, by, ev); err != nil {
				failed[j.ID] = true
				errs = append(errs, err)
				continue
			}
			if !slices.Contains(cancelled, j.ID) {
				cancelled = append(cancelled, j.ID)
			}
		}
	}
	return cancelled, errors.Join(errs...)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
