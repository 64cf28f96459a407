package main_test

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// chaosJobView is the part of a job's JSON the chaos checks read.
type chaosJobView struct {
	ID         int64      `json:"id"`
	Status     string     `json:"status"`
	Node       string     `json:"node"`
	Key        string     `json:"key"`
	Attempt    int        `json:"attempt"`
	StartedAt  *time.Time `json:"started_at"`
	Dispatcher string     `json:"dispatcher"`
	LeaseTerm  int64      `json:"lease_term"`
}

// chaosFindings collects what the checks found wrong, by kind, and what
// they counted along the way.
type chaosFindings struct {
	problems map[string][]string
	order    []string

	Runs            int
	JobsRerun       int
	RedoneAfter     map[string]int // completed runs done again, by the fault that explains it
	Redone          []string       // each of them
	UnobservedTerms int            // terms between observed ones that the sampler never saw
	OutlivedKill    int            // runs that went on well after their node was killed
}

func (f *chaosFindings) add(kind, format string, args ...any) {
	if f.problems == nil {
		f.problems = map[string][]string{}
	}
	if _, seen := f.problems[kind]; !seen {
		f.order = append(f.order, kind)
	}
	f.problems[kind] = append(f.problems[kind], fmt.Sprintf(format, args...))
}

// Problems reports each kind of problem once: how many, and the first few.
func (f *chaosFindings) Problems() []string {
	var out []string
	for _, kind := range f.order {
		all := f.problems[kind]
		shown := all[:min(len(all), 8)]
		out = append(out, fmt.Sprintf("%s (%d):\n\t%s", kind, len(all), strings.Join(shown, "\n\t")))
	}
	return out
}

// checkChaos holds the jobs, their runs as the workers recorded them, the
// driver's faults and the lease terms to the guarantees the cluster gives.
func checkChaos(jobs []chaosJobView, runs []*chaosRun, faults []fault, terms map[int64]*leaseTerm) *chaosFindings {
	f := &chaosFindings{RedoneAfter: map[string]int{}, Runs: len(runs), OutlivedKill: outlivedKill(runs, faults)}
	byJob := map[int64][]*chaosRun{}
	for _, r := range runs {
		byJob[r.Job] = append(byJob[r.Job], r)
	}
	known := map[int64]bool{}
	for _, j := range jobs {
		known[j.ID] = true
		rs := byJob[j.ID]
		sort.Slice(rs, func(a, b int) bool { return rs[a].Start < rs[b].Start })
		if j.Status != "FINISHED" {
			f.add("jobs not FINISHED", "job %d is %s on %q at attempt %d", j.ID, j.Status, j.Node, j.Attempt)
		}
		if len(rs) == 0 {
			f.add("jobs that never ran", "job %d has no run recorded", j.ID)
			continue
		}
		if len(rs) > 1 {
			f.JobsRerun++
		}
		checkResultOfARun(f, j, rs)
		checkRunsOnce(f, j.ID, rs, faults)
		checkNoOverlap(f, j.ID, rs, faults)
	}
	for id := range byJob {
		if !known[id] {
			f.add("runs of unknown jobs", "job %d ran but is not in the listing", id)
		}
	}
	checkKeys(f, jobs, byJob)
	checkTerms(f, jobs, terms)
	return f
}

// checkKeys: the jobs of a key ran one after another in submission order.
// No run of a job found a run of another job of its key alive as it
// started (the workers' key lock), or saw one write after its start; and
// every run of a job started after every run of each earlier job of its
// key had started, which with the lock means after it had ended.
func checkKeys(f *chaosFindings, jobs []chaosJobView, byJob map[int64][]*chaosRun) {
	byKey := map[string][]chaosJobView{}
	for _, j := range jobs {
		if j.Key != "" {
			byKey[j.Key] = append(byKey[j.Key], j)
		}
	}
	const kind = "runs of one key that overlapped or ran out of order"
	for key, js := range byKey {
		sort.Slice(js, func(a, b int) bool { return js[a].ID < js[b].ID })
		var latest, longest *chaosRun // of the earlier jobs: the run that started last, the one seen alive last
		for _, j := range js {
			for _, r := range byJob[j.ID] {
				switch {
				case r.BesideKey:
					f.add(kind, "key %s: job %d %s found a run of another job of its key alive as it started", key, j.ID, r)
				case longest != nil && r.Start < longest.Last:
					f.add(kind, "key %s: job %d %s started while job %d %s was alive", key, j.ID, r, longest.Job, longest)
				case latest != nil && r.Start < latest.Start:
					f.add(kind, "key %s: job %d %s started before job %d %s", key, j.ID, r, latest.Job, latest)
				}
			}
			for _, r := range byJob[j.ID] {
				if latest == nil || r.Start > latest.Start {
					latest = r
				}
				if longest == nil || r.Last > longest.Last {
					longest = r
				}
			}
		}
	}
}

