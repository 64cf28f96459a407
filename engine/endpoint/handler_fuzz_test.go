package endpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// A dispatch request body, as one offer or a batch: whatever it holds the
// endpoint never panics, answers 400 to anything but exactly one JSON value
// of valid offers, and hands the node only offers it can judge.
func FuzzDispatchRequest(f *testing.F) {
	one, _ := json.Marshal(testOffer)
	batch, _ := json.Marshal(batchRequest{Offers: []engine.DispatchOffer{testOffer, {JobID: 8, Type: "t", Status: engine.StatusRestart}}})
	for _, body := range []string{
		string(one), string(batch), `{"offers":[]}`, `{"offers":null}`, `null`, `{}`, ``,
		`{"job_id":7,"type":"noop","load":-1}`, `{"job_id":7,"type":"noop","attempt":-1}`,
		`{"job_id":7,"type":"noop","status":"FINISHED"}`, `{"job_id":7,"type":"noop","extra":1}`,
		string(one) + `{"job_id":9,"type":"noop"}`, string(one) + ` x`, `{"job_id":1e400,"type":"t"}`,
		`{"offers":[{"job_id":1,"type":"t"},{"job_id":1,"type":"t"}]}`,
	} {
		f.Add([]byte(body), false)
		f.Add([]byte(body), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, isBatch bool) {
		a := &scriptedAcceptor{answer: engine.OfferResult{Verdict: engine.OfferAccepted}, accepting: true}
		h := NewHandler(HandlerConfig{Token: testToken, Acceptor: a})
		path := "/v1/dispatch"
		if isBatch {
			path += "/batch"
		}
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		got := a.received()
		if rec.Code == http.StatusBadRequest {
			if len(got) != 0 {
				t.Fatalf("%q: refused, yet the node got %d offers", body, len(got))
			}
			return
		}
		if !oneJSONValue(body) {
			t.Fatalf("%q: answered %d to a body that is not one JSON value", body, rec.Code)
		}
		if !isBatch && len(got) != 1 {
			t.Fatalf("%q: answered %d with %d offers handed on", body, rec.Code, len(got))
		}
		seen := map[int64]bool{}
		for _, o := range got {
			if o.JobID <= 0 || o.Type == "" || o.Attempt < 0 || o.Version < 0 || !(o.Load >= 0) || math.IsInf(o.Load, 0) ||
				!engine.ValidOfferStatus(o.Status) || seen[o.JobID] {
				t.Fatalf("%q: the node was handed %+v", body, o)
			}
			seen[o.JobID] = true
		}
	})
}

func oneJSONValue(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	_, err := dec.Token()
	return errors.Is(err, io.EOF)
}
