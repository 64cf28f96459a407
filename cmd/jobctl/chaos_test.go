package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/waitfor"
)

// The chaos run's settings that hold in both profiles.
const (
	chaosBatchSize = 200
	chaosMaxLoad   = 4
	chaosNodeLease = 3 * time.Second
	// After the faults, every job must end within this.
	chaosDrain = 90 * time.Second
	// Jobs the cluster must finish between two faults.
	chaosProgressBetweenFaults = 10
)

// chaosProfile is how much chaos a run makes. Every profile injects every
// fault kind at least once and checks every guarantee; the long one only
// does more of it, for more chances of a rare interleaving.
type chaosProfile struct {
	name string
	// Jobs per backend: all submitted up front in the long profile; in the
	// short one, the most the cluster is fed.
	postgresJobs, mariaDBJobs int
	// cycles is how many times the driver goes through the fault kinds; 0
	// goes on until every job ended or the fault phase is over.
	cycles int
	// feed keeps a backlog of this many jobs while the faults last, instead
	// of submitting every job up front: the run then has work for each
	// fault whatever the machine's speed, and no more than it needs.
	feed int
	// Faults go on until the driver's cycles are done or every job ended,
	// or this long has passed.
	faultPhase time.Duration
}

var (
	// chaosShort runs in every `make test`: one cycle of the faults, on a
	// cluster fed just enough work to be busy through them.
	chaosShort = chaosProfile{name: "short", postgresJobs: 2000, mariaDBJobs: 1000, cycles: 1, feed: 60,
		faultPhase: 150 * time.Second}
	// chaosLong is `make chaos`: thousands of jobs under faults for a few
	// minutes per backend.
	chaosLong = chaosProfile{name: "long", postgresJobs: 2000, mariaDBJobs: 1000, faultPhase: 150 * time.Second}
)

// currentChaosProfile is the short profile, or the long one when
// JOBCTL_CHAOS=long (as `make chaos` sets it).
func currentChaosProfile(t *testing.T) chaosProfile {
	t.Helper()
	switch v := os.Getenv("JOBCTL_CHAOS"); v {
	case "", "short":
		return chaosShort
	case "long":
		return chaosLong
	default:
		t.Fatalf("JOBCTL_CHAOS=%q: want short or long", v)
		return chaosProfile{}
	}
}

// Jobs of mixed loads and lengths (hundreds, or thousands in the long
// profile), some doing their work in a grandchild of the node, run on
// three nodes while a driver kills the lease holder and a worker (each
// restarted at once under its name), freezes a node for longer than its
// node lease and, on PostgreSQL, cuts the database off from every node and
// from one. Every job still ends
// FINISHED, no attempt runs twice, no two runs of a job overlap, the jobs
// of a key run one after another in submission order, no node
// ever carries more than its max load, and every start names the
// dispatcher and lease term it happened under.
//
// `make test` runs the short profile, one cycle of the faults; `make
// chaos` the long one, minutes of them per backend. Run only these: go
// test -count=1 -run 'TestChaos' ./cmd/jobctl/ (JOBCTL_CHAOS=long for the
// long profile, JOBCTL_CHAOS_SEED=N replays a run's job mix).
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("minutes of faults on real databases; not in -short mode")
	}
	// One slot of the package's parallel tests: the backends run one after
	// the other, each with the machine's cores to itself as far as it can.
	t.Parallel()
	p := currentChaosProfile(t)
	t.Run("postgres", func(t *testing.T) {
		runChaos(t, postgresCluster(t), "postgres", p, p.postgresJobs, true)
	})
	t.Run("mariadb", func(t *testing.T) {
		runChaos(t, mysqlCluster(t), "mysql", p, p.mariaDBJobs, false)
	})
}

