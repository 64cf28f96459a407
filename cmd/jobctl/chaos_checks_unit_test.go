package main_test

import (
	"strings"
	"testing"
	"time"
)

// The chaos checks catch what they are there to catch: each case breaks
// one guarantee, and only that one is reported.
func TestChaosChecksFindWhatBreaksTheGuarantees(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ns := func(ms int) int64 { return base.Add(time.Duration(ms) * time.Millisecond).UnixNano() }
	at := func(ms int) *time.Time { v := base.Add(time.Duration(ms) * time.Millisecond); return &v }
	kill := fault{Kind: faultKillWorker, Node: "a", Start: ns(1000), End: ns(1000)}
	terms := map[int64]*leaseTerm{
		1: {Term: 1, Owner: "a", AcquiredAt: base},
		2: {Term: 2, Owner: "b", AcquiredAt: base.Add(5 * time.Second)},
	}
	finished := func(node string, attempt int, started int) chaosJobView {
		return chaosJobView{ID: 1, Status: "FINISHED", Node: node, Attempt: attempt, StartedAt: at(started), Dispatcher: "b", LeaseTerm: 2}
	}
	killed := &chaosRun{Job: 1, Attempt: 1, Node: "a", PID: 10, Start: ns(500), Last: ns(900)}
	rerun := &chaosRun{Job: 1, Attempt: 2, Node: "b", PID: 20, Start: ns(6000), Last: ns(6500), End: ns(6500)}
	tests := []struct {
		name   string
		job    chaosJobView
		runs   []*chaosRun
		faults []fault
		want   string // the one kind of problem expected; "" for none
	}{
		{name: "a run killed with its node, run again later", job: finished("b", 2, 6000),
			runs: []*chaosRun{killed, rerun}, faults: []fault{kill}},
		{name: "a grandchild that outlived its node", job: finished("b", 2, 6000),
			runs:   []*chaosRun{{Job: 1, Attempt: 1, Node: "a", PID: 10, Start: ns(500), Last: ns(6200)}, rerun},
			faults: []fault{kill}, want: "overlapped"},
		{name: "a run killed in silence, found alive by the next", job: finished("b", 2, 6000),
			runs:   []*chaosRun{killed, {Job: 1, Attempt: 2, Node: "b", PID: 20, Start: ns(6000), Last: ns(6500), End: ns(6500), BesideJob: true}},
			faults: []fault{kill}, want: "overlapped"},
		{name: "a run its own node stopped when its liveness lapsed", job: finished("b", 2, 6000),
			runs: []*chaosRun{killed, rerun}, faults: []fault{{Kind: faultLapse, Node: "a", Start: ns(950), End: ns(950)}}},
		{name: "a run its fence stopped as it started, seen first just after", job: finished("b", 2, 6000),
			runs:   []*chaosRun{{Job: 1, Attempt: 1, Node: "a", PID: 10, Start: ns(1005), Last: ns(1005)}, rerun},
			faults: []fault{{Kind: faultLapse, Node: "a", Start: ns(950), End: ns(1000)}}},
		{name: "a run that began well after its node's lapse and never ended", job: finished("b", 2, 6000),
			runs:   []*chaosRun{{Job: 1, Attempt: 1, Node: "a", PID: 10, Start: ns(3000), Last: ns(3100)}, rerun},
			faults: []fault{{Kind: faultLapse, Node: "a", Start: ns(950), End: ns(1000)}}, want: "never ended"},
		{name: "a killed run with no fault to end it", job: finished("b", 2, 6000),
			runs: []*chaosRun{killed, rerun}, want: "never ended"},
		{name: "a run its node forked as it was killed, seen first just after", job: finished("b", 2, 6000),
			runs: []*chaosRun{{Job: 1, Attempt: 1, Node: "a", PID: 10, Start: ns(1005), Last: ns(1005)}, rerun}, faults: []fault{kill}},
		{name: "a run that began well after its node's kill and never ended", job: finished("b", 2, 6000),
			runs: []*chaosRun{{Job: 1, Attempt: 1, Node: "a", PID: 10, Start: ns(3000), Last: ns(3100)}, rerun}, faults: []fault{kill}, want: "never ended"},
		{name: "one attempt started twice", job: finished("b", 2, 6000),
			runs:   []*chaosRun{{Job: 1, Attempt: 2, Node: "a", PID: 10, Start: ns(500), Last: ns(900)}, rerun},
			faults: []fault{kill}, want: "attempts that ran twice"},
		{name: "a completed run done again", job: finished("b", 2, 6000),
			runs: []*chaosRun{{Job: 1, Attempt: 1, Node: "a", PID: 10, Start: ns(500), Last: ns(800), End: ns(800)}, rerun},
			want: "a result dropped"},
		{name: "a run that ended well after its node was killed, done again", job: finished("b", 2, 6000),
			runs:   []*chaosRun{{Job: 1, Attempt: 1, Node: "a", PID: 10, Start: ns(500), Last: ns(2500), End: ns(2500)}, rerun},
			faults: []fault{{Kind: faultKillWorker, Node: "a", Start: ns(700), End: ns(700)}}, want: "outlived its node"},
		{name: "a completed run done again after its node crashed", job: finished("b", 2, 6000),
			runs:   []*chaosRun{{Job: 1, Attempt: 1, Node: "a", PID: 10, Start: ns(500), Last: ns(800), End: ns(800)}, rerun},
			faults: []fault{kill}},
		{name: "a completed run done again after every node lost the database", job: finished("b", 2, 6000),
			runs:   []*chaosRun{{Job: 1, Attempt: 1, Node: "a", PID: 10, Start: ns(500), Last: ns(800), End: ns(800)}, rerun},
			faults: []fault{{Kind: faultCutAll, Start: ns(700), End: ns(4000)}}, want: "a result dropped"},
		{name: "a completed run done again after a pause shorter than the node lease", job: finished("b", 2, 6000),
			runs:   []*chaosRun{{Job: 1, Attempt: 1, Node: "a", PID: 10, Start: ns(500), Last: ns(800), End: ns(800)}, rerun},
			faults: []fault{{Kind: faultPause, Node: "a", Start: ns(700), End: ns(1700)}}, want: "a result dropped"},
		{name: "a run stopped by a pause shorter than the node lease", job: finished("b", 2, 6000),
			runs: []*chaosRun{killed, rerun}, faults: []fault{{Kind: faultPause, Node: "a", Start: ns(700), End: ns(1700)}}, want: "never ended"},
		{name: "a result of a run that never did its work", job: finished("b", 2, 6000),
			runs:   []*chaosRun{{Job: 1, Attempt: 2, Node: "b", PID: 20, Start: ns(6000), Last: ns(6100)}},
			faults: []fault{{Kind: faultStop, Node: "b", Start: ns(6050), End: ns(9000)}}, want: "no run produced"},
		{name: "no dispatcher or term recorded",
			job:  chaosJobView{ID: 1, Status: "FINISHED", Node: "b", Attempt: 2, StartedAt: at(6000)},
			runs: []*chaosRun{rerun}, want: "fields missing"},
		{name: "a dispatcher that did not own the term",
			job:  chaosJobView{ID: 1, Status: "FINISHED", Node: "b", Attempt: 2, StartedAt: at(6000), Dispatcher: "a", LeaseTerm: 2},
			runs: []*chaosRun{rerun}, want: "did not own"},
		{name: "a start under a term already replaced",
			job:  chaosJobView{ID: 1, Status: "FINISHED", Node: "b", Attempt: 2, StartedAt: at(6000), Dispatcher: "a", LeaseTerm: 1},
			runs: []*chaosRun{rerun}, want: "was replaced"},
		{name: "a job left running", job: chaosJobView{ID: 1, Status: "RUNNING", Node: "b", Attempt: 2, StartedAt: at(6000), Dispatcher: "b", LeaseTerm: 2},
			runs: []*chaosRun{rerun}, want: "not FINISHED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := checkChaos([]chaosJobView{tt.job}, tt.runs, tt.faults, terms)
			got := f.Problems()
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("want no problem, got %q", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Errorf("want one problem about %q, got %q", tt.want, got)
			}
		})
	}
}

