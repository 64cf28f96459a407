package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
)

func TestSubmit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := engine.NewVirtualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := memstore.New(clock)
	_, err := engine.RegisterNode(ctx, s, engine.NodeRegisterParams{Node: engine.Node{
		Name: "n1", URL: "http://n1", MaxLoad: 4, MaxJobs: 10, Weight: 100, State: engine.NodeOnline,
		Services: []engine.NodeService{{Type: "encode", Load: 2.5, Timeout: engine.Duration(time.Hour)}, {Type: engine.TypeNoop}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := s.NodeList(ctx)
	if err != nil {
		t.Fatal(err)
	}

	got, err := engine.Submit(ctx, s, nodes, engine.SubmitRequest{Type: "encode"})
	if err != nil {
		t.Fatal(err)
	}
	if j := got.Job; !got.Offered || j.Load != 2.5 || time.Duration(j.Timeout) != time.Hour || j.MaxAttempts != 1 || j.Status != engine.StatusQueued {
		t.Errorf("service defaults not applied: %+v (offered %v)", j, got.Offered)
	}
	load, timeout := 0.5, time.Minute
	got, err = engine.Submit(ctx, s, nodes, engine.SubmitRequest{Type: "encode", Load: &load, Timeout: &timeout, Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	if j := got.Job; j.Load != 0.5 || time.Duration(j.Timeout) != time.Minute || j.Status != engine.StatusInstantiated {
		t.Errorf("the request's own values lost: %+v", j)
	}
	parent := got.Job.ID
	got, err = engine.Submit(ctx, s, nodes, engine.SubmitRequest{Type: "nobody", ParentID: &parent, RunIn: engine.Ptr(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if j := got.Job; got.Offered || j.Load != 1 || time.Duration(j.Timeout) != engine.DefaultJobTimeout ||
		j.RunAfter == nil || !j.RunAfter.Equal(clock.Now().Add(time.Minute)) || *j.ParentID != parent {
		t.Errorf("a type nobody offers: %+v (offered %v)", j, got.Offered)
	}

	before, _ := s.JobList(ctx, engine.JobListParams{})
	for name, r := range map[string]engine.SubmitRequest{
		"negative load":   {Type: "encode", Load: engine.Ptr(-1.0)},
		"unknown parent":  {Type: "encode", ParentID: engine.Ptr(int64(999))},
		"start and delay": {Type: "encode", RunAt: engine.Ptr(clock.Now()), RunIn: engine.Ptr(time.Second)},
		"no type":         {},
	} {
		if _, err := engine.Submit(ctx, s, nodes, r); err == nil {
			t.Errorf("%s: accepted", name)
		} else if name != "unknown parent" && !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: %v does not match ErrInvalid", name, err)
		}
	}
	ended, _ := engine.Submit(ctx, s, nodes, engine.SubmitRequest{Type: engine.TypeNoop})
	if _, err := engine.ApplyVerb(ctx, s, ended.Job.ID, engine.VerbCancel, testActor); err != nil {
		t.Fatal(err)
	}
	_, err = engine.Submit(ctx, s, nodes, engine.SubmitRequest{Type: engine.TypeNoop, ParentID: &ended.Job.ID})
	if !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("a child of an ended job: %v", err)
	}
	after, _ := s.JobList(ctx, engine.JobListParams{})
	if len(after) != len(before)+1 {
		t.Errorf("refused submissions wrote jobs: %d before, %d after", len(before), len(after))
	}

	// Inside a transaction a submission is kept or dropped with the rest.
	boom := errors.New("boom")
	err = s.Tx(ctx, func(tx engine.TxStore) error {
		if _, err := engine.Submit(ctx, tx, nodes, engine.SubmitRequest{Type: engine.TypeNoop}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if again, _ := s.JobList(ctx, engine.JobListParams{}); len(again) != len(after) {
		t.Errorf("a rolled-back submission was kept")
	}
}

// The jobs of a workflow are written by the workflow alone: a submit of
// type workflow, or with a rollback of that type, is refused and creates
// nothing.
func TestSubmitRefusesWorkflowJobs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memstore.New(engine.NewVirtualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))
	for name, r := range map[string]engine.SubmitRequest{
		"type":          {Type: engine.TypeWorkflow},
		"rollback type": {Type: engine.TypeNoop, Rollback: "undo", RollbackType: engine.TypeWorkflow},
	} {
		if _, err := engine.Submit(ctx, s, nil, r); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s workflow: %v, want an invalid job", name, err)
		}
	}
	if jobs, err := s.JobList(ctx, engine.JobListParams{}); err != nil || len(jobs) != 0 {
		t.Errorf("refused submits left %d jobs (%v)", len(jobs), err)
	}
}