func runChaos(t *testing.T, c *cluster, backend string, p chaosProfile, jobCount int, cuts bool) {
	began := time.Now()
	worker := chaosWorker(t)
	records := filepath.Join(t.TempDir(), "runs")
	args := []string{"--exec", "--max-load", strconv.Itoa(chaosMaxLoad), "--node-lease", chaosNodeLease.String(),
		"--dispatch-interval", "200ms", "--lease-timeout", "1s", "--heartbeat-interval", "1s"}
	cc := newChaosCluster(t, c, backend, []string{"n1", "n2", "n3"}, args)
	loads, leases, stopSamplers := startSamplers(cc)
	defer stopSamplers()

	mix := chaosMix(chaosSeed(t), jobCount)
	grandchildren, keyed := 0, 0
	for _, j := range mix {
		if j.Grandchild {
			grandchildren++
		}
		if j.Key != "" {
			keyed++
		}
	}
	t.Logf("chaos (%s profile) on %s: up to %d jobs (%d with a grandchild, %d with a key)",
		p.name, backend, jobCount, grandchildren, keyed)

	// The first batch goes in before the faults start; the rest while they
	// happen.
	first := chaosBatchSize
	if p.feed > 0 {
		first = p.feed
	}
	ids, err := cc.submitChaos(mix[:first], worker, records, chaosBatchSize)
	if err != nil {
		t.Fatal(err)
	}
	faults := &faultLog{}
	driver := &chaosDriver{cc: cc, log: faults, nodeLease: chaosNodeLease, cuts: cuts, loads: loads, cycles: p.cycles}
	driverStop, driverDone := make(chan struct{}), make(chan struct{})
	go func() { driver.run(driverStop); close(driverDone) }()
	stopDriver := sync.OnceFunc(func() { close(driverStop); <-driverDone })
	defer stopDriver()
	ids, err = feedChaos(cc, p, mix, ids, worker, records, began, driverDone)
	if err != nil {
		t.Fatal(err)
	}
	stopDriver()
	t.Logf("chaos: faults over after %s", time.Since(began).Round(time.Second))
	if _, err := cc.jobctl(chaosDrain+30*time.Second, append([]string{"wait", "--timeout", chaosDrain.String()}, ids...)...); err != nil {
		t.Logf("waiting for the jobs: %s", lastLines(err.Error(), 1))
	}
	// A run that outlived its node writes on until it ends; wait for the
	// last of them, so what they did is all in the records.
	if !waitfor.Within(30*time.Second, func() bool { return workersRunning(records) == 0 }) {
		t.Errorf("%d worker processes still run 30s after the jobs ended", workersRunning(records))
	}
	stopSamplers()

	out, err := cc.jobctl(60*time.Second, "list", "--limit", "0", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var jobs []chaosJobView
	if err := json.Unmarshal([]byte(out), &jobs); err != nil {
		t.Fatalf("list -o json: %v", err)
	}
	if len(jobs) != len(ids) {
		t.Errorf("the listing has %d jobs, %d were submitted", len(jobs), len(ids))
	}
	runs, err := readChaosRuns(records)
	if err != nil {
		t.Fatal(err)
	}
	injected := faults.all()
	lapses := cc.lapses()
	f := checkChaos(jobs, runs, append(slices.Clone(injected), lapses...), leases.terms)
	for _, p := range f.Problems() {
		t.Error(p)
	}
	reportSamplers(t, loads, leases)
	for _, r := range f.Redone {
		t.Logf("done again after its node crashed between the work's end and the result: %s", r)
	}

	byKind := map[string]int{}
	for _, fl := range injected {
		byKind[fl.Kind]++
	}
	for _, kind := range driver.cycle() {
		if byKind[kind] == 0 {
			t.Errorf("the jobs ended before a %s fault: raise the job count, or this run proved little", kind)
		}
	}
	if f.JobsRerun == 0 {
		t.Error("no job ran again: the faults hit no running job, so this run proved nothing")
	}
	t.Logf("chaos summary (%s): %d jobs, %d runs, %d reruns of %d jobs, %d faults injected (%s), "+
		"%d completed runs redone after a crash (%s), %d runs outlived their node's kill by over %s, "+
		"%d liveness lapses the nodes logged, max load factor seen %.2f, %d lease terms seen (%d unseen between them), took %s",
		backend, len(jobs), f.Runs, f.Runs-len(jobs), f.JobsRerun, len(injected), countsText(byKind),
		sumCounts(f.RedoneAfter), countsText(f.RedoneAfter), f.OutlivedKill, chaosDyingGrace,
		len(lapses), loads.maxFactor, len(leases.terms), f.UnobservedTerms, time.Since(began).Round(time.Second))
}

// feedChaos submits the rest of the mix while the faults happen and
// returns every id submitted once the fault phase is over: when the driver
// has done its cycles, every job ended, or the phase's time is up. With
// p.feed it submits a batch whenever fewer than p.feed jobs are left to
// end, so the faults always find work; without, it submits it all at once.
func feedChaos(cc *chaosCluster, p chaosProfile, mix []chaosJob, ids []string, worker, records string,
	began time.Time, driverDone <-chan struct{}) ([]string, error) {
	if p.feed == 0 {
		rest, err := cc.submitChaos(mix[len(ids):], worker, records, chaosBatchSize)
		if ids = append(ids, rest...); err != nil {
			return ids, err
		}
	}
	for faultsUntil := began.Add(p.faultPhase); time.Now().Before(faultsUntil); {
		select {
		case <-driverDone:
			return ids, nil
		case <-time.After(500 * time.Millisecond):
		}
		ended, err := cc.ended()
		if err != nil {
			continue
		}
		if p.feed > 0 && len(ids)-ended < p.feed && len(ids) < len(mix) {
			next := mix[len(ids):min(len(ids)+p.feed, len(mix))]
			more, err := cc.submitChaos(next, worker, records, chaosBatchSize)
			if ids = append(ids, more...); err != nil {
				return ids, err
			}
			continue
		}
		if ended >= len(ids) {
			return ids, nil
		}
	}
	return ids, nil
}

// chaosSeed is the seed of the job mix: JOBCTL_CHAOS_SEED replays a run's.
func chaosSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("JOBCTL_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("JOBCTL_CHAOS_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("chaos seed %d (JOBCTL_CHAOS_SEED=%d replays this mix)", seed, seed)
	return seed
}

// startSamplers starts the load and lease samplers; stop ends them, after
// which their findings may be read.
func startSamplers(cc *chaosCluster) (loads *loadSampler, leases *leaseSampler, stop func()) {
	loads, leases = &loadSampler{cc: cc}, &leaseSampler{cc: cc}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { loads.run(quit) })
	wg.Go(func() { leases.run(quit) })
	return loads, leases, sync.OnceFunc(func() { close(quit); wg.Wait() })
}

