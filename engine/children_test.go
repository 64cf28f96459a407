package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
)

// TestRecordOutcomeCancelsChildrenOfRestart: a run that goes back to the queue takes its
// attempt's unfinished children (and theirs) with it, whatever the run was
// doing; a workflow step keeps the workflow's jobs, and updates that are
// not a run going back to the queue cancel nothing.
func TestRecordOutcomeCancelsChildrenOfRestart(t *testing.T) {
	ctx := context.Background()
	running := []engine.Status{engine.StatusRunning}
	cases := []struct {
		name       string
		parentType string
		path       []engine.Status // from QUEUED to where the update starts
		to         engine.Status
		cancels    bool
	}{
		{"a running parent retried", engine.TypeExec, running, engine.StatusRestart, true},
		{"a waiting parent recovered", engine.TypeExec, slices.Concat(running, []engine.Status{engine.StatusWaiting}), engine.StatusRestart, true},
		{"a paused parent recovered", engine.TypeExec, slices.Concat(running, []engine.Status{engine.StatusPaused}), engine.StatusRestart, true},
		{"a workflow step run again", engine.TypeWorkflow, running, engine.StatusRestart, false},
		{"a parent that finished", engine.TypeExec, running, engine.StatusFinished, false},
		{"a queued parent paused", engine.TypeExec, nil, engine.StatusPaused, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := memstore.New(engine.NewVirtualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))
			insert := func(p engine.JobInsertParams) *engine.Job {
				t.Helper()
				p.Status, p.MaxAttempts = engine.StatusQueued, 1
				j, err := s.JobInsert(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				return j
			}
			parent := insert(engine.JobInsertParams{Type: c.parentType})
			child := insert(engine.JobInsertParams{Type: engine.TypeNoop, ParentID: &parent.ID})
			grandchild := insert(engine.JobInsertParams{Type: engine.TypeNoop, ParentID: &child.ID})
			done := insert(engine.JobInsertParams{Type: engine.TypeNoop, ParentID: &parent.ID})
			done = moveJob(t, s, done, engine.StatusRunning, engine.StatusFinished)

			parent = moveJob(t, s, parent, c.path...)
			u := engine.JobUpdate{ID: parent.ID, From: parent.Status, Version: parent.Version, To: c.to}
			if _, err := engine.RecordOutcome(ctx, s, parent, u); err != nil {
				t.Fatal(err)
			}
			want := engine.StatusQueued
			if c.cancels {
				want = engine.StatusCancelled
			}
			for _, j := range []*engine.Job{child, grandchild} {
				got, err := s.JobGet(ctx, j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != want {
					t.Errorf("job %d is %s, want %s", j.ID, got.Status, want)
				}
			}
			if got, _ := s.JobGet(ctx, done.ID); got.Status != engine.StatusFinished {
				t.Errorf("the child that had ended is %s now", got.Status)
			}
		})
	}
}
