package node

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
	"github.com/jobctl/jobctl/engine/runner"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// errAway is what outageStore answers while the database is away.
var errAway = errors.New("database is away")

// outageStore is an in-memory store a test can cut off, as a database
// outage looks to a node: while it is away every job read and write the
// node makes fails. The in-memory store itself cannot be cut, hence this
// wrapper.
type outageStore struct {
	engine.Store
	mu      sync.Mutex
	away    bool
	refused int    // calls refused while away
	onBatch func() // if set, called once a batch of updates went through
}

func (s *outageStore) cut()     { s.mu.Lock(); s.away = true; s.mu.Unlock() }
func (s *outageStore) restore() { s.mu.Lock(); s.away = false; s.mu.Unlock() }

func (s *outageStore) refusals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

func (s *outageStore) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.away {
		s.refused++
		return errAway
	}
	return nil
}

func (s *outageStore) JobGet(ctx context.Context, id int64) (*engine.Job, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.Store.JobGet(ctx, id)
}

func (s *outageStore) JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.Store.JobList(ctx, p)
}

func (s *outageStore) JobUpdate(ctx context.Context, u engine.JobUpdate) (*engine.Job, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.Store.JobUpdate(ctx, u)
}

func (s *outageStore) JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.Store.JobUpdateMany(ctx, us)
}

func (s *outageStore) JobStartMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.Store.JobStartMany(ctx, us)
}

func (s *outageStore) JobUpdateManyQuiet(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	out, err := s.Store.JobUpdateManyQuiet(ctx, us)
	s.mu.Lock()
	hook := s.onBatch
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return out, err
}

// Tx is the store's, refused while away: the operations a node calls run
// in one.
func (s *outageStore) Tx(ctx context.Context, fn func(engine.TxStore) error) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Store.Tx(ctx, fn)
}

func (s *outageStore) JobLogAppend(ctx context.Context, p engine.JobLogAppendParams) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Store.JobLogAppend(ctx, p)
}

func (s *outageStore) JobProgressSet(ctx context.Context, p engine.JobProgressParams) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.Store.JobProgressSet(ctx, p)
}

// outageNode is a node n1 on store s that keeps results in stateDir ("":
// none), with a virtual clock and retries a millisecond apart; log gets
// what it logs.
func outageNode(t *testing.T, s engine.Store, stateDir string, log *logBuffer, mutate func(*Config)) (*Runtime, *engine.VirtualClock) {
	t.Helper()
	cfg := Defaults()
	cfg.Name, cfg.MaxLoad, cfg.Exec, cfg.StateDir = "n1", 2, true, stateDir
	if mutate != nil {
		mutate(&cfg)
	}
	clock := engine.NewVirtualClock(time.Now())
	n, err := New(cfg, s, clock, slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	n.token = "secret-token"
	n.runner.books.SetReady(true)
	n.results.batcher.minDelay, n.results.batcher.maxDelay = time.Millisecond, time.Millisecond
	return n, clock
}

// gatedJob offers an exec job to n and returns its offer and the gate
// file that ends it.
func gatedJob(t *testing.T, n *Runtime, s engine.Store) (engine.DispatchOffer, string) {
	t.Helper()
	gate := filepath.Join(t.TempDir(), "gate")
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Load: 1,
		Args: []string{"sh", "-c", `while [ ! -e "$1" ]; do sleep 0.01; done`, "sh", gate}})
	if res := n.runner.Accept(t.Context(), o); res.Verdict != engine.OfferAccepted {
		t.Fatal(res)
	}
	return o, gate
}

