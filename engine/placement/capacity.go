package placement

import "fmt"

// loadEpsilon absorbs float rounding when loads that add up exactly to a
// node's max load on paper (0.1 + 0.2 on a node of 0.3) are compared.
const loadEpsilon = 1e-9

// exceedsMaxLoad reports whether a job's load alone is more than a node's
// max load: the job is oversized for that node.
func exceedsMaxLoad(jobLoad, maxLoad float64) bool { return jobLoad > maxLoad+loadEpsilon }

// idle reports whether a node carries no load: the only state in which it
// may start an oversized job.
func idle(load float64) bool { return load <= loadEpsilon }

// roomCause checks whether a node carrying load in running jobs can start
// one more job of jobLoad now. An oversized job needs the node idle, so it
// runs alone; any other job must fit beside what runs. maxJobs 0 means no
// limit. Filter and Accept share it so the dispatcher and the node agree on
// what "busy" means; roomReason words the answer, only when someone reads it.
func roomCause(load, jobLoad, maxLoad float64, running, maxJobs int) Cause {
	if exceedsMaxLoad(jobLoad, maxLoad) {
		if !idle(load) {
			return CauseBusy
		}
	} else if load+jobLoad > maxLoad+loadEpsilon {
		return CauseBusy
	}
	if maxJobs > 0 && running >= maxJobs {
		return CauseMaxJobs
	}
	return CauseNone
}

// roomReason is the operator's sentence for a roomCause.
func roomReason(c Cause, load, jobLoad, maxLoad float64, maxJobs int) string {
	switch {
	case c == CauseMaxJobs:
		return fmt.Sprintf("at max jobs (%d)", maxJobs)
	case exceedsMaxLoad(jobLoad, maxLoad):
		return fmt.Sprintf("busy: job load %s is above max %s, so it waits until the node is idle (load now %s)",
			num(jobLoad), num(maxLoad), num(load))
	}
	return fmt.Sprintf("busy: load %s + %s exceeds max %s", num(load), num(jobLoad), num(maxLoad))
}
