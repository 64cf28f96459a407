package engine

// RecoverUpdate takes a job away from a node that is gone (silent past its
// node lease, or restarted): its runs have stopped, so the job runs again,
// except that a job being cancelled simply ends CANCELLED. The attempt
// number is left as it is, so any late result of the lost run is fenced off.
//
// A job that runs again leaves its node; one that ends CANCELLED keeps it,
// as a job its node cancelled does: an ended job holds no load, and its
// row names the node its final attempt ran on, which is where the SQL
// store keeps that attempt (migration 016).
func RecoverUpdate(j *Job, why string) JobUpdate {
	u := JobUpdate{ID: j.ID, From: j.Status, Version: j.Version, To: StatusRestart, Node: Ptr(""), Message: Ptr(why)}
	if j.Status == StatusCancelling {
		u.To, u.Node, u.MarkFinished, u.Message = StatusCancelled, nil, true, Ptr("cancelled; "+why)
	}
	return u
}
