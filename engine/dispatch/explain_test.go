package dispatch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/placement"
)

func explain(t *testing.T, s engine.Store, id int64) *dispatch.Explanation {
	t.Helper()
	e, err := dispatch.Explain(context.Background(), s, id, placement.LoadFactor{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestExplainNamesEachJobNoNodeCanEverRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		nodes       func(t *testing.T, s engine.Store)
		typ         string
		load        float64
		never, hint string
	}{
		{"no node at all", func(*testing.T, engine.Store) {}, engine.TypeSleep, 1,
			"no node is registered", "jobctl serve"},
		{"no node offers the type", func(t *testing.T, s engine.Store) { addNode(t, s, "a", 4) }, "encode", 1,
			`no node offers type "encode"`, "--service encode=COMMAND"},
		{"an exec job and no node runs exec", func(t *testing.T, s engine.Store) { addNode(t, s, "a", 4) }, engine.TypeExec, 1,
			"exec job and no node runs exec jobs", "jobctl serve --exec"},
		{"every node offering the type is in maintenance", func(t *testing.T, s engine.Store) {
			addNode(t, s, "a", 4)
			if err := s.NodeSetMaintenance(context.Background(), "a", true); err != nil {
				t.Fatal(err)
			}
		}, engine.TypeSleep, 1, `no ONLINE node offers type "sleep"`, "maintenance NAME off"},
		{"too large while the largest nodes decline exceeding loads", func(t *testing.T, s engine.Store) {
			addNodeAs(t, s, "big", 8, func(n *engine.Node) { n.AcceptExceeding = false })
			addNode(t, s, "small", 4)
		}, engine.TypeSleep, 10, "its load 10 is above every node's max load (the largest is 8)", "--accept-exceeding, or submit the job with a smaller --load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			tt.nodes(t, s)
			e := explain(t, s, addJob(t, s, tt.typ, tt.load).ID)
			if !e.NeverRunnable || !strings.Contains(e.Never, tt.never) || !strings.Contains(e.Hint, tt.hint) {
				t.Errorf("never runnable %v, %q (want %q), hint %q (want %q)", e.NeverRunnable, e.Never, tt.never, e.Hint, tt.hint)
			}
			if want := "no node can ever run this job: " + e.Never; e.Conclusion != want {
				t.Errorf("conclusion %q, want %q", e.Conclusion, want)
			}
		})
	}
}

func TestExplainSaysWhyAJobIsNotDispatchable(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	addNode(t, s, "a", 4)
	insert := func(p engine.JobInsertParams) *engine.Job {
		p.Type, p.Load, p.MaxAttempts = engine.TypeSleep, 1, 1
		if p.Status == "" {
			p.Status = engine.StatusQueued
		}
		j, err := s.JobInsert(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	now, err := s.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held := insert(engine.JobInsertParams{Status: engine.StatusInstantiated})
	delayed := insert(engine.JobInsertParams{RunAfter: engine.Ptr(now.Add(time.Hour))})
	head := insert(engine.JobInsertParams{Key: "k"})
	blocked := insert(engine.JobInsertParams{Key: "k"})
	for _, tt := range []struct {
		name string
		id   int64
		kind engine.HoldKind
		want string
	}{
		{"held", held.ID, engine.HoldStatus, "held: created with --hold"},
		{"delayed", delayed.ID, engine.HoldRunAfter, "starts in "},
		{"key-blocked", blocked.ID, engine.HoldKey, "waiting behind job " + itoa(head.ID) + ` of key "k" (QUEUED)`},
	} {
		e := explain(t, s, tt.id)
		if e.Dispatchable || e.Hold.Kind != tt.kind || !strings.Contains(e.HoldReason, tt.want) {
			t.Errorf("%s: dispatchable %v, hold %q %q; want %s %q", tt.name, e.Dispatchable, e.Hold.Kind, e.HoldReason, tt.kind, tt.want)
		}
		if !strings.HasPrefix(e.Conclusion, "not dispatched: "+e.HoldReason) {
			t.Errorf("%s: conclusion %q does not lead with the hold", tt.name, e.Conclusion)
		}
		if len(e.Nodes) != 1 || !e.Nodes[0].Eligible || e.Nodes[0].Rank != 1 {
			t.Errorf("%s: nodes %+v; want a judged, ranked", tt.name, e.Nodes)
		}
	}
	if e := explain(t, s, head.ID); !e.Dispatchable || e.Conclusion != "node a would be offered it first" {
		t.Errorf("head of key: dispatchable %v, conclusion %q", e.Dispatchable, e.Conclusion)
	}
	round(t, newDispatcher(s, &fakeNodes{store: s})) // head runs
	if e := explain(t, s, head.ID); e.Conclusion != "not dispatched: already handed to a node (RUNNING)" {
		t.Errorf("running job: conclusion %q", e.Conclusion)
	}
	// A parent waiting for its children says how far they are.
	running := jobOf(t, s, head.ID)
	if _, err := s.JobUpdate(ctx, engine.JobUpdate{ID: running.ID, From: running.Status, Version: running.Version, To: engine.StatusWaiting}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		c, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeSleep, Load: 1, MaxAttempts: 1,
			Status: engine.StatusInstantiated, ParentID: &running.ID})
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if _, err := engine.ApplyVerb(ctx, s, c.ID, engine.VerbCancel, testActor); err != nil {
				t.Fatal(err)
			}
		}
	}
	e := explain(t, s, head.ID)
	if e.Conclusion != "not dispatched: waiting for its children: 2 of 3 ended" || e.Hold.Children != 3 || e.Hold.ChildrenEnded != 2 {
		t.Errorf("waiting parent: conclusion %q, hold %+v", e.Conclusion, e.Hold)
	}
}