// spooled lists the result files in a node's state directory, without
// one being written.
func spooled(t *testing.T, stateDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(stateDir, "results"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// runningOn puts a new job RUNNING on node n1 at attempt 1, as a node's
// start does, without a run of it anywhere.
func runningOn(t *testing.T, s engine.Store) int64 {
	t.Helper()
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1})
	j, err := s.JobGet(t.Context(), o.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobUpdate(t.Context(), engine.QueuedStartUpdate(j, "n1")); err != nil {
		t.Fatal(err)
	}
	return j.ID
}

// keptResult is a successful, measured result of attempt 1 of job id that
// a node kept on disk, with no run of it on the books.
func keptResult(n *Runtime, id int64) {
	n.results.keepResult(&completion{run: &activeRun{job: &engine.Job{ID: id}, attempt: 1},
		result: engine.RunResult{Outcome: runner.Succeeded, Reason: "exit code 0", Usage: keptUsage}, endedAt: time.Now()})
}

// keptUsage is what the runs of keptResult used.
var keptUsage = &engine.Usage{CPUSeconds: 1.5, PeakMemory: 7 << 20, WallSeconds: 3}

// A result the store does not take is retried for as long as the outage
// lasts — however far the node's clock moves meanwhile — kept on disk once
// a try failed and off the orphan check's hands; once the store answers
// again it is recorded and its file removed. The node says once that it
// cannot record, and once that it can again.
func TestAResultOutlastsAnOutage(t *testing.T) {
	t.Parallel()
	mem := memstore.New(engine.SystemClock{})
	s := &outageStore{Store: mem}
	dir := t.TempDir()
	var log logBuffer
	n, clock := outageNode(t, s, dir, &log, nil)
	o, gate := gatedJob(t, n, s)

	s.cut()
	writeFile(t, gate, "")
	waitfor.Until(t, 30*time.Second, "the result on disk", func() bool { return len(spooled(t, dir)) == 1 })
	for range 3 {
		tries := s.refusals()
		waitfor.Until(t, 30*time.Second, "more tries", func() bool { return s.refusals() >= tries+20 })
		clock.Advance(24 * time.Hour)
	}
	if j, _ := mem.JobGet(t.Context(), o.JobID); j.Status != engine.StatusRunning || !n.runner.books.Holds(o.JobID) {
		t.Fatalf("during the outage the job is %s and on the books: %v; want RUNNING and held", j.Status, n.runner.books.Holds(o.JobID))
	}

	path := filepath.Join(dir, "results", spooled(t, dir)[0])
	var rec spoolRecord
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.JobID != o.JobID || rec.Attempt != 1 || rec.Node != "n1" || rec.Outcome != runner.Succeeded || rec.ExitCode != 0 ||
		rec.Shutdown || rec.EndedAt.IsZero() {
		t.Errorf("kept %+v; want job %d attempt 1 of n1, succeeded with exit code 0, with its end time", rec, o.JobID)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}

	s.restore()
	n.runner.runsDone.Wait()
	if j, _ := mem.JobGet(t.Context(), o.JobID); j.Status != engine.StatusFinished || j.Attempt != 1 {
		t.Errorf("after the outage the job is %s at attempt %d, want FINISHED at 1", j.Status, j.Attempt)
	}
	if files := spooled(t, dir); len(files) != 0 {
		t.Errorf("files left after the result was recorded: %v", files)
	}
	// The line comes once the writer is past the try that worked.
	waitfor.Until(t, 30*time.Second, "the node to say that results get through again", func() bool {
		return strings.Contains(log.String(), `msg="recording job results again" node=n1 results=1`)
	})
	if out := log.String(); strings.Count(out, "cannot record job results") != 1 {
		t.Errorf("said %d times that results cannot be recorded, want once:\n%s", strings.Count(out, "cannot record job results"), out)
	}
}

// A result whose job changed while it ran is recorded on its own, reading
// the job first; when the database goes away just then, it is not dropped
// either: it is kept on disk and recorded once the database is back.
func TestAResultRecordedAloneOutlastsAnOutage(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	mem := memstore.New(engine.SystemClock{})
	s := &outageStore{Store: mem}
	dir := t.TempDir()
	var log logBuffer
	n, _ := outageNode(t, s, dir, &log, nil)
	o, gate := gatedJob(t, n, s)
	// An operator paused and resumed the job: the version its run started
	// with is gone, so the batch's guarded update misses.
	for _, to := range []engine.Status{engine.StatusPaused, engine.StatusRunning} {
		j, _ := mem.JobGet(ctx, o.JobID)
		if _, err := mem.JobUpdate(ctx, engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: to}); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	s.onBatch = s.cut // the database goes away right after the batch
	s.mu.Unlock()
	writeFile(t, gate, "")
	waitfor.Until(t, 30*time.Second, "the result on disk", func() bool { return len(spooled(t, dir)) == 1 })
	s.mu.Lock()
	s.onBatch = nil
	s.mu.Unlock()
	tries := s.refusals()
	waitfor.Until(t, 30*time.Second, "more tries", func() bool { return s.refusals() >= tries+20 })

	s.restore()
	n.runner.runsDone.Wait()
	if j, _ := mem.JobGet(ctx, o.JobID); j.Status != engine.StatusFinished || j.Attempt != 1 {
		t.Errorf("the job is %s at attempt %d, want FINISHED at 1", j.Status, j.Attempt)
	}
	if files := spooled(t, dir); len(files) != 0 {
		t.Errorf("files left after the result was recorded: %v", files)
	}
}

// Results an earlier process of the node kept are recorded at its start as
// live ones would be: the job still this node's at that attempt ends as
// the result says; one that moved on meanwhile is left as it is (fenced),
// and one that is gone costs nothing; their files are removed. A file cut
// short by a crash goes too; a result of another node stays where it is.
func TestKeptResultsAreRecordedAtTheNextStart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	mem := memstore.New(engine.SystemClock{})
	dir := t.TempDir()
	ours := runningOn(t, mem)
	moved := runningOn(t, mem)
	// Taken from n1 while it was away, and started on n2.
	j, _ := mem.JobGet(ctx, moved)
	j, err := mem.JobUpdate(ctx, engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: engine.StatusRestart, Node: engine.Ptr("")})
	if err == nil {
		_, err = mem.JobUpdate(ctx, engine.QueuedStartUpdate(j, "n2"))
	}
	if err != nil {
		t.Fatal(err)
	}
	foreign := runningOn(t, mem)

	var log logBuffer
	earlier, _ := outageNode(t, mem, dir, &log, nil)
	for _, id := range []int64{ours, moved, 999999} {
		keptResult(earlier, id)
	}
	other, _ := outageNode(t, mem, dir, &log, func(c *Config) { c.Name = "n2" })
	keptResult(other, foreign)
	cutShort := filepath.Join(dir, "results", ".77-1.json.tmp")
	writeFile(t, cutShort, `{"format":1,"job_`)

	n, _ := outageNode(t, mem, dir, &log, nil)
	if err := n.results.replayResults(ctx); err != nil {
		t.Fatal(err)
	}
	if j, _ := mem.JobGet(ctx, ours); j.Status != engine.StatusFinished || j.Attempt != 1 || j.Node != "n1" ||
		j.Usage == nil || *j.Usage != *keptUsage {
		t.Errorf("the job still ours is %s at attempt %d on %q with usage %v, want FINISHED at 1 on n1 with the kept usage",
			j.Status, j.Attempt, j.Node, j.Usage)
	}
	if j, _ := mem.JobGet(ctx, moved); j.Status != engine.StatusRunning || j.Attempt != 2 || j.Node != "n2" {
		t.Errorf("the job that moved on is %s at attempt %d on %q, want RUNNING at 2 on n2, untouched", j.Status, j.Attempt, j.Node)
	}
	if j, _ := mem.JobGet(ctx, foreign); j.Status != engine.StatusRunning {
		t.Errorf("a job whose result another node kept is %s, want RUNNING, untouched", j.Status)
	}
	want := []string{other.results.batcher.spool.fileName(foreign, 1)}
	if files := spooled(t, dir); !slices.Equal(files, want) {
		t.Errorf("files left %v, want only %v, the other node's", files, want)
	}
	if _, err := os.Stat(cutShort); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file cut short by a crash is still there (%v)", err)
	}
	if !strings.Contains(log.String(), "dropped a kept job result: the job has moved on") {
		t.Errorf("the fenced result was not said to be dropped:\n%s", log.String())
	}
}

