package engine

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
