package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// offers are count distinct valid offers, job ids from 1.
func offers(count int) []engine.DispatchOffer {
	out := make([]engine.DispatchOffer, count)
	for i := range out {
		out[i] = engine.DispatchOffer{JobID: int64(i + 1), Version: 2, Status: engine.StatusQueued, Type: "noop", Load: 1}
	}
	return out
}

func TestBatchRequestsNeedTheClusterToken(t *testing.T) {
	t.Parallel()
	a := &scriptedAcceptor{accepting: true}
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: a})
	body := `{"offers":[{"job_id":1,"attempt":0,"version":1,"type":"noop","load":1}]}`
	for _, auth := range []string{"", "Bearer wrong", "Bearer ", testToken, "Bearer " + testToken + "x"} {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/dispatch/batch", strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d, want 401", auth, resp.StatusCode)
		}
	}
	for _, res := range NewClient("wrong", 5*time.Second, nil).OfferBatch(context.Background(), &engine.Node{URL: url}, offers(3)) {
		if res.Verdict != engine.OfferError || !strings.Contains(res.Reason, "HTTP 401") {
			t.Errorf("batch with a wrong token: %+v, want an error naming HTTP 401", res)
		}
	}
	if got := a.received(); len(got) != 0 {
		t.Errorf("unauthenticated offers reached the node: %v", got)
	}
}

// Each offer gets its own verdict, in the order of the offers, whatever mix
// the node answers with.
func TestBatchVerdictsComeBackInOrder(t *testing.T) {
	t.Parallel()
	want := []engine.OfferResult{
		{Verdict: engine.OfferAccepted},
		{Verdict: engine.OfferDeclined, Reason: "busy"},
		{Verdict: engine.OfferAccepted},
		{Verdict: engine.OfferRefused, Reason: `type "x" not offered by node n1`},
		{Verdict: engine.OfferGone, Reason: "job moved on"},
		{Verdict: engine.OfferUnknownJob, Reason: "unknown job"},
		{Verdict: engine.OfferDeclined, Reason: "not-ready: in maintenance"},
	}
	sent := offers(len(want))
	a := &scriptedAcceptor{accepting: true, byJob: map[int64]engine.OfferResult{}}
	for i, o := range sent {
		a.byJob[o.JobID] = want[i]
	}
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: a})
	got := NewClient(testToken, 5*time.Second, nil).OfferBatch(context.Background(), &engine.Node{URL: url}, sent)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("verdicts:\n got %v\nwant %v", got, want)
	}
	if fmt.Sprint(a.received()) != fmt.Sprint(sent) {
		t.Errorf("the node got %v, want %v", a.received(), sent)
	}
}

// The answer on the wire is the contract other implementations rely on.
func TestBatchAnswerNamesVerdicts(t *testing.T) {
	t.Parallel()
	a := &scriptedAcceptor{accepting: true, answer: engine.OfferResult{Verdict: engine.OfferDeclined, Reason: "busy"},
		byJob: map[int64]engine.OfferResult{2: {Verdict: engine.OfferUnknownJob, Reason: "unknown job"}}}
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: a})
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/dispatch/batch", strings.NewReader(
		`{"offers":[{"job_id":1,"version":1,"status":"QUEUED","type":"noop","load":1},{"job_id":2,"version":1,"status":"QUEUED","type":"noop","load":0}]}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string][]map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d, %v", resp.StatusCode, err)
	}
	want := `map[results:[map[reason:busy verdict:declined] map[reason:unknown job verdict:unknown-job]]]`
	if fmt.Sprint(body) != want {
		t.Errorf("answer = %v, want %s", body, want)
	}
}

func TestBadBatchRequestsAreRejected(t *testing.T) {
	t.Parallel()
	a := &scriptedAcceptor{accepting: true}
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: a})
	tooMany, _ := json.Marshal(batchRequest{Offers: offers(MaxBatchOffers + 1)})
	for _, body := range []string{
		``, `{`, `[]`, `{}`, `{"offers":null}`, `{"offers":{}}`, `{"offers":[{"job_id":1,"type":"noop"}],"extra":1}`,
		`{"offers":[{"job_id":0,"type":"noop"}]}`,
		`{"offers":[{"job_id":1,"type":"noop"},{"job_id":2}]}`,
		`{"offers":[{"job_id":1,"type":"noop","load":-1}]}`,
		`{"offers":[{"job_id":1,"type":"noop","extra":true}]}`,
		`{"offers":[{"job_id":1,"type":"noop","status":"FINISHED"}]}`,
		`{"offers":[{"job_id":1,"type":"noop"},{"job_id":1,"type":"noop"}]}`,
		`{"offers":[{"job_id":1,"type":"` + strings.Repeat("x", maxBatchBytes) + `"}]}`,
		string(tooMany),
	} {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/dispatch/batch", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("body %.60q: %d, want 400", body, resp.StatusCode)
		}
	}
	if got := a.received(); len(got) != 0 {
		t.Errorf("bad requests reached the node: %d offers", len(got))
	}
}

func TestAnEmptyBatchIsAnsweredEmpty(t *testing.T) {
	t.Parallel()
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: &scriptedAcceptor{accepting: true}})
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/dispatch/batch", strings.NewReader(`{"offers":[]}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer batchAnswer
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK || len(answer.Results) != 0 {
		t.Errorf("HTTP %d %+v %v, want 200 with no results", resp.StatusCode, answer, err)
	}
}

