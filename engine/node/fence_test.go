package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// fencedNode is a test node whose fence reads a clock the test moves and
// whose log the test reads. Its lease is long, so the fence's timer, which
// runs on real time, never fires during a test: the test clock decides.
func fencedNode(t *testing.T) (*Runtime, engine.Store, *engine.VirtualClock, *logBuffer) {
	t.Helper()
	s := testStore(t)
	logs := &logBuffer{}
	n := testNodeLogging(t, s, logs, func(c *Config) { c.NodeLease = time.Hour })
	clock := engine.NewVirtualClock(time.Now())
	n.fence.now = clock.Now
	t.Cleanup(n.fence.stop)
	stopAtEnd(t, n)
	return n, s, clock, logs
}

// stopAtEnd kills what a failed test left running, so the node's cleanup,
// which waits for every run, does not wait for ever.
func stopAtEnd(t *testing.T, n *Runtime) {
	t.Cleanup(func() { n.runner.stopForLapse() })
}

// startTree starts an exec job whose shell forks a grandchild, and returns
// the grandchild's pid once the job has written it.
func startTree(t *testing.T, n *Runtime, s engine.Store, extra string) (engine.DispatchOffer, int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Load: 1, MaxAttempts: 1,
		Args: []string{"sh", "-c", `sleep 600 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; ` + extra + `wait`, "sh", pidFile}})
	if res := n.runner.Accept(context.Background(), o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v, want accepted", res)
	}
	var pid int
	waitfor.Until(t, 20*time.Second, "the job to write "+pidFile, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return o, pid
}

func processAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	waitfor.Until(t, 20*time.Second, fmt.Sprintf("process %d to end with the lapse", pid), func() bool { return !processAlive(pid) })
}

