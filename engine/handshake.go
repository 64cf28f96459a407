package engine

import "fmt"

// DispatchOffer is what the dispatcher sends a node for one job: the body of
// POST /v1/dispatch. Status and Version are the job's as the dispatcher
// read it; the node starts the job only if it still has them, so the start
// is the claim: of two offers of one job (a dispatcher retrying after a lost
// answer, or two dispatchers across a failover) at most one starts it.
type DispatchOffer struct {
	JobID   int64   `json:"job_id"`
	Attempt int     `json:"attempt"` // attempts made so far; the node runs Attempt+1
	Version int64   `json:"version"`
	Status  Status  `json:"status,omitempty"` // QUEUED or RESTART
	Type    string  `json:"type"`
	Load    float64 `json:"load"`
	// Dispatcher and LeaseTerm are the lease term the offer is made under:
	// the node starts the job only while that term is current. Empty from
	// a dispatcher that holds no term (a simulation, a test).
	Dispatcher string `json:"dispatcher,omitempty"`
	LeaseTerm  int64  `json:"lease_term,omitempty"`
}

// OfferOf is the offer of a job as the dispatcher read it, under term.
func OfferOf(j *Job, term LeaseTerm) DispatchOffer {
	return DispatchOffer{JobID: j.ID, Attempt: j.Attempt, Version: j.Version, Status: j.Status, Type: j.Type, Load: j.Load,
		Dispatcher: term.Owner, LeaseTerm: term.Term}
}

// Term is the lease term the offer was made under.
func (o DispatchOffer) Term() LeaseTerm { return LeaseTerm{Owner: o.Dispatcher, Term: o.LeaseTerm} }

// ValidOfferStatus reports whether a node can start a job offered in st:
// QUEUED or RESTART. A dispatcher of an older release offered jobs it had
// marked DISPATCHING (or sent no status for them); such an offer is
// malformed now and refused as a bad request, so the old dispatcher's
// round puts the job back and a current holder offers it again.
func ValidOfferStatus(st Status) bool { return st.Dispatchable() }

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
// node and the simulator build their updates with these.

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

// StartOfferUpdate is QueuedStartUpdate for the job an offer to node
// names, without reading it first: a node starts a whole batch of offers
// in one store call. The guard is the offer's status and version; the job
// becomes RUNNING on node, a claim and a start in one write.
//
// An offer made under a lease term starts the job only while that term is
// current (JobUpdate.StartedUnder).
func StartOfferUpdate(o DispatchOffer, node string) JobUpdate {
	return NewOfferStarts(node).Update(o)
}

// OfferStarts makes the StartOfferUpdate of each offer of a batch a node
// takes. Its updates share the node, the empty message and, while the
// offers come under one lease term, that term, which each StartOfferUpdate
// of its own makes anew: three allocations a job, for a node starting
// thousands of jobs a second. No store writes through an update's
// pointers. One goroutine makes a batch's starts.
type OfferStarts struct {
	node, message *string
	term          *LeaseTerm
}

// NewOfferStarts makes the starts of offers to node.
func NewOfferStarts(node string) *OfferStarts {
	return &OfferStarts{node: Ptr(node), message: Ptr("")}
}

// Update is StartOfferUpdate(o, node).
func (s *OfferStarts) Update(o DispatchOffer) JobUpdate {
	u := startUpdate(guarded(&Job{ID: o.JobID, Status: o.Status, Version: o.Version}), s.node, s.message)
	if t := o.Term(); t.Held() {
		if s.term == nil || *s.term != t {
			s.term = &t
		}
		u.StartedUnder = s.term
	}
	return u
}

// QueuedStartUpdate is a node starting a dispatchable job it accepted: the
// node's books decided before any claim, so the start is the claim,
// guarded by the status and version the round read (QUEUED or RESTART).
// The job becomes RUNNING on node with its attempt number moved on, which
// fences off any result of an earlier run.
func QueuedStartUpdate(j *Job, node string) JobUpdate {
	return startUpdate(guarded(j), Ptr(node), Ptr(""))
}

// startUpdate makes u the start of its job on node, its last message
// cleared (message points to "").
func startUpdate(u JobUpdate, node, message *string) JobUpdate {
	u.To, u.Node, u.IncrementAttempt, u.MarkStarted, u.Message = StatusRunning, node, true, true, message
	return u
}
