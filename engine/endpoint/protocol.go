package endpoint

import (
	"net/http"

	"github.com/jobctl/jobctl/engine"
)

// maxOfferBytes bounds a dispatch request body and the answer read back.
const maxOfferBytes = 64 << 10

// MaxBatchOffers bounds the offers of one POST /v1/dispatch/batch; the
// client splits a larger batch into requests of at most this many.
const MaxBatchOffers = 10_000

// batchOfferBytes is the room one offer, or its verdict, may take in a
// batch: an offer is about a hundred bytes, a verdict's reason a line.
const batchOfferBytes = 1 << 10

// maxBatchBytes bounds a batch request body and the answer read back.
const maxBatchBytes = MaxBatchOffers * batchOfferBytes

// batchRequest is the body of POST /v1/dispatch/batch.
type batchRequest struct {
	Offers []engine.DispatchOffer `json:"offers"`
}

// batchAnswer is its answer: a verdict per offer, in the order of the offers.
type batchAnswer struct {
	Results []batchResult `json:"results"`
}

type batchResult struct {
	Verdict string `json:"verdict"` // OfferVerdict.String()
	Reason  string `json:"reason,omitempty"`
}

// answerVerdicts are the verdicts a node answers with; OfferError is the
// client's own, for no answer or an unexpected one.
var answerVerdicts = []engine.OfferVerdict{engine.OfferAccepted, engine.OfferDeclined, engine.OfferRefused,
	engine.OfferGone, engine.OfferUnknownJob}

// parseVerdict reads back a verdict's name.
func parseVerdict(name string) (engine.OfferVerdict, bool) {
	for _, v := range answerVerdicts {
		if v.String() == name {
			return v, true
		}
	}
	return engine.OfferError, false
}

// validOffer holds for an offer a node can judge at all.
func validOffer(o engine.DispatchOffer) bool {
	return o.JobID > 0 && o.Attempt >= 0 && o.Version >= 0 && o.Type != "" && o.Load >= 0 && engine.ValidOfferStatus(o.Status)
}

// statusOf is the HTTP status answering a verdict; verdictOf reads it back.
func statusOf(v engine.OfferVerdict) int {
	switch v {
	case engine.OfferAccepted:
		return http.StatusNoContent
	case engine.OfferRefused:
		return http.StatusPreconditionFailed
	case engine.OfferGone:
		return http.StatusConflict
	case engine.OfferUnknownJob:
		return http.StatusNotFound
	}
	return http.StatusServiceUnavailable
}

// verdictOf is the verdict an HTTP status stands for; any status the
// endpoint does not answer with is an error, which dispatchers treat as a
// decline.
func verdictOf(status int) engine.OfferVerdict {
	switch status {
	case http.StatusNoContent:
		return engine.OfferAccepted
	case http.StatusServiceUnavailable:
		return engine.OfferDeclined
	case http.StatusPreconditionFailed:
		return engine.OfferRefused
	case http.StatusConflict:
		return engine.OfferGone
	case http.StatusNotFound:
		return engine.OfferUnknownJob
	}
	return engine.OfferError
}