// checkResultOfARun: a FINISHED job's recorded attempt and node are those
// of a run that did its work to the end.
func checkResultOfARun(f *chaosFindings, j chaosJobView, rs []*chaosRun) {
	if j.Status != "FINISHED" {
		return
	}
	for _, r := range rs {
		if r.Attempt == j.Attempt && r.Node == j.Node && r.End != 0 {
			return
		}
	}
	f.add("results no run produced", "job %d is FINISHED at attempt %d on %s, but no run of that attempt there did its work to the end", j.ID, j.Attempt, j.Node)
}

// checkRunsOnce: no attempt ran twice, and a run that did its work is not
// done again, except where its node crashed, froze or was cut off after
// the work ended but before it could record the result (the one case no
// system without two-phase commit with the job itself can avoid).
func checkRunsOnce(f *chaosFindings, job int64, rs []*chaosRun, faults []fault) {
	for i := 0; i+1 < len(rs); i++ {
		e, l := rs[i], rs[i+1]
		if e.End == 0 {
			if e.Attempt == l.Attempt {
				f.add("attempts that ran twice", "job %d: %s; and again: %s", job, e, l)
			}
			continue
		}
		if by := crashBetween(e, l, faults); by != nil {
			f.RedoneAfter[by.Kind]++
			f.Redone = append(f.Redone, fmt.Sprintf("job %d: %s; %s; then: %s", job, e, by, l))
			continue
		}
		kind := "completed runs done again with no crash to explain it (a result dropped, or a run that outlived its node)"
		if e.Attempt == l.Attempt {
			kind = "attempts that ran twice"
		}
		f.add(kind, "job %d: %s; then: %s", job, e, l)
	}
}

// chaosDyingGrace is how long after its node's SIGKILL a run may still end:
// the node's direct child dies with it, a grandchild when the watchdog
// beside the node has seen it die and stopped the tree.
const chaosDyingGrace = time.Second

// settled is when the fault's hold on its node's runs is over: its end,
// and for a kill the dying grace after it, within which the dead node's
// processes may still begin or end.
func (f fault) settled() int64 {
	if f.Kind == faultKillHolder || f.Kind == faultKillWorker {
		return f.End + int64(chaosDyingGrace)
	}
	return f.End
}

// crashBetween is the fault on e's node that explains why the job ran again
// after e ended: it began before l started and lasted until after e ended
// (for a kill, until the node's runs were surely stopped), so the node
// could not record e's result in between. An outage of every node explains
// nothing: no node could have restarted the job meanwhile.
func crashBetween(e, l *chaosRun, faults []fault) *fault {
	for i := range faults {
		fl := &faults[i]
		if fl.ends() && fl.Node != "" && fl.Node == e.Node && fl.settled() >= e.End && fl.Start <= l.Start {
			return fl
		}
	}
	return nil
}

// outlivedKill counts the runs that wrote on more than chaosDyingGrace after
// their node was killed: a job's process tree that did not die with it.
func outlivedKill(runs []*chaosRun, faults []fault) int {
	n := 0
	for _, r := range runs {
		for _, fl := range faults {
			if (fl.Kind == faultKillHolder || fl.Kind == faultKillWorker) && fl.Node == r.Node &&
				r.Start < fl.Start && r.Last > fl.Start+int64(chaosDyingGrace) {
				n++
				break
			}
		}
	}
	return n
}

// explainedEnd reports whether a run ended, or a fault hit its node after
// it started: the kill, or the freeze or cut after which its node had to
// stop it. A process the node forked just before its kill may write its
// first line a little after it: within chaosDyingGrace, it began before.
// So may one its fence stopped as it started, after the node logged that.
func explainedEnd(r *chaosRun, faults []fault) bool {
	if r.End != 0 {
		return true
	}
	for _, fl := range faults {
		held := fl.settled()
		if fl.Kind == faultLapse {
			held += int64(chaosDyingGrace)
		}
		if fl.hits(r.Node) && held >= r.Start && fl.ends() {
			return true
		}
	}
	return false
}

