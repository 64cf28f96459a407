package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

func TestSleepProgressIsStoredWhileItRuns(t *testing.T) {
	t.Parallel()
	n, s := testNode(t, nil)
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`{"duration":"3s"}`), Load: 1, MaxAttempts: 1})
	if res := n.runner.Accept(context.Background(), o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v, want accepted", res)
	}
	// The sleep builtin logs nothing: its progress must be stored on its own.
	j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Progress > 0 || j.Status.Terminal() })
	if j.Status != engine.StatusRunning || j.Progress <= 0 || j.ProgressMessage == "" {
		t.Fatalf("job %s with progress %d %q; want RUNNING with progress above 0", j.Status, j.Progress, j.ProgressMessage)
	}
	j = waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
	if j.Status != engine.StatusFinished || j.Progress != 100 || j.ProgressMessage != "slept 3s of 3s" {
		t.Errorf("job ended %s with progress %d %q; want FINISHED with the last progress, 100", j.Status, j.Progress, j.ProgressMessage)
	}
	if chunks, err := s.JobLogList(context.Background(), engine.JobLogListParams{JobID: o.JobID}); err != nil || len(chunks) != 0 {
		t.Errorf("log chunks %v, %v; want none", chunks, err)
	}
}

func TestTheLastProgressIsStoredBeforeTheResult(t *testing.T) {
	t.Parallel()
	n, s := testNode(t, nil)
	// A long interval: the first report is written at once, the last only
	// by the final write when the run ends.
	n.runner.progress = newProgressWriter(s, n.log, time.Hour)
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Load: 1, MaxAttempts: 1,
		Args: []string{"sh", "-c", "echo 'jobctl:progress 10 starting'; sleep 0.3; echo 'jobctl:progress 90 nearly'"}})
	if res := n.runner.Accept(context.Background(), o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v, want accepted", res)
	}
	j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
	if j.Status != engine.StatusFinished || j.Progress != 90 || j.ProgressMessage != "nearly" {
		t.Errorf("job ended %s with progress %d %q; want FINISHED at 90 nearly", j.Status, j.Progress, j.ProgressMessage)
	}
}

// progressCountingStore counts progress writes per job and how many run at
// once.
type progressCountingStore struct {
	engine.Store

	mu               sync.Mutex
	writes           map[int64]int
	inFlight, maxRun int
}

func (s *progressCountingStore) JobProgressSet(ctx context.Context, p engine.JobProgressParams) error {
	s.mu.Lock()
	s.writes[p.ID]++
	s.inFlight++
	s.maxRun = max(s.maxRun, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	return s.Store.JobProgressSet(ctx, p)
}

func TestProgressOfManyJobsIsWrittenInRoundsOnOneConnection(t *testing.T) {
	t.Parallel()
	_, base := testNode(t, nil)
	s := &progressCountingStore{Store: base, writes: map[int64]int{}}
	const jobs = 10
	n := testNodeOn(t, s, func(c *Config) { c.MaxLoad = jobs })
	began := time.Now()
	ids := make([]int64, jobs)
	for i := range ids {
		o := offerFor(t, base, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`{"duration":"1500ms"}`), Load: 1, MaxAttempts: 1})
		if res := n.runner.Accept(context.Background(), o); res.Verdict != engine.OfferAccepted {
			t.Fatalf("offer %d: %+v, want accepted", i, res)
		}
		ids[i] = o.JobID
	}
	for _, id := range ids {
		if j := waitJob(t, base, id, func(j *engine.Job) bool { return j.Status.Terminal() }); j.Progress != 100 {
			t.Errorf("job %d ended with progress %d; want 100", id, j.Progress)
		}
	}
	took := time.Since(began)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxRun != 1 {
		t.Errorf("%d progress writes ran at once; want one at a time", s.maxRun)
	}
	// Each sleep reports fifteen times; rounds at most every interval plus
	// the final write bound what reaches the database.
	limit := int(took/progressInterval) + 2
	for _, id := range ids {
		if w := s.writes[id]; w == 0 || w > limit {
			t.Errorf("job %d: %d progress writes in %s; want 1 to %d", id, w, took, limit)
		}
	}
	if t.Failed() {
		t.Log(fmt.Sprint(s.writes))
	}
}

// flakyProgressStore fails progress writes while down is set.
type flakyProgressStore struct {
	engine.Store
	down     atomic.Bool
	attempts atomic.Int64
}

func (s *flakyProgressStore) JobProgressSet(ctx context.Context, p engine.JobProgressParams) error {
	s.attempts.Add(1)
	if s.down.Load() {
		return errors.New("database away")
	}
	return s.Store.JobProgressSet(ctx, p)
}

func TestProgressIsRetriedWhileTheDatabaseIsAway(t *testing.T) {
	t.Parallel()
	_, base := testNode(t, nil)
	ctx := context.Background()
	o := offerFor(t, base, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1, MaxAttempts: 1})
	job, err := base.JobUpdate(ctx, engine.StartOfferUpdate(o, "n1"))
	if err != nil {
		t.Fatal(err)
	}
	s := &flakyProgressStore{Store: base}
	s.down.Store(true)
	logs := &logBuffer{}
	w := newProgressWriter(s, slog.New(slog.NewTextHandler(logs, nil)), 20*time.Millisecond)
	w.Set(engine.JobProgressParams{ID: job.ID, Attempt: job.Attempt, Node: "n1", Progress: 30, Message: "a third"})
	waitfor.Until(t, 10*time.Second, "the failed write to be retried", func() bool { return s.attempts.Load() >= 3 })
	s.down.Store(false)
	j := waitJob(t, base, job.ID, func(j *engine.Job) bool { return j.Progress == 30 })
	if j.ProgressMessage != "a third" {
		t.Errorf("progress message %q", j.ProgressMessage)
	}
	if !waitfor.Within(10*time.Second, func() bool { return strings.Contains(logs.String(), "storing job progress works again") }) {
		t.Fatalf("log %q; want the recovery noted", logs.String())
	}
	if n := strings.Count(logs.String(), "storing job progress failed"); n != 1 {
		t.Errorf("the failure was logged %d times; want once until it works again:\n%s", n, logs.String())
	}
}
