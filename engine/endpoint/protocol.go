package endpoint

import (
	"net/http"

	"github.com/jobctl/jobctl/engine"
)

// maxOfferBytes bounds a dispatch request body and the answer read back.
const maxOfferBytes = 64 << 10

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