// reportSamplers fails the test for what the samplers saw: a node over its
// max load, or a lease without the fields of its term.
func reportSamplers(t *testing.T, loads *loadSampler, leases *leaseSampler) {
	t.Helper()
	if len(loads.violations) > 0 {
		t.Errorf("nodes above their max load in %d samples, first: %s", len(loads.violations),
			strings.Join(loads.violations[:min(8, len(loads.violations))], "; "))
	}
	if loads.samples == 0 {
		t.Errorf("no load sample succeeded: %v", loads.firstErr)
	} else if loads.errors > 0 {
		t.Logf("%d of %d load samples failed, first: %v", loads.errors, loads.samples+loads.errors, loads.firstErr)
	}
	if leases.missing > 0 {
		t.Errorf("lease -o json showed a held lease without term or acquired_at %d times (fields missing)", leases.missing)
	}
	if leases.samples == 0 {
		t.Errorf("no lease sample succeeded: %v", leases.firstErr)
	} else if leases.errors > 0 {
		t.Logf("%d of %d lease samples failed, first: %v", leases.errors, leases.samples+leases.errors, leases.firstErr)
	}
}

// countsText prints counts by name, in name order.
func countsText(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// Jobs keep running through a node being killed and coming back: every job
// ends FINISHED, and no two runs of one job ever overlap — a run killed with
// its node ends at the kill, and its job runs again only after the node was
// found dead.
func TestJobsSurviveANodeKilledAndRestarted(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	args := []string{"--exec", "--max-load", "3"}
	c.serve("steady", args...)
	flaky := c.serve("flaky", args...)

	dir := t.TempDir()
	// Each run appends "start NANOS" and, if it gets there, "end NANOS" to
	// a file of its job. Runs end only once the gate opens after the kill,
	// so the kill finds flaky running jobs however slowly the jobs were
	// submitted, and a run that outlived its node would end after its rerun
	// began.
	gate := filepath.Join(dir, "gate")
	script := `f="$1/$JOBCTL_JOB_ID"; echo "start $(date +%s%N)" >> "$f"
while [ ! -e "$2" ]; do sleep 0.05; done; sleep 0.2; echo "end $(date +%s%N)" >> "$f"`
	var ids []string
	for range 18 {
		ids = append(ids, c.submit("--", "sh", "-c", script, "sh", dir, gate))
	}
	c.eventually(30*time.Second, "flaky to run jobs", func() bool {
		for _, n := range c.nodes() {
			if n.Name == "flaky" && n.Running > 0 {
				return true
			}
		}
		return false
	})
	flaky.stop(t, syscall.SIGKILL)
	killedAt := time.Now().UnixNano()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The name is free again once the heartbeat has marked the node OFFLINE.
	c.eventually(60*time.Second, "the killed node to be marked OFFLINE", func() bool {
		for _, n := range c.nodes() {
			if n.Name == "flaky" {
				return n.State == "OFFLINE"
			}
		}
		return false
	})
	c.serve("flaky", args...)

	c.ok(append([]string{"wait", "--timeout", "90s"}, ids...)...)
	reran := 0
	for _, id := range ids {
		j := c.show(id)
		if j.Status != "FINISHED" {
			t.Errorf("job %s ended %s", id, j.Status)
		}
		if j.Attempt > 1 {
			reran++
		}
		b, err := os.ReadFile(filepath.Join(dir, id))
		if err != nil {
			t.Fatalf("job %s never ran: %v", id, err)
		}
		if err := runsDoNotOverlap(string(b), killedAt); err != nil {
			t.Errorf("job %s: %v\n%s", id, err, b)
		}
	}
	if reran == 0 {
		t.Error("no job ran again: the kill hit no running job, so this test proved nothing")
	}
	t.Logf("%d of %d jobs ran again after the kill", reran, len(ids))
}

// runsDoNotOverlap checks a job's run log: each run starts after the one
// before ended, where a run with no end was cut off at killedAt.
func runsDoNotOverlap(log string, killedAt int64) error {
	type run struct{ start, end int64 }
	var runs []run
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		kind, at, _ := strings.Cut(line, " ")
		ns, err := strconv.ParseInt(at, 10, 64)
		if err != nil {
			return fmt.Errorf("bad line %q", line)
		}
		switch kind {
		case "start":
			runs = append(runs, run{start: ns, end: killedAt})
		case "end":
			if len(runs) == 0 {
				return fmt.Errorf("an end before any start")
			}
			runs[len(runs)-1].end = ns
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].start < runs[j].start })
	for i := 1; i < len(runs); i++ {
		if runs[i].start < runs[i-1].end {
			return fmt.Errorf("run %d started before run %d ended", i+1, i)
		}
	}
	return nil
}