// The key check finds a job that ran beside, or before, an earlier job of
// its key, and nothing when they ran one after the other.
func TestChaosKeyCheck(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ns := func(ms int) int64 { return base.Add(time.Duration(ms) * time.Millisecond).UnixNano() }
	job := func(id int64, key string) chaosJobView {
		at := base.Add(time.Duration(id) * time.Second)
		return chaosJobView{ID: id, Status: "FINISHED", Node: "a", Key: key, Attempt: 1, StartedAt: &at}
	}
	run := func(id int64, start, end int) *chaosRun {
		return &chaosRun{Job: id, Attempt: 1, Node: "a", PID: int(id), Start: ns(start), Last: ns(end), End: ns(end)}
	}
	for _, tt := range []struct {
		name string
		jobs []chaosJobView
		runs []*chaosRun
		want bool
	}{
		{"one after the other", []chaosJobView{job(1, "k"), job(2, "k")}, []*chaosRun{run(1, 0, 100), run(2, 150, 200)}, false},
		{"two keys side by side", []chaosJobView{job(1, "k"), job(2, "j")}, []*chaosRun{run(1, 0, 100), run(2, 50, 200)}, false},
		{"jobs without a key side by side", []chaosJobView{job(1, ""), job(2, "")}, []*chaosRun{run(1, 0, 100), run(2, 50, 200)}, false},
		{"overlapped", []chaosJobView{job(1, "k"), job(2, "k")}, []*chaosRun{run(1, 0, 100), run(2, 50, 200)}, true},
		{"found beside another of its key", []chaosJobView{job(1, "k"), job(2, "k")}, []*chaosRun{run(1, 0, 100), {Job: 2, Attempt: 1, Node: "a", PID: 2, Start: ns(150), Last: ns(200), End: ns(200), BesideKey: true}}, true},
		{"out of order", []chaosJobView{job(1, "k"), job(2, "k")}, []*chaosRun{run(1, 300, 400), run(2, 0, 100)}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &chaosFindings{RedoneAfter: map[string]int{}}
			byJob := map[int64][]*chaosRun{}
			for _, r := range tt.runs {
				byJob[r.Job] = append(byJob[r.Job], r)
			}
			checkKeys(f, tt.jobs, byJob)
			got := f.Problems()
			if tt.want != (len(got) == 1 && strings.Contains(got[0], "one key")) || len(got) > 1 {
				t.Errorf("want a key problem: %v; got %q", tt.want, got)
			}
		})
	}
}