// A batch larger than one request may carry goes in several, and the
// verdicts still line up with the offers.
func TestALargeBatchIsSplit(t *testing.T) {
	t.Parallel()
	a := &scriptedAcceptor{accepting: true, answer: engine.OfferResult{Verdict: engine.OfferAccepted},
		byJob: map[int64]engine.OfferResult{MaxBatchOffers + 1: {Verdict: engine.OfferDeclined, Reason: "busy"}}}
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: a})
	sent := offers(MaxBatchOffers + 2)
	got := NewClient(testToken, 30*time.Second, nil).OfferBatch(context.Background(), &engine.Node{URL: url}, sent)
	if len(got) != len(sent) {
		t.Fatalf("%d verdicts for %d offers", len(got), len(sent))
	}
	for i, res := range got {
		want := engine.OfferAccepted
		if i == MaxBatchOffers {
			want = engine.OfferDeclined
		}
		if res.Verdict != want {
			t.Errorf("offer %d: %+v, want %v", i, res, want)
		}
	}
	if len(a.received()) != len(sent) {
		t.Errorf("the node got %d offers, want %d", len(a.received()), len(sent))
	}
}

// Answers the client cannot line up with its offers are errors for all of
// them: which jobs the node took cannot be told.
func TestAnswersThatDoNotMatchTheBatchAreErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, answer string }{
		{"too few", `{"results":[{"verdict":"accepted"}]}`},
		{"too many", `{"results":[{"verdict":"accepted"},{"verdict":"accepted"},{"verdict":"accepted"}]}`},
		{"not json", `accepted`},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, tc.answer)
		}))
		got := NewClient(testToken, 5*time.Second, nil).OfferBatch(context.Background(), &engine.Node{URL: srv.URL}, offers(2))
		srv.Close()
		if len(got) != 2 || got[0].Verdict != engine.OfferError || got[1].Verdict != engine.OfferError {
			t.Errorf("%s: %+v, want an error for both offers", tc.name, got)
		}
	}
	// An unknown verdict is an error for its offer only.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"results":[{"verdict":"accepted"},{"verdict":"maybe"}]}`)
	}))
	defer srv.Close()
	got := NewClient(testToken, 5*time.Second, nil).OfferBatch(context.Background(), &engine.Node{URL: srv.URL}, offers(2))
	if got[0].Verdict != engine.OfferAccepted || got[1].Verdict != engine.OfferError {
		t.Errorf("an unknown verdict: %+v, want accepted then an error", got)
	}
}

func TestANodeThatDoesNotAnswerFailsTheWholeBatch(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	got := NewClient(testToken, 5*time.Second, nil).OfferBatch(context.Background(), &engine.Node{URL: url}, offers(3))
	if len(got) != 3 {
		t.Fatalf("%d verdicts for 3 offers", len(got))
	}
	for _, res := range got {
		if res.Verdict != engine.OfferError || res.Reason == "" {
			t.Errorf("offer to a node that is gone: %+v, want an error with its cause", res)
		}
	}
}
