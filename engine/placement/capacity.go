package placement

import "fmt"

// loadEpsilon absorbs float rounding when loads that add up exactly to a
// node's max load on paper (0.1 + 0.2 on a node of 0.3) are compared.
const loadEpsilon = 1e-9

// exceedsMaxLoad reports whether a job's load alone is more than a node's
// max load: the job is oversized for that node.
func exceedsMaxLoad(jobLoad, maxLoad float64) bool { return jobLoad > maxLoad+loadEpsilon }

// roomFor checks whether a node carrying load in running jobs can start one
// more job of jobLoad now. An oversized job needs the node idle, so it runs
// alone; any other job must fit beside what runs. maxJobs 0 means no limit.
// Filter and Accept share it so the dispatcher and the node agree, with the
// same words, on what "busy" means.
func roomFor(load, jobLoad, maxLoad float64, running, maxJobs int) (Cause, string) {
	if exceedsMaxLoad(jobLoad, maxLoad) {
		if load > loadEpsilon {
			return CauseBusy, fmt.Sprintf("busy: job load %s is above max %s, so it waits until the node is idle (load now %s)",
				num(jobLoad), num(maxLoad), num(load))
		}
	} else if load+jobLoad > maxLoad+loadEpsilon {
		return CauseBusy, fmt.Sprintf("busy: load %s + %s exceeds max %s", num(load), num(jobLoad), num(maxLoad))
	}
	if maxJobs > 0 && running >= maxJobs {
		return CauseMaxJobs, fmt.Sprintf("at max jobs (%d)", maxJobs)
	}
	return CauseNone, ""
}