// The orphan check never restarts a job whose result waits to be recorded:
// neither one kept on disk (with no run on the books) nor one in memory
// only, whose run stays on the books. A job with neither is restarted.
func TestTheOrphanCheckLeavesWaitingResultsAlone(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	mem := memstore.New(engine.SystemClock{})
	s := &outageStore{Store: mem}

	var log logBuffer
	onDisk, _ := outageNode(t, s, t.TempDir(), &log, nil)
	keptID := runningOn(t, mem)
	orphan := runningOn(t, mem)
	keptResult(onDisk, keptID)
	if err := onDisk.runner.recoverOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	if j, _ := mem.JobGet(ctx, keptID); j.Status != engine.StatusRunning {
		t.Errorf("a job whose result is on disk became %s, want RUNNING", j.Status)
	}
	if j, _ := mem.JobGet(ctx, orphan); j.Status != engine.StatusRestart {
		t.Errorf("an orphan is %s, want RESTART", j.Status)
	}

	// In memory only: no state directory, and the retry held until the
	// check has run with the store back.
	inMemory, _ := outageNode(t, s, "", &log, nil)
	paused, resume := make(chan struct{}, 1), make(chan struct{})
	inMemory.results.batcher.pause = func(time.Duration) {
		select {
		case paused <- struct{}{}:
		default:
		}
		<-resume
	}
	o, gate := gatedJob(t, inMemory, s)
	s.cut()
	writeFile(t, gate, "")
	<-paused
	s.restore()
	if err := inMemory.runner.recoverOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	if j, _ := mem.JobGet(ctx, o.JobID); j.Status != engine.StatusRunning {
		t.Errorf("a job whose result waits in memory became %s, want RUNNING", j.Status)
	}
	close(resume)
	inMemory.runner.runsDone.Wait()
	if j, _ := mem.JobGet(ctx, o.JobID); j.Status != engine.StatusFinished || j.Attempt != 1 {
		t.Errorf("the job is %s at attempt %d, want FINISHED at 1", j.Status, j.Attempt)
	}
}