func TestExplainRanksNodesAndNamesTheKeptNode(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	addNode(t, s, "a", 4)
	addNode(t, s, "b", 8)
	addNodeAs(t, s, "hot", 4, func(n *engine.Node) { n.MaxLoadAvg = 2 })
	if _, err := s.NodeTouch(context.Background(), engine.NodeTouchParams{Name: "hot", LoadAvg: 3, Cores: 1}); err != nil {
		t.Fatal(err)
	}
	e := explain(t, s, addJob(t, s, engine.TypeSleep, 1).ID)
	got := map[string]dispatch.NodeVerdict{}
	for _, v := range e.Nodes {
		got[v.Node] = v
	}
	if got["b"].Rank != 1 || got["a"].Rank != 2 || got["hot"].Rank != 0 || got["hot"].Reason != "overloaded: load average 3 above 2; it gets work only when no node under its limit can take it" {
		t.Errorf("verdicts %+v", e.Nodes)
	}
	if e.Conclusion != "node b would be offered it first (then a)" {
		t.Errorf("conclusion %q", e.Conclusion)
	}

	// An oversized job while b is busy: the next round keeps b for it.
	d := newDispatcher(s, &fakeNodes{store: s})
	addJob(t, s, engine.TypeSleep, 1)
	round(t, d)
	huge := addJob(t, s, engine.TypeSleep, 20)
	if e := explain(t, s, huge.ID); e.NextKeep != "b" || !strings.HasSuffix(e.Conclusion, "the next round keeps node b for it") {
		t.Errorf("before the round: next keep %q, conclusion %q", e.NextKeep, e.Conclusion)
	}
	round(t, d)
	e = explain(t, s, huge.ID)
	if e.KeptNode != "b" || !strings.Contains(e.Conclusion, "node b is kept for it") {
		t.Errorf("after the round: kept %q, conclusion %q", e.KeptNode, e.Conclusion)
	}
	for _, v := range e.Nodes {
		if v.Node == "b" && !strings.Contains(v.Reason, "busy: job load 20 is above max 8") {
			t.Errorf("b: %q", v.Reason)
		}
	}
	if e := explain(t, s, addJob(t, s, engine.TypeSleep, 1).ID); !strings.Contains(e.Conclusion, "node a would be offered it first") {
		t.Errorf("a small job with b kept: %q", e.Conclusion)
	}
}

// testActor is the operator of the tests' admin verbs and submits.
var testActor = engine.Actor{Who: "tester@testhost"}
