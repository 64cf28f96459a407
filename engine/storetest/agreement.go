package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

var agreementTests = []subtest{
	{"DispatchableAgreesWithRule", testDispatchableAgreesWithRule},
}

// agreementSize is how many random job sets the agreement test builds, of
// how many jobs, moved by how many random transitions: fewer on the SQL
// stores, where every step is a round trip (MariaDB's are the slowest).
func agreementSize(s engine.Store) (sets, jobs, steps int) {
	switch s.Dialect() {
	case "memory":
		return 12, 400, 1600
	case "mysql":
		return 3, 200, 800
	}
	return 4, 250, 750
}

// testDispatchableAgreesWithRule builds random job sets, each reached only
// through the engine's own transitions, and checks that the store's paged
// JobListDispatchable lists exactly the jobs engine.DispatchHold lets go,
// judged over every job at the store's clock.
func testDispatchableAgreesWithRule(t *testing.T, s engine.Store) {
	sets, jobs, steps := agreementSize(s)
	seen := map[engine.HoldKind]int{}
	pausedOnNode := map[bool]int{}
	rollbackHolds, placed := 0, 0
	for set := range sets {
		seed := uint64(set + 1)
		rng := rand.New(rand.NewPCG(seed, 0x6a6f6263746c))
		// Each set has keys of its own, so the jobs of earlier sets block
		// none of its jobs.
		prefix := fmt.Sprintf("set%d/", set)
		made := buildRandomJobs(t, s, rng, prefix, jobs, steps)
		// Steps in a transaction that fails leave no trace, in the
		// listing as in the store's indexes.
		all := listAll(t, s)
		rolledBackSteps(t, s, rng, made, steps/10)
		if again := listAll(t, s); !reflect.DeepEqual(again, all) {
			t.Fatalf("seed %d: a failed transaction of random steps changed the jobs", seed)
		}

		now := dbNow(t, s)
		byKey := map[string][]*engine.Job{}
		byID := map[int64]*engine.Job{}
		for _, j := range all {
			if j.Status == engine.StatusPaused && j.Key != "" {
				pausedOnNode[j.Node != ""]++
			}
			byKey[j.Key] = append(byKey[j.Key], j)
			byID[j.ID] = j
		}
		for _, st := range engine.DispatchableStatuses {
			var want []int64
			for _, j := range all {
				var keyJobs []*engine.Job
				if j.Key != "" {
					keyJobs = byKey[j.Key]
				}
				hold := engine.DispatchHold(j, now, keyJobs)
				if j.Status == st {
					seen[hold.Kind]++
					if hold.RollbackPending {
						rollbackHolds++
					}
					if j.KeyPosition != nil && j.Key != "" {
						placed++
					}
				}
				if j.Status == st && hold.Dispatchable() {
					want = append(want, j.ID)
				}
			}
			// Dispatch order: higher priority first, then lower id.
			slices.SortFunc(want, func(a, b int64) int {
				if engine.PlaceOf(byID[a]).Before(engine.PlaceOf(byID[b])) {
					return -1
				}
				return 1
			})
			got := pageAll(t, s, st, 7)
			if !slices.Equal(ids(got), want) {
				t.Errorf("seed %d, %s: JobListDispatchable lists %v, the rule %v", seed, st, ids(got), want)
				explainDisagreement(t, ids(got), want, byID, byKey, now)
			}
			for _, j := range got {
				if stored := byID[j.ID].Queued(); !reflect.DeepEqual(j.Queued(), stored) {
					t.Errorf("listed job differs from JobList's, as a page holds it (Job.Queued):\n dispatchable %+v\n list         %+v", j, stored)
				}
			}
		}
	}
	// The generator must reach every kind of verdict, or the test proves little.
	for _, kind := range []engine.HoldKind{engine.HoldNone, engine.HoldRunAfter, engine.HoldKey} {
		if seen[kind] == 0 {
			t.Errorf("no dispatchable-status job with verdict %q in any set (verdicts: %v)", kind, seen)
		}
	}
	if rollbackHolds == 0 || placed == 0 {
		t.Errorf("jobs held for a rollback: %d, keyed jobs with a position: %d; want some of both", rollbackHolds, placed)
	}
	if pausedOnNode[true] == 0 || pausedOnNode[false] == 0 {
		t.Errorf("keyed PAUSED jobs with a node: %d, without: %d; want some of both", pausedOnNode[true], pausedOnNode[false])
	}
}

// pageAll reads every page of every type's queue of status st, limit at
// a time, and merges them in dispatch order.
func pageAll(t *testing.T, s engine.Store, st engine.Status, limit int) []*engine.Job {
	t.Helper()
	var out []*engine.Job
	for _, q := range queueLoads(t, s) {
		if q.Status != st {
			continue
		}
		p := engine.JobDispatchableParams{Status: st, Type: q.Type, Limit: limit}
		for {
			page := dispatchableRead(t, s, p)
			out = append(out, page...)
			if len(page) < limit {
				break
			}
			p.After = engine.PlaceOf(page[len(page)-1])
		}
	}
	slices.SortFunc(out, func(a, b *engine.Job) int {
		if engine.PlaceOf(a).Before(engine.PlaceOf(b)) {
			return -1
		}
		return 1
	})
	return out
}