// The lapse a node logs is read as such, with its time.
func TestChaosReadsALapseFromANodesLog(t *testing.T) {
	t.Parallel()
	line := `time=2026-12-02T09:00:57.778Z level=WARN msg="could not record liveness within the node lease: stopped this node's jobs, and takes no new ones until it records it again" node=n1 node_lease=3s jobs_stopped=2 cause="no liveness recorded in time"`
	m := lapseLine.FindStringSubmatch(line)
	if m == nil || m[1] != "2026-12-02T09:00:57.778Z" {
		t.Fatalf("lapse line read as %q", m)
	}
	if lapseLine.MatchString(`time=2026-12-02T09:00:57.778Z level=INFO msg="recorded liveness again; taking work again" node=n1`) {
		t.Error("the end of a lapse read as a lapse")
	}
}

// A lapse lasts until the node records its liveness again, or until its
// log ends: a run taken before the lapse and started during it is one the
// lapse stopped. A run the node stops as it starts, for the lapse, after
// it recorded its liveness again, extends it to then.
func TestChaosLapseLastsUntilLivenessIsRecordedAgain(t *testing.T) {
	t.Parallel()
	at := func(s string) int64 {
		ts, err := time.Parse(time.RFC3339Nano, "2026-12-02T09:00:"+s+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return ts.UnixNano()
	}
	log := `time=2026-12-02T09:00:50.000Z level=INFO msg="node online" node=n1
time=2026-12-02T09:00:57.778Z level=WARN msg="could not record liveness within the node lease: stopped this node's jobs" node=n1
time=2026-12-02T09:00:57.800Z level=DEBUG msg="stopping a run taken before the lapse" node=n1
time=2026-12-02T09:00:58.100Z level=INFO msg="recorded liveness again; taking work again" node=n1
time=2026-12-02T09:00:58.400Z level=INFO msg="job ended" node=n1
time=2026-12-02T09:00:58.600Z level=WARN msg="stopped a run as it started: liveness lapsed since its job was taken" node=n1 job=7 attempt=1
time=2026-12-02T09:00:59.000Z level=INFO msg="job ended" node=n1
time=2026-12-02T09:01:00.000Z level=WARN msg="could not record liveness within the node lease: stopped this node's jobs" node=n1
`
	got := lapsesIn("n1", log+`time=2026-12-02T09:01:00.500Z level=INFO msg="shutting down" node=n1
`)
	end := at("58.600")
	if len(got) != 2 || got[0].Start != at("57.778") || got[0].End != end || got[0].Node != "n1" || got[0].Kind != faultLapse {
		t.Fatalf("lapses %+v; want the first from 57.778 to 58.600, when the node stopped a run taken before it", got)
	}
	if got[1].End-got[1].Start != int64(500*time.Millisecond) {
		t.Errorf("the last lapse %+v; want it to last until the log ends, 0.5s on", got[1])
	}
}