// A node stopping while the database is away does not wait for it: after
// its grace it stops what still runs and keeps every result on disk — the
// run that ended during the outage as it ended, the run it stopped as
// stopped — and its next start records them.
func TestAStoppingNodeKeepsWhatTheDatabaseHasNotTaken(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	mem := memstore.New(engine.SystemClock{})
	s := &outageStore{Store: mem}
	dir := t.TempDir()
	var log logBuffer
	n, _ := outageNode(t, s, dir, &log, func(c *Config) { c.ShutdownGrace, c.CancelGrace = 0, 100*time.Millisecond })
	n.results.batcher.minDelay, n.results.batcher.maxDelay = 10*time.Millisecond, 10*time.Millisecond
	ended, gate := gatedJob(t, n, s)
	stopped := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`"60s"`), Load: 1})
	if res := n.runner.Accept(ctx, stopped); res.Verdict != engine.OfferAccepted {
		t.Fatal(res)
	}
	s.cut()
	writeFile(t, gate, "")
	waitfor.Until(t, 30*time.Second, "the ended run's result on disk", func() bool { return len(spooled(t, dir)) == 1 })

	n.runner.books.SetReady(false)
	n.drain()
	if files := spooled(t, dir); len(files) != 2 {
		t.Fatalf("kept %v after the shutdown, want both results", files)
	}
	n.runner.mu.Lock()
	marked := n.runner.runs[ended.JobID].shutdown
	n.runner.mu.Unlock()
	if marked {
		t.Error("the run that ended before the grace is marked as stopped by the shutdown: its job would go back to RESTART")
	}
	if !strings.Contains(log.String(), "the next start of this node records them") {
		t.Errorf("the node did not say it kept results for its next start:\n%s", log.String())
	}

	// The next start, the database back; the stopped process's writer
	// still retries against the old connection.
	next, _ := outageNode(t, mem, dir, &log, nil)
	if err := next.results.replayResults(ctx); err != nil {
		t.Fatal(err)
	}
	if j, _ := mem.JobGet(ctx, ended.JobID); j.Status != engine.StatusFinished || j.Attempt != 1 {
		t.Errorf("the job that ended during the outage is %s at attempt %d, want FINISHED at 1", j.Status, j.Attempt)
	}
	if j, _ := mem.JobGet(ctx, stopped.JobID); j.Status != engine.StatusRestart || j.Node != "" {
		t.Errorf("the job stopped by the shutdown is %s on %q, want RESTART on no node", j.Status, j.Node)
	}
	if files := spooled(t, dir); len(files) != 0 {
		t.Errorf("files left after the replay: %v", files)
	}
	s.restore() // the old writer finds both jobs moved on and lets go
	n.runner.runsDone.Wait()
}