// explainDisagreement names the rule's verdict for every job the two lists
// do not agree on.
func explainDisagreement(t *testing.T, got, want []int64, byID map[int64]*engine.Job, byKey map[string][]*engine.Job, now time.Time) {
	t.Helper()
	for _, id := range symmetricDifference(got, want) {
		j := byID[id]
		hold := engine.DispatchHold(j, now, byKey[j.Key])
		t.Logf("job %d %s key %q place %d node %q run_after %v: rule says %q (%s)", id, j.Status, j.Key, j.KeyPlace(), j.Node,
			j.RunAfter, hold.Kind, hold.Reason(now))
		for _, o := range byKey[j.Key] {
			if j.Key != "" && o.ID != id {
				t.Logf("    key job %d %s place %d node %q rollback pending %v", o.ID, o.Status, o.KeyPlace(), o.Node, o.RollbackPending())
			}
		}
	}
}

func symmetricDifference(a, b []int64) []int64 {
	var out []int64
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

// errRollBack makes a transaction fail on purpose.
var errRollBack = errors.New("roll back")

// rolledBackSteps applies random steps to random jobs in a transaction
// that then fails.
func rolledBackSteps(t *testing.T, s engine.Store, rng *rand.Rand, jobs []*engine.Job, steps int) {
	t.Helper()
	err := s.Tx(t.Context(), func(tx engine.TxStore) error {
		current := slices.Clone(jobs)
		for range steps {
			i := rng.IntN(len(current))
			if next := randomStep(t, tx, rng, current[i]); next != nil {
				current[i] = next
			}
		}
		return errRollBack
	})
	if !errors.Is(err, errRollBack) {
		t.Fatalf("Tx = %v, want its callback's error", err)
	}
}

// buildRandomJobs inserts n jobs with random keys (from a small set, so
// keys block each other), start times and held status, then applies steps
// random legal transitions to random jobs. It returns the jobs as they are.
func buildRandomJobs(t *testing.T, s engine.Store, rng *rand.Rand, prefix string, n, steps int) []*engine.Job {
	t.Helper()
	now := dbNow(t, s)
	// About four jobs a key, so that the fate of a key turns on one or two
	// of its jobs rather than always on many; a third of the jobs have no key.
	keys := n / 4
	jobs := make([]*engine.Job, 0, n)
	ofKey := map[string][]*engine.Job{}
	for range n {
		// A few types and priorities, so queues are apart and paging
		// crosses priorities; a key keeps its order whatever them.
		p := engine.JobInsertParams{MaxAttempts: 1 + rng.IntN(3), Type: []string{engine.TypeNoop, "a", "b"}[rng.IntN(3)],
			Priority: []int{0, 10, 50, 90, engine.MaxPriority}[rng.IntN(5)]}
		if rng.IntN(3) > 0 {
			p.Key = fmt.Sprintf("%sk%d", prefix, rng.IntN(keys))
		}
		// Start times far from now, so the store's clock moving on during
		// the test changes no verdict.
		switch rng.IntN(5) {
		case 0:
			p.RunAfter = engine.Ptr(now.Add(-time.Hour))
		case 1:
			p.RunAfter = engine.Ptr(now.Add(time.Hour))
		}
		if rng.IntN(10) == 0 {
			p.Status = engine.StatusInstantiated
		}
		// Some jobs fail with a rollback spec, and some take the place of
		// an earlier job, as a rollback job does, so the key's order is
		// not the order of ids.
		if rng.IntN(2) == 0 {
			p.Rollback = "undo"
		}
		if earlier := ofKey[p.Key]; len(earlier) > 0 && rng.IntN(4) == 0 {
			p.KeyPosition = engine.Ptr(earlier[rng.IntN(len(earlier))].KeyPlace())
		}
		j := insert(t, s, p)
		ofKey[p.Key] = append(ofKey[p.Key], j)
		jobs = append(jobs, j)
	}
	for range steps {
		i := rng.IntN(len(jobs))
		if next := randomStep(t, s, rng, jobs[i]); next != nil {
			jobs[i] = next
		}
	}
	// A job fails finally only after several steps that random ones seldom
	// string together: run some queued jobs with a rollback spec to their
	// final failure, so keys wait for rollbacks too.
	for i, j := range jobs {
		if j.Status.Dispatchable() && j.Rollback != "" && j.Key != "" && rng.IntN(2) == 0 {
			jobs[i] = runToFailure(t, s, j)
		}
	}
	return jobs
}

// runToFailure dispatches, starts and fails a job until no attempt is left.
func runToFailure(t *testing.T, s engine.Store, j *engine.Job) *engine.Job {
	t.Helper()
	for j.Status != engine.StatusFailed {
		j = apply(t, s, engine.QueuedStartUpdate(j, "n1"))
		j = apply(t, s, engine.OutcomeUpdate(j, engine.RunResult{ExitCode: 3, Outcome: engine.RunFailed, Reason: "exit code 3"},
			false, func() float64 { return 0.5 }))
	}
	return j
}

// randomStep applies one legal transition, picked at random among those
// the engine offers for the job's status, and returns the job after it
// (nil when there is none, as for a DELETED job).
func randomStep(t *testing.T, s engine.TxStore, rng *rand.Rand, j *engine.Job) *engine.Job {
	t.Helper()
	nodes := []string{"n1", "n2", "n3"}
	node := nodes[rng.IntN(len(nodes))]
	var options []func() (engine.JobUpdate, error)
	verb := func(v engine.Verb) func() (engine.JobUpdate, error) {
		return func() (engine.JobUpdate, error) { return v.Update(j) }
	}
	plain := func(u engine.JobUpdate) func() (engine.JobUpdate, error) {
		return func() (engine.JobUpdate, error) { return u, nil }
	}
	outcome := func(res engine.RunResult, shutdown bool) func() (engine.JobUpdate, error) {
		return plain(engine.OutcomeUpdate(j, res, shutdown, rng.Float64))
	}
	switch j.Status {
	case engine.StatusInstantiated:
		options = append(options, verb(engine.VerbRelease), verb(engine.VerbRelease), verb(engine.VerbCancel))
	case engine.StatusQueued, engine.StatusRestart:
		options = append(options, plain(engine.QueuedStartUpdate(j, node)), plain(engine.QueuedStartUpdate(j, node)),
			plain(engine.RefuseUpdate(j, node, "type not offered")), verb(engine.VerbPause), verb(engine.VerbCancel))
	case engine.StatusRunning:
		options = append(options,
			outcome(engine.RunResult{ExitCode: 0, Outcome: engine.RunSucceeded, Reason: "exit code 0"}, false),
			outcome(engine.RunResult{ExitCode: 3, Outcome: engine.RunFailed, Reason: "exit code 3"}, false),
			outcome(engine.RunResult{ExitCode: -1, Outcome: engine.RunFailed, Reason: "killed"}, true),
			outcome(engine.RunResult{ExitCode: 0, Outcome: engine.RunSucceededWithWarning, Warning: "w"}, false),
			verb(engine.VerbPause), verb(engine.VerbPause), verb(engine.VerbCancel), plain(waitChildrenUpdate(j)),
			plain(engine.RecoverUpdate(j, "node gone")))
	case engine.StatusPaused:
		options = append(options, verb(engine.VerbResume), verb(engine.VerbCancel))
		if j.Node != "" {
			options = append(options, plain(engine.RecoverUpdate(j, "node gone")))
		}
	case engine.StatusWaiting:
		options = append(options, verb(engine.VerbCancel), plain(engine.RecoverUpdate(j, "node gone")),
			outcome(engine.RunResult{ExitCode: 0, Outcome: engine.RunSucceeded}, false))
	case engine.StatusCancelling:
		options = append(options, outcome(engine.RunResult{ExitCode: -1, Outcome: engine.RunCancelled}, false),
			plain(engine.RecoverUpdate(j, "node gone")))
	case engine.StatusFinished, engine.StatusWarning, engine.StatusFailed, engine.StatusCancelled:
		options = append(options, verb(engine.VerbRequeue), verb(engine.VerbRequeue), verb(engine.VerbDelete))
	}
	if j.RollbackPending() {
		// The rollback job made: any id will do for the rule.
		return rollbackSet(t, s, j, options, rng)
	}
	if len(options) == 0 {
		return nil
	}
	u, err := options[rng.IntN(len(options))]()
	if err != nil {
		// A verb that does not apply to this job now (pausing a job
		// being cancelled, say): no step.
		return nil
	}
	return apply(t, s, u)
}

// rollbackSet records a rollback job on a job awaiting it, or most of the
// time takes one of its other steps, so jobs stay awaiting it a while.
func rollbackSet(t *testing.T, s engine.TxStore, j *engine.Job, options []func() (engine.JobUpdate, error), rng *rand.Rand) *engine.Job {
	t.Helper()
	if rng.IntN(4) > 0 {
		u, err := options[rng.IntN(len(options))]()
		if err != nil {
			return nil
		}
		return apply(t, s, u)
	}
	got, err := s.JobRollbackSet(t.Context(), engine.JobRollbackSetParams{ID: j.ID, Version: j.Version, RollbackJobID: j.ID})
	if err != nil {
		t.Fatalf("JobRollbackSet(%d): %v", j.ID, err)
	}
	return got
}

// waitChildrenUpdate is a running parent starting to wait for its children
// (`jobctl wait --children`): it keeps its node and releases its load. The
// engine has no constructor for this step, so the suite writes it here.
func waitChildrenUpdate(j *engine.Job) engine.JobUpdate {
	return engine.JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: engine.StatusWaiting}
}
