package bench_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/bench"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/dbstore/sqlitetest"
	"github.com/jobctl/jobctl/engine/node"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// testMaxJobs keeps the tests' nodes small: a dispatch round claims at most
// what its nodes can take in one SQLite transaction, and a small one holds
// the one write lock only briefly on a slow (-race) run, so other writers
// never time out behind it.
const testMaxJobs = 50

// sqliteStore is a fresh, migrated SQLite database.
func sqliteStore(t *testing.T) engine.Store {
	t.Helper()
	ctx := context.Background()
	s, err := dbstore.Open(ctx, sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// recordingStore remembers the benchmark's jobs as they were just before
// the run removed them, so a test can see which nodes ran them.
type recordingStore struct {
	engine.Store
	mu     sync.Mutex
	before []*engine.Job
	purged bool
}

func (s *recordingStore) JobPurge(ctx context.Context, p engine.JobPurgeParams) (engine.JobPurgeResult, error) {
	s.mu.Lock()
	if !s.purged {
		s.purged = true
		jobs, err := s.JobList(ctx, engine.JobListParams{Creator: p.Creator})
		if err != nil {
			s.mu.Unlock()
			return engine.JobPurgeResult{}, err
		}
		s.before = jobs
	}
	s.mu.Unlock()
	return s.Store.JobPurge(ctx, p)
}

// assertNothingLeft checks that a run removed every job it created and
// every node it started, leaving only the nodes named in keep.
func assertNothingLeft(t *testing.T, s engine.Store, keep ...string) {
	t.Helper()
	ctx := context.Background()
	jobs, err := s.JobList(ctx, engine.JobListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Errorf("%d jobs left behind, the first %s by %q", len(jobs), jobs[0].Status, jobs[0].Creator)
	}
	nodes, err := s.NodeList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	if len(names) != len(keep) || (len(keep) > 0 && names[0] != keep[0]) {
		t.Errorf("nodes left: %v; want %v", names, keep)
	}
}

// burnDownJobs is three times what one node runs at once, so that even two
// nodes take the jobs over several rounds of dispatch.
const burnDownJobs = 3 * testMaxJobs

func TestBurnDownRunsEveryJobAndRemovesThem(t *testing.T) {
	for _, nodes := range []int{1, 2} {
		t.Run(map[int]string{1: "one node", 2: "two nodes"}[nodes], func(t *testing.T) {
			store := &recordingStore{Store: sqliteStore(t)}
			res, err := bench.Run(context.Background(), bench.Config{Store: store, BurnDown: burnDownJobs, Nodes: nodes,
				MaxJobs: testMaxJobs})
			if err != nil {
				t.Fatal(err)
			}
			if res.Mode != bench.ModeBurnDown || res.Dialect != "sqlite" || res.Nodes != nodes {
				t.Errorf("mode %q, dialect %q, nodes %d", res.Mode, res.Dialect, res.Nodes)
			}
			if res.Jobs != burnDownJobs || res.NotFinished != 0 || res.OtherNodes != 0 {
				t.Errorf("jobs %d, not finished %d, other nodes %d; want %d finished by our nodes alone",
					res.Jobs, res.NotFinished, res.OtherNodes, burnDownJobs)
			}
			if !(res.Seconds > 0) || !(res.JobsPerSecond > 0) {
				t.Errorf("seconds %v, jobs/s %v; want both positive", res.Seconds, res.JobsPerSecond)
			}
			if !(0 <= res.LatencyP50Ms && res.LatencyP50Ms <= res.LatencyP95Ms && res.LatencyP95Ms <= res.LatencyP99Ms) {
				t.Errorf("latency p50 %v, p95 %v, p99 %v; want ordered and not negative",
					res.LatencyP50Ms, res.LatencyP95Ms, res.LatencyP99Ms)
			}
			ranOn := map[string]int{}
			for _, j := range store.before {
				if j.Status != engine.StatusFinished || j.Type != engine.TypeNoop || j.Load != bench.JobLoad {
					t.Fatalf("job %d: %s %s load %v; want FINISHED noop of load 1", j.ID, j.Status, j.Type, j.Load)
				}
				ranOn[j.Node]++
			}
			if len(store.before) != burnDownJobs || len(ranOn) != nodes {
				t.Errorf("%d jobs before the clean-up, run on %v; want %d on %d nodes", len(store.before), ranOn, burnDownJobs, nodes)
			}
			assertNothingLeft(t, store)
		})
	}
}

// The figures are handed over before the clean-up, while the jobs are
// still there; with Keep they stay, and only the nodes go.
func TestMeasuredBeforeTheCleanUpAndKeep(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "removed", true: "kept"}[keep], func(t *testing.T) {
			store := sqliteStore(t)
			var during int
			res, err := bench.Run(context.Background(), bench.Config{Store: store, BurnDown: 120, Nodes: 1,
				MaxJobs: testMaxJobs, Keep: keep, Creator: "bench-test",
				Measured: func(res *bench.Result) error {
					jobs, err := store.JobList(context.Background(), engine.JobListParams{Creator: "bench-test"})
					during = len(jobs)
					return err
				}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Jobs != 120 || during != 120 {
				t.Errorf("measured %d jobs with %d in the database; want 120 and 120", res.Jobs, during)
			}
			if !keep {
				assertNothingLeft(t, store)
				return
			}
			jobs, err := store.JobList(context.Background(), engine.JobListParams{Creator: "bench-test"})
			if err != nil || len(jobs) != 120 {
				t.Errorf("kept %d jobs, %v; want the 120", len(jobs), err)
			}
			if nodes, err := store.NodeList(context.Background()); err != nil || len(nodes) != 0 {
				t.Errorf("nodes left: %d, %v; want none", len(nodes), err)
			}
		})
	}
}

// An error handing the figures over is the run's, and the clean-up still
// runs.
func TestMeasuredErrorStillCleansUp(t *testing.T) {
	store := sqliteStore(t)
	refused := errors.New("stdout closed")
	res, err := bench.Run(context.Background(), bench.Config{Store: store, BurnDown: 20, Nodes: 1, MaxJobs: testMaxJobs,
		Measured: func(*bench.Result) error { return refused }})
	if !errors.Is(err, refused) || res == nil || res.Jobs != 20 {
		t.Fatalf("Run = %+v, %v; want the figures and the error", res, err)
	}
	assertNothingLeft(t, store)
}

func TestInterruptedRunCleansUp(t *testing.T) {
	store := sqliteStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupted once jobs are being worked, while more keep coming: the
	// queued are cancelled, the nodes stop, and everything is removed. The
	// rate is modest so that a slow machine, which takes long to work the
	// first job, does not pile up more than the clean-up's time allows.
	_, err := bench.Run(ctx, bench.Config{Store: store, Duration: time.Hour, Rate: 100, Nodes: 2,
		MaxJobs: testMaxJobs, Progress: func(p bench.Progress) {
			if p.Done > 0 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want the interrupt's", err)
	}
	assertNothingLeft(t, store)
}

func TestDurationRun(t *testing.T) {
	store := sqliteStore(t)
	res, err := bench.Run(context.Background(), bench.Config{Store: store, Duration: 300 * time.Millisecond,
		Nodes: 1, MaxJobs: testMaxJobs})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != bench.ModeDuration || res.Nodes != 1 || !(res.Seconds > 0) || res.Jobs < 0 {
		t.Errorf("result %+v", res)
	}
	assertNothingLeft(t, store)
}

func TestClusterMode(t *testing.T) {
	store := sqliteStore(t)
	_, err := bench.Run(context.Background(), bench.Config{Store: store, BurnDown: 10, Cluster: true})
	if !errors.Is(err, bench.ErrNoClusterNode) {
		t.Fatalf("no cluster: err = %v; want ErrNoClusterNode", err)
	}

	// A node of the cluster, as `jobctl serve` runs it.
	cfg := node.Defaults()
	cfg.Name, cfg.Listen, cfg.MaxLoadAvg = "worker", "127.0.0.1:0", 0
	rt, err := node.New(cfg, store, engine.SystemClock{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- rt.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("node: %v", err)
		}
	})
	waitOnline(t, store, "worker")

	res, err := bench.Run(context.Background(), bench.Config{Store: store, BurnDown: 100, Cluster: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Jobs != 100 || res.Nodes != 1 || res.NotFinished != 0 {
		t.Errorf("jobs %d on %d nodes, %d not finished; want 100 on the one", res.Jobs, res.Nodes, res.NotFinished)
	}
	assertNothingLeft(t, store, "worker")
}

// waitOnline waits until the node has registered.
func waitOnline(t *testing.T, s engine.Store, name string) {
	t.Helper()
	var err error
	if !waitfor.Within(30*time.Second, func() bool {
		var n *engine.Node
		n, err = s.NodeGet(context.Background(), name)
		return err == nil && n.State == engine.NodeOnline
	}) {
		t.Fatalf("node %s did not come online: %v", name, err)
	}
}
