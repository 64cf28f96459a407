package engine

// RecoverUpdate takes a job away from a node that is gone (silent past its
// node lease, or restarted): its runs have stopped, so the job runs again,
// except that a job being cancelled simply ends CANCELLED. The attempt
// number is left as it is, so any late result of the lost run is fenced off.
func RecoverUpdate(j *Job, why string) JobUpdate {
	u := JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: StatusRestart, Node: Ptr(""), Message: Ptr(why)}
	if j.Status == StatusCancelling {
		u.To, u.MarkFinished, u.Message = StatusCancelled, true, Ptr("cancelled; "+why)
	}
	return u
}
