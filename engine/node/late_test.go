package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/dbstore/sqlitetest"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// lateSetup is a node n1 on a SQLite store it can be cut off from, whose
// node lease runs on a clock of the test's, with a gated job running on it.
type lateSetup struct {
	n     *Runtime
	base  engine.Store
	s     *outageStore
	lease *engine.VirtualClock
	log   *logBuffer
	job   engine.DispatchOffer
	gate  string
	dir   string
}

func newLateSetup(t *testing.T) *lateSetup {
	t.Helper()
	base, err := dbstore.Open(context.Background(), sqlitetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	if err := base.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	l := &lateSetup{base: base, s: &outageStore{Store: base}, log: &logBuffer{}, dir: t.TempDir(),
		lease: engine.NewVirtualClock(time.Now())}
	l.n, _ = outageNode(t, l.s, l.dir, l.log, func(c *Config) { c.NodeLease = time.Hour })
	l.n.fence.now = l.lease.Now
	l.n.fence.recorded(l.lease.Now()) // the node holds its node lease
	l.job, l.gate = gatedJob(t, l.n, l.s)
	return l
}

// cutOffWhileTheRunEnds cuts the node off from the database, lets the run
// end within the node lease, and then lets the lease lapse: the node
// cannot record the result, keeps it, and stops taking work.
func (l *lateSetup) cutOffWhileTheRunEnds(t *testing.T) {
	t.Helper()
	l.s.cut()
	writeFile(t, l.gate, "")
	waitfor.Until(t, 30*time.Second, "the result on disk", func() bool { return len(spooled(t, l.dir)) == 1 })
	l.lease.Advance(time.Hour)
	l.n.fence.expired()
	if !l.n.fence.lapsedNow() || l.n.runner.books.Ready() {
		t.Fatal("the node's lease did not lapse")
	}
}

// recover is the lease holder giving up on n1: its job goes back to
// RESTART, as the housekeeping does for a node silent past its lease.
func (l *lateSetup) recover(t *testing.T) *engine.Job {
	t.Helper()
	j, err := l.base.JobGet(t.Context(), l.job.JobID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.RecoverJobs(t.Context(), l.base, []*engine.Job{j}, "node n1 was silent past its node lease",
		engine.Actor{}, engine.VerbEvent{})
	if err != nil || res[0].Err != nil {
		t.Fatalf("recover: %v %v", err, res)
	}
	return res[0].Job
}

// comeBack restores the node's database and has it record its liveness.
func (l *lateSetup) comeBack() {
	l.s.restore()
	l.lease.Advance(time.Second)
	l.n.fence.recorded(l.lease.Now())
}

// A node cut off from its database past its node lease, whose job ended
// before the lease lapsed, comes back after the lease holder put the job
// back to RESTART and before any node started it again: the result is
// taken, the job ends FINISHED with its one run, and it does not run again.
func TestALateResultIsTakenWhenNothingReplacedItsRun(t *testing.T) {
	t.Parallel()
	l := newLateSetup(t)
	l.cutOffWhileTheRunEnds(t)
	if back := l.recover(t); back.Status != engine.StatusRestart || back.Node != "" {
		t.Fatalf("recovered job is %s on %q, want RESTART and no node", back.Status, back.Node)
	}

	l.comeBack()
	j := waitJob(t, l.base, l.job.JobID, func(j *engine.Job) bool { return j.Status != engine.StatusRestart })
	l.n.runner.runsDone.Wait()
	if j.Status != engine.StatusFinished || j.Attempt != 1 || j.Node != "n1" || j.ExitCode == nil || *j.ExitCode != 0 {
		t.Fatalf("job after the node came back: %s on %q attempt %d exit %v; want FINISHED on n1 at attempt 1 with exit 0",
			j.Status, j.Node, j.Attempt, j.ExitCode)
	}
	_, attempts, err := engine.JobAttempts(t.Context(), l.base, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(attempts) != 1 || attempts[0].Attempt != 1 || attempts[0].Ending != engine.StatusFinished || attempts[0].Node != "n1" {
		t.Errorf("attempts: %+v; want the one run, FINISHED on n1", attempts)
	}
	if files := spooled(t, l.dir); len(files) != 0 {
		t.Errorf("files left after the result was taken: %v", files)
	}
	out := l.log.String()
	if !strings.Contains(out, "took the late result of a job nothing had replaced") || strings.Contains(out, "dropped the result") {
		t.Errorf("the node's log does not say the late result was taken, or says it dropped it:\n%s", out)
	}
}

// The same, but another node started the job before this one came back:
// the result is dropped, and the new run goes on.
func TestALateResultIsDroppedOnceAnotherRunStarted(t *testing.T) {
	t.Parallel()
	l := newLateSetup(t)
	l.cutOffWhileTheRunEnds(t)
	again, err := l.base.JobUpdate(t.Context(), engine.QueuedStartUpdate(l.recover(t), "n2"))
	if err != nil {
		t.Fatal(err)
	}

	l.comeBack()
	waitfor.Until(t, 30*time.Second, "the node to drop the result", func() bool {
		return strings.Contains(l.log.String(), "dropped the result of a job taken from this node")
	})
	l.n.runner.runsDone.Wait()
	j, err := l.base.JobGet(t.Context(), again.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != engine.StatusRunning || j.Node != "n2" || j.Attempt != 2 || j.Version != again.Version {
		t.Errorf("the job started on n2 is %s on %q attempt %d version %d; want it left RUNNING there at attempt 2",
			j.Status, j.Node, j.Attempt, j.Version)
	}
	if strings.Contains(l.log.String(), "took the late result") {
		t.Errorf("the node says it took the result of a run replaced meanwhile:\n%s", l.log.String())
	}
}