func TestALapsedNodeLeaseStopsTheRunsAndPutsThemBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s, clock, logs := fencedNode(t)
	n.fence.recorded(clock.Now())
	tree, grandchild := startTree(t, n, s, "")
	builtin := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"600s"`), Load: 1, MaxAttempts: 1})
	if res := n.runner.Accept(ctx, builtin); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v, want accepted", res)
	}
	waitStarted(n) // the lapse counts the runs it stops itself

	// The touch loop's write did record liveness, but only after the
	// lease had passed: that renews nothing.
	clock.Advance(n.cfg.NodeLease + time.Second)
	n.fence.recorded(clock.Now().Add(-n.cfg.NodeLease - time.Millisecond))

	for _, id := range []int64{tree.JobID, builtin.JobID} {
		if j := waitJob(t, s, id, func(j *engine.Job) bool { return j.Status != engine.StatusRunning }); j.Status != engine.StatusRestart || j.Node != "" {
			t.Errorf("job %d after the lapse = %s on %q, want RESTART with no node", id, j.Status, j.Node)
		}
	}
	waitGone(t, grandchild)
	noop := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1})
	if res := n.runner.Accept(ctx, noop); res.Verdict != engine.OfferDeclined || !strings.HasPrefix(res.Reason, "not-ready") {
		t.Errorf("offer while lapsed: %+v, want declined not-ready", res)
	}
	if l := logs.String(); strings.Count(l, "could not record liveness") != 1 || !strings.Contains(l, "node_lease="+n.cfg.NodeLease.String()) || !strings.Contains(l, "jobs_stopped=2") {
		t.Errorf("log = %q, want one warning naming the lease and 2 jobs stopped", l)
	}

	n.fence.recorded(clock.Now())
	// A stopped run holds its load until its process has been reaped.
	waitfor.Until(t, 30*time.Second, "the stopped runs off the books", func() bool { _, running := n.runner.books.Totals(); return running == 0 })
	if res := n.runner.Accept(ctx, noop); res.Verdict != engine.OfferAccepted {
		t.Errorf("offer once liveness is recorded again: %+v, want accepted", res)
	}
	waitJob(t, s, noop.JobID, func(j *engine.Job) bool { return j.Status == engine.StatusFinished })
}

func TestTheFenceTimerStopsRunsWhenNothingIsRecorded(t *testing.T) {
	t.Parallel()
	n, s := testNode(t, nil)
	t.Cleanup(n.fence.stop)
	stopAtEnd(t, n)
	tree, grandchild := startTree(t, n, s, "")
	// Liveness last recorded almost a lease ago; nothing records it again.
	n.fence.recorded(time.Now().Add(-n.cfg.NodeLease + 50*time.Millisecond))
	if j := waitJob(t, s, tree.JobID, func(j *engine.Job) bool { return j.Status != engine.StatusRunning }); j.Status != engine.StatusRestart {
		t.Errorf("job = %s, want RESTART", j.Status)
	}
	waitGone(t, grandchild)
}

// A node frozen past its deadline learns of it only when it runs again: a
// run that ended on its own meanwhile keeps its result, which fencing in
// the store accepts only while the job is still its own, and the first
// record of liveness stops the other runs before it ends the lapse.
func TestARunEndingOnItsOwnWhileLapsedKeepsItsResult(t *testing.T) {
	t.Parallel()
	n, s, clock, logs := fencedNode(t)
	n.fence.recorded(clock.Now())
	gate := filepath.Join(t.TempDir(), "open")
	ending, _ := startTree(t, n, s, `while [ ! -e '`+gate+`' ]; do sleep 0.05; done; kill $!; `)
	going, grandchild := startTree(t, n, s, "")
	// A run's start looks at the fence once its process is up, apart from
	// the job writing its pid: had the clock moved before, that look would
	// stop it as started after the lapse.
	waitStarted(n)

	clock.Advance(n.cfg.NodeLease) // no timer fires on this clock
	writeFile(t, gate, "")
	if j := waitJob(t, s, ending.JobID, func(j *engine.Job) bool { return j.Status != engine.StatusRunning }); j.Status != engine.StatusFinished {
		t.Errorf("a run that ended on its own while lapsed = %s, want FINISHED", j.Status)
	}
	if !processAlive(grandchild) {
		t.Fatal("the other run was stopped before anything noticed the lapse")
	}

	n.fence.recorded(clock.Now())
	if j := waitJob(t, s, going.JobID, func(j *engine.Job) bool { return j.Status != engine.StatusRunning }); j.Status != engine.StatusRestart {
		t.Errorf("a run going on past the deadline = %s, want RESTART", j.Status)
	}
	waitGone(t, grandchild)
	if !n.runner.books.Ready() || !strings.Contains(logs.String(), "recorded liveness again") {
		t.Errorf("ready %v, log %q: want the node taking work again", n.runner.books.Ready(), logs.String())
	}
}

func TestTheEndOfALapseDoesNotUndoAShutdown(t *testing.T) {
	t.Parallel()
	n, _, clock, _ := fencedNode(t)
	ctx, shutdown := context.WithCancel(context.Background())
	if err := n.fence.start(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	clock.Advance(n.cfg.NodeLease)
	n.fence.expired()
	if n.runner.books.Ready() {
		t.Fatal("a lapsed node still takes work")
	}
	shutdown()
	n.runner.books.SetReady(false) // as Run does
	n.fence.recorded(clock.Now())
	if n.runner.books.Ready() {
		t.Error("recording liveness again made a node that is shutting down take work")
	}
}

// A write that began before the lapse was found (in flight while the node
// was frozen) does not end it, though its lease has not run out: the node
// would take work only to stop it again moments later. The next write does.
func TestOnlyAWriteBegunAfterALapseEndsIt(t *testing.T) {
	t.Parallel()
	n, _, clock, logs := fencedNode(t)
	n.fence.recorded(clock.Now())
	inFlight := clock.Now().Add(n.cfg.NodeLease / 2) // began, then the node froze
	clock.Advance(n.cfg.NodeLease)
	n.fence.expired()
	if n.runner.books.Ready() {
		t.Fatal("the node takes work after its deadline passed")
	}

	n.fence.recorded(inFlight)
	if n.runner.books.Ready() || strings.Contains(logs.String(), "recorded liveness again") {
		t.Errorf("a write begun before the lapse ended it (ready %v)", n.runner.books.Ready())
	}
	n.fence.recorded(clock.Now())
	if !n.runner.books.Ready() || !strings.Contains(logs.String(), "recorded liveness again") {
		t.Errorf("a write begun after the lapse did not end it (ready %v)", n.runner.books.Ready())
	}
}

// A job taken just before a lapse, whose run starts only once liveness has
// been recorded again, is stopped all the same: stopForLapse passed it by,
// not started yet, and the cluster may have given the job to another node
// meanwhile.
func TestARunTakenBeforeALapseThatStartsAfterItIsStopped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s, clock, _ := fencedNode(t)
	n.fence.recorded(clock.Now())
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"600s"`), Load: 1, MaxAttempts: 1})
	out := make([]engine.OfferResult, 1)
	taken := n.runner.take([]engine.DispatchOffer{o}, out)
	if len(taken) != 1 {
		t.Fatalf("offer not taken: %+v", out[0])
	}

	clock.Advance(n.cfg.NodeLease + time.Second)
	n.fence.expired()
	n.fence.recorded(clock.Now())
	if !n.runner.books.Ready() {
		t.Fatal("liveness recorded again, but the node takes no work")
	}

	n.runner.startTaken(ctx, taken, []engine.JobUpdate{engine.StartOfferUpdate(o, n.cfg.Name)}, out)
	if j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status != engine.StatusRunning }); j.Status != engine.StatusRestart || j.Node != "" {
		t.Errorf("job = %s on %q, want RESTART with no node", j.Status, j.Node)
	}
}
