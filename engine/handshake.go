package engine

import "fmt"

// DispatchOffer is what the dispatcher sends a node for one job: the body of
// POST /v1/dispatch. Version is the job's version after it was marked
// DISPATCHING for that node; the node starts the job only if it still is.
type DispatchOffer struct {
	JobID   int64   `json:"job_id"`
	Attempt int     `json:"attempt"` // attempts made so far; the node runs Attempt+1
	Version int64   `json:"version"`
	Type    string  `json:"type"`
	Load    float64 `json:"load"`
}

// OfferVerdict is a node's answer to an offer.
type OfferVerdict int

// Offer verdicts, each with the HTTP status the endpoint answers with.
const (
	OfferAccepted   OfferVerdict = iota // 204: the node runs it
	OfferDeclined                       // 503: busy or not ready; try the next node
	OfferRefused                        // 412: the job can never run there; it fails
	OfferGone                           // 409: the job moved on meanwhile (cancelled, redispatched)
	OfferUnknownJob                     // 404: no such job
	OfferError                          // no answer, or an unexpected one; treated as a decline
)

func (v OfferVerdict) String() string {
	switch v {
	case OfferAccepted:
		return "accepted"
	case OfferDeclined:
		return "declined"
	case OfferRefused:
		return "refused"
	case OfferGone:
		return "gone"
	case OfferUnknownJob:
		return "unknown-job"
	}
	return "error"
}

// OfferResult is a verdict and the node's reason for it.
type OfferResult struct {
	Verdict OfferVerdict
	Reason  string // "busy", "not-ready", "type \"x\" not offered", …
}

// The transitions of the handshake, each written once: the dispatcher, the
// node, the simulator and the tests build their updates with these.

// DispatchUpdate marks a dispatchable job as being handed to node. A job
// already DISPATCHING (declined by one node) is retargeted to the next.
func DispatchUpdate(j *Job, node string) JobUpdate {
	u := guarded(j)
	u.To, u.Node = StatusDispatching, Ptr(node)
	return u
}

// PutBackUpdate returns a DISPATCHING job that no node took to origin, the
// dispatchable state it was dispatched from.
func PutBackUpdate(j *Job, origin Status) JobUpdate {
	u := guarded(j)
	u.To, u.Node = origin, Ptr("")
	return u
}

// ReclaimUpdate puts back a job left DISPATCHING by an interrupted round
// (a dispatcher that died or lost its lease mid-offer). The version bump
// fences a late acceptance by the node.
func ReclaimUpdate(j *Job) JobUpdate {
	u := guarded(j)
	u.To, u.Node = StatusRestart, Ptr("")
	u.Message = Ptr("dispatch to " + j.Node + " was interrupted")
	return u
}

// RefuseUpdate fails a job a node refused for good (412: type not offered,
// invalid payload): no retry would change the answer. The dispatcher applies
// it to the job it offered; a node that starts a batch of offers without
// reading them first learns of an invalid spec only from the started job,
// and applies it to that.
func RefuseUpdate(j *Job, node, reason string) JobUpdate {
	u := guarded(j)
	u.To, u.MarkFinished = StatusFailed, true
	u.Message = Ptr(fmt.Sprintf("refused by node %s: %s", node, reason))
	return u
}

// StartUpdate is the node starting a job it accepted: RUNNING, with the
// attempt number moved on (it fences off any result of an earlier run).
func StartUpdate(j *Job) JobUpdate {
	u := guarded(j)
	u.To, u.IncrementAttempt, u.MarkStarted, u.Message = StatusRunning, true, true, Ptr("")
	return u
}

// StartOfferUpdate is StartUpdate for the job an offer names, without
// reading it first: a node starts a whole batch of offers in one store call.
// The guard is the offer's version, which the job has only while it is
// DISPATCHING to the node the offer went to.
func StartOfferUpdate(o DispatchOffer) JobUpdate {
	return StartUpdate(&Job{ID: o.JobID, Status: StatusDispatching, Version: o.Version})
}

// LocalStartUpdate is the dispatcher's own node starting a job it accepted
// in-process: the node's books decided before any claim, so the start is
// the claim, guarded by the status and version the round read (QUEUED or
// RESTART, or DISPATCHING when another node declined it first).
func LocalStartUpdate(j *Job, node string) JobUpdate {
	u := StartUpdate(j)
	u.Node = Ptr(node)
	return u
}
