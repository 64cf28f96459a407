package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
)

// chunkCounter records the size of every JobInsertMany call.
type chunkCounter struct {
	engine.Store
	chunks []int
}

func (c *chunkCounter) JobInsertMany(ctx context.Context, ps []engine.JobInsertParams) ([]int64, error) {
	c.chunks = append(c.chunks, len(ps))
	return c.Store.JobInsertMany(ctx, ps)
}

// Tx counts the inserts made in a transaction too.
func (c *chunkCounter) Tx(ctx context.Context, fn func(tx engine.TxStore) error) error {
	return c.Store.Tx(ctx, func(tx engine.TxStore) error { return fn(&txChunkCounter{TxStore: tx, c: c}) })
}

type txChunkCounter struct {
	engine.TxStore
	c *chunkCounter
}

func (tc *txChunkCounter) JobInsertMany(ctx context.Context, ps []engine.JobInsertParams) ([]int64, error) {
	tc.c.chunks = append(tc.c.chunks, len(ps))
	return tc.TxStore.JobInsertMany(ctx, ps)
}

func submitManyEnv(t *testing.T) (*chunkCounter, *engine.VirtualClock, []*engine.Node) {
	t.Helper()
	clock := engine.NewVirtualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := &chunkCounter{Store: memstore.New(clock)}
	_, err := engine.RegisterNode(t.Context(), s, engine.NodeRegisterParams{Node: engine.Node{
		Name: "n1", URL: "http://n1", MaxLoad: 4, MaxJobs: 10, Weight: 100,
		Services: []engine.NodeService{{Type: "encode", Load: 2.5, Timeout: engine.Duration(time.Hour)}, {Type: engine.TypeNoop}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := s.NodeList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s, clock, nodes
}

// Each job of a batch is the job Submit would make of its request.
func TestSubmitManyAsSubmit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, clock, nodes := submitManyEnv(t)
	parent, err := engine.Submit(ctx, s, nodes, engine.SubmitRequest{Type: engine.TypeNoop})
	if err != nil {
		t.Fatal(err)
	}
	requests := []engine.SubmitRequest{
		{Type: "encode"},
		{Type: " encode ", Load: engine.Ptr(0.5), Timeout: engine.Ptr(time.Minute), Hold: true, Key: "k"},
		{Type: "nobody", ParentID: &parent.Job.ID, RunIn: engine.Ptr(time.Minute), MaxAttempts: 3, Backoff: time.Second},
		{Type: engine.TypeExec, Args: []string{"echo", "hi"}, Payload: []byte(`{"a":1}`), Operation: "op", Creator: "ada"},
	}
	got, err := engine.SubmitMany(ctx, s, nodes, requests, testActor)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Unoffered, []string{engine.TypeExec, "nobody"}) {
		t.Errorf("Unoffered = %q, want exec and nobody", got.Unoffered)
	}
	if len(got.IDs) != len(requests) {
		t.Fatalf("%d ids for %d requests", len(got.IDs), len(requests))
	}
	for i, r := range requests {
		j, err := s.JobGet(ctx, got.IDs[i])
		if err != nil {
			t.Fatal(err)
		}
		one, err := engine.Submit(ctx, s, nodes, r)
		if err != nil {
			t.Fatal(err)
		}
		w := one.Job
		if j.Type != w.Type || j.Load != w.Load || j.Timeout != w.Timeout || j.Status != w.Status || j.Key != w.Key ||
			j.MaxAttempts != w.MaxAttempts || j.Backoff != w.Backoff || j.Operation != w.Operation || j.Creator != w.Creator ||
			!slices.Equal(j.Args, w.Args) || string(j.Payload) != string(w.Payload) ||
			(j.ParentID == nil) != (w.ParentID == nil) || (j.RunAfter == nil) != (w.RunAfter == nil) {
			t.Errorf("request %d: SubmitMany made %+v, Submit %+v", i, j, w)
		}
	}
	third, _ := s.JobGet(ctx, got.IDs[2])
	if third.RunAfter == nil || !third.RunAfter.Equal(clock.Now().Add(time.Minute)) {
		t.Errorf("RunIn: run after %v, want a minute after the database clock's %s", third.RunAfter, clock.Now())
	}
}

// A refused request names its index, and nothing of the batch is written.
func TestSubmitManyRefusals(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, _, nodes := submitManyEnv(t)
	ended, err := engine.Submit(ctx, s, nodes, engine.SubmitRequest{Type: engine.TypeNoop})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.ApplyVerb(ctx, s, ended.Job.ID, engine.VerbCancel, testActor); err != nil {
		t.Fatal(err)
	}
	ok := engine.SubmitRequest{Type: engine.TypeNoop}
	for name, tt := range map[string]struct {
		bad    engine.SubmitRequest
		target error
	}{
		"negative load":     {engine.SubmitRequest{Type: "encode", Load: engine.Ptr(-1.0)}, engine.ErrInvalid},
		"no type":           {engine.SubmitRequest{}, engine.ErrInvalid},
		"start and delay":   {engine.SubmitRequest{Type: "encode", RunAt: engine.Ptr(time.Now()), RunIn: engine.Ptr(time.Second)}, engine.ErrInvalid},
		"unknown parent":    {engine.SubmitRequest{Type: "encode", ParentID: engine.Ptr(int64(999))}, engine.ErrNotFound},
		"child of an ended": {engine.SubmitRequest{Type: "encode", ParentID: &ended.Job.ID}, engine.ErrInvalid},
	} {
		requests := make([]engine.SubmitRequest, 1500)
		for i := range requests {
			requests[i] = ok
		}
		requests[1200] = tt.bad
		_, err := engine.SubmitMany(ctx, s, nodes, requests, testActor)
		var batch *engine.BatchError
		if !errors.As(err, &batch) || batch.Index != 1200 || !errors.Is(err, tt.target) {
			t.Errorf("%s: got %v, want a *BatchError at index 1200 matching %v", name, err, tt.target)
		}
	}
	if all, _ := s.JobList(ctx, engine.JobListParams{}); len(all) != 1 {
		t.Errorf("refused batches wrote jobs: %d in the store, want the one ended job", len(all))
	}
	if len(s.chunks) != 0 {
		t.Errorf("refused batches reached the store: inserts of %v", s.chunks)
	}
}

// The jobs go in one JobInsertMany per SubmitChunk, ids in request order.
func TestSubmitManyChunks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, _, nodes := submitManyEnv(t)
	requests := make([]engine.SubmitRequest, 2*engine.SubmitChunk+500)
	for i := range requests {
		requests[i] = engine.SubmitRequest{Type: engine.TypeNoop, Operation: fmt.Sprint(i)}
	}
	got, err := engine.SubmitMany(ctx, s, nodes, requests, testActor)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{engine.SubmitChunk, engine.SubmitChunk, 500}; !slices.Equal(s.chunks, want) {
		t.Errorf("inserted in chunks of %v, want %v", s.chunks, want)
	}
	jobs, err := s.JobList(ctx, engine.JobListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != len(requests) || len(got.IDs) != len(requests) {
		t.Fatalf("%d jobs, %d ids for %d requests", len(jobs), len(got.IDs), len(requests))
	}
	for i, j := range jobs {
		if j.ID != got.IDs[i] || j.Operation != fmt.Sprint(i) {
			t.Fatalf("job %d: id %d operation %q; want id %d operation %d", i, j.ID, j.Operation, got.IDs[i], i)
		}
	}
	if len(got.Unoffered) != 0 {
		t.Errorf("Unoffered = %q, want none: n1 offers noop", got.Unoffered)
	}
}