// ends reports whether the fault may rightly end a node's runs or cost it
// a result: a pause, shorter than the node lease, may not.
func (f fault) ends() bool { return f.Kind != faultPause }

// checkNoOverlap: no two runs of a job were alive at once, grandchildren
// included. A run that found another run of its job alive as it started
// (the workers' job lock) overlapped it; so did one that started before
// an earlier run's last record. The lock sees what records cannot: a run
// killed in silence, whose time of death no record tells.
func checkNoOverlap(f *chaosFindings, job int64, rs []*chaosRun, faults []fault) {
	const kind = "runs of one job that overlapped"
	var longest *chaosRun // of the runs so far, the one seen alive last
	for _, r := range rs {
		switch {
		case r.BesideJob:
			f.add(kind, "job %d: %s found another run of its job alive as it started", job, r)
		case longest != nil && r.Start < longest.Last:
			f.add(kind, "job %d: %s; overlapped by: %s", job, longest, r)
		}
		if !explainedEnd(r, faults) {
			f.add("runs that never ended though no fault hit their node", "job %d: %s", job, r)
		}
		if longest == nil || r.Last > longest.Last {
			longest = r
		}
	}
}

// checkTerms: each job's start names the dispatcher and lease term it was
// dispatched under; that term was owned by that dispatcher, acquired before
// the start, and not yet replaced by the next one.
func checkTerms(f *chaosFindings, jobs []chaosJobView, terms map[int64]*leaseTerm) {
	var order []int64
	for t, lt := range terms {
		order = append(order, t)
		if lt.Conflict != "" {
			f.add("lease terms seen with two owners or acquisitions", "%s", lt.Conflict)
		}
	}
	sort.Slice(order, func(a, b int) bool { return order[a] < order[b] })
	for i := 1; i < len(order); i++ {
		if gap := order[i] - order[i-1] - 1; gap > 0 {
			f.UnobservedTerms += int(gap)
		}
	}
	next := func(term int64) *leaseTerm {
		k := sort.Search(len(order), func(k int) bool { return order[k] > term })
		if k == len(order) {
			return nil
		}
		return terms[order[k]]
	}
	for _, j := range jobs {
		switch {
		case j.StartedAt == nil:
			f.add("jobs without started_at", "job %d (%s) has no started_at", j.ID, j.Status)
			continue
		case j.Dispatcher == "" && j.LeaseTerm == 0:
			f.add("jobs whose JSON has no dispatcher and no lease_term (fields missing)", "job %d: show -o json gives no dispatcher and no lease_term", j.ID)
			continue
		case j.Dispatcher == "":
			f.add("jobs whose JSON has no dispatcher (field missing)", "job %d: lease_term %d but no dispatcher", j.ID, j.LeaseTerm)
			continue
		case j.LeaseTerm == 0:
			f.add("jobs whose JSON has no lease_term (field missing)", "job %d: dispatcher %s but no lease_term", j.ID, j.Dispatcher)
			continue
		}
		started := *j.StartedAt
		t := terms[j.LeaseTerm]
		switch {
		case t == nil:
			f.add("jobs started under a term the lease never showed", "job %d: dispatcher %s, term %d", j.ID, j.Dispatcher, j.LeaseTerm)
		case t.Owner != j.Dispatcher:
			f.add("jobs whose dispatcher did not own their term", "job %d: dispatcher %s, but term %d was %s's", j.ID, j.Dispatcher, t.Term, t.Owner)
		case started.Before(t.AcquiredAt):
			f.add("jobs started before their term began", "job %d started %s, term %d was acquired %s", j.ID,
				started.Format(time.RFC3339Nano), t.Term, t.AcquiredAt.Format(time.RFC3339Nano))
		default:
			if n := next(j.LeaseTerm); n != nil && n.AcquiredAt.Before(started) {
				f.add("jobs started after their term was replaced", "job %d started %s under term %d of %s, but term %d of %s began %s", j.ID,
					started.Format(time.RFC3339Nano), t.Term, t.Owner, n.Term, n.Owner, n.AcquiredAt.Format(time.RFC3339Nano))
			}
		}
	}
}
