package endpoint

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobctl/jobctl/engine"
)

const testToken = "secret-token"

var testOffer = engine.DispatchOffer{JobID: 7, Attempt: 1, Version: 3, Status: engine.StatusQueued, Type: "noop", Load: 1.5}

// scriptedAcceptor answers offers with a fixed result and keeps the
// offers it got.
type scriptedAcceptor struct {
	mu        sync.Mutex
	answer    engine.OfferResult
	accepting bool
	offers    []engine.DispatchOffer
	byJob     map[int64]engine.OfferResult // a batch's answers for these jobs
}

func (a *scriptedAcceptor) Accept(_ context.Context, o engine.DispatchOffer) engine.OfferResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.offers = append(a.offers, o)
	return a.answer
}

// AcceptBatch answers each offer as Accept does, and keeps them.
func (a *scriptedAcceptor) AcceptBatch(ctx context.Context, offers []engine.DispatchOffer) []engine.OfferResult {
	out := make([]engine.OfferResult, len(offers))
	for i, o := range offers {
		out[i] = a.Accept(ctx, o)
		if r, ok := a.byJob[o.JobID]; ok {
			out[i] = r
		}
	}
	return out
}

func (a *scriptedAcceptor) Accepting() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.accepting
}

func (a *scriptedAcceptor) Health() Health {
	return Health{Node: "n1", Accepting: a.Accepting(), Load: 1.5, Running: 1}
}

func (a *scriptedAcceptor) received() []engine.DispatchOffer {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]engine.DispatchOffer(nil), a.offers...)
}

func (a *scriptedAcceptor) set(answer engine.OfferResult, accepting bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.answer, a.accepting = answer, accepting
}

// serve runs an endpoint on loopback and returns its URL.
func serve(t *testing.T, cfg HandlerConfig) string {
	t.Helper()
	srv := httptest.NewServer(NewHandler(cfg))
	t.Cleanup(srv.Close)
	return srv.URL
}

func testMetrics() prometheus.Gatherer {
	r := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "jobctl_test_gauge", Help: "A test series."})
	r.MustRegister(g)
	return r
}

func TestDispatchRequestsNeedTheClusterToken(t *testing.T) {
	t.Parallel()
	a := &scriptedAcceptor{accepting: true}
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: a})
	body := `{"job_id":1,"attempt":0,"version":1,"type":"noop","load":1}`
	for _, auth := range []string{"", "Bearer wrong", "Bearer ", testToken, "Basic " + testToken, "Bearer " + testToken + "x"} {
		for _, method := range []string{http.MethodPost, http.MethodHead} {
			req, _ := http.NewRequest(method, url+"/v1/dispatch", strings.NewReader(body))
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s with Authorization %q: %d, want 401", method, auth, resp.StatusCode)
			}
		}
	}
	if got := a.received(); len(got) != 0 {
		t.Errorf("unauthenticated offers reached the node: %v", got)
	}
	target := &engine.Node{URL: url}
	if err := NewClient(testToken, 5*time.Second, nil).Heartbeat(context.Background(), target); err != nil {
		t.Errorf("heartbeat with the token: %v", err)
	}
	if err := NewClient("wrong", 5*time.Second, nil).Heartbeat(context.Background(), target); err == nil {
		t.Error("heartbeat with a wrong token succeeded")
	}
	if res := NewClient("wrong", 5*time.Second, nil).Offer(context.Background(), target, testOffer); res.Verdict != engine.OfferError {
		t.Errorf("offer with a wrong token: %+v, want an error", res)
	}
}

func TestAnEndpointWithoutATokenLetsNoOneIn(t *testing.T) {
	t.Parallel()
	url := serve(t, HandlerConfig{Acceptor: &scriptedAcceptor{accepting: true}})
	if err := NewClient("", 5*time.Second, nil).Heartbeat(context.Background(), &engine.Node{URL: url}); err == nil {
		t.Error("an empty token matched an endpoint that has none yet")
	}
}

func TestVerdictsTravelOverHTTP(t *testing.T) {
	t.Parallel()
	a := &scriptedAcceptor{accepting: true}
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: a})
	client := NewClient(testToken, 5*time.Second, nil)
	for _, want := range []engine.OfferResult{
		{Verdict: engine.OfferAccepted},
		{Verdict: engine.OfferDeclined, Reason: "busy"},
		{Verdict: engine.OfferDeclined, Reason: "not-ready: in maintenance"},
		{Verdict: engine.OfferRefused, Reason: `type "x" not offered by node n1`},
		{Verdict: engine.OfferGone, Reason: "job moved on"},
		{Verdict: engine.OfferUnknownJob, Reason: "unknown job"},
	} {
		a.set(want, true)
		if got := client.Offer(context.Background(), &engine.Node{URL: url}, testOffer); got != want {
			t.Errorf("node answered %+v; client read %+v", want, got)
		}
	}
	if got := a.received(); len(got) != 6 || got[0] != testOffer {
		t.Errorf("the node got %+v, want six copies of %+v", got, testOffer)
	}
}

func TestBadDispatchRequestsAreRejected(t *testing.T) {
	t.Parallel()
	a := &scriptedAcceptor{accepting: true}
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: a})
	for _, body := range []string{
		``, `{`, `{"job_id":0,"type":"noop"}`, `{"job_id":1}`, `{"job_id":1,"type":"noop","load":-1}`,
		`{"job_id":1,"type":"noop","extra":true}`, `{"job_id":1,"type":"noop","status":"RUNNING"}`,
		`{"job_id":1,"type":"noop","status":"queued"}`, `{"job_id":1,"type":"` + strings.Repeat("x", maxOfferBytes) + `"}`,
		// An older dispatcher's offer of a job it marked DISPATCHING, with
		// that status or none: the state is retired.
		`{"job_id":1,"type":"noop","status":"DISPATCHING"}`, `{"job_id":1,"type":"noop"}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/dispatch", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("body %.40q: %d, want 400", body, resp.StatusCode)
		}
	}
	if got := a.received(); len(got) != 0 {
		t.Errorf("bad requests reached the node: %v", got)
	}
}

func TestHeartbeatsFollowWhetherTheNodeAccepts(t *testing.T) {
	t.Parallel()
	a := &scriptedAcceptor{}
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: a})
	client := NewClient(testToken, 5*time.Second, nil)
	if err := client.Heartbeat(context.Background(), &engine.Node{URL: url}); err == nil {
		t.Error("heartbeat to a node not accepting work succeeded")
	}
	a.set(engine.OfferResult{}, true)
	if err := client.Heartbeat(context.Background(), &engine.Node{URL: url}); err != nil {
		t.Errorf("heartbeat to a node accepting work: %v", err)
	}
}

func TestHealthAndMetricsAreOpenByDefault(t *testing.T) {
	t.Parallel()
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: &scriptedAcceptor{accepting: true}, Metrics: testMetrics()})
	resp, err := http.Get(url + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %v %v", resp, err)
	}
	var h Health
	err = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if err != nil || h != (Health{Node: "n1", Accepting: true, Load: 1.5, Running: 1}) {
		t.Errorf("/healthz = %+v, %v", h, err)
	}
	if body := get(t, url+"/metrics", "", http.StatusOK); !strings.Contains(body, "jobctl_test_gauge") {
		t.Errorf("/metrics lacks the registry's series:\n%.300s", body)
	}
}

func TestMetricsCanAskForTheToken(t *testing.T) {
	t.Parallel()
	url := serve(t, HandlerConfig{Token: testToken, Acceptor: &scriptedAcceptor{}, Metrics: testMetrics(), MetricsAuth: true})
	get(t, url+"/metrics", "", http.StatusUnauthorized)
	get(t, url+"/metrics", "Bearer wrong", http.StatusUnauthorized)
	if body := get(t, url+"/metrics", "Bearer "+testToken, http.StatusOK); !strings.Contains(body, "jobctl_test_gauge") {
		t.Errorf("/metrics with the token lacks the registry's series:\n%.300s", body)
	}
	get(t, url+"/healthz", "", http.StatusOK)
}

func get(t *testing.T, url, auth string, want int) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d", url, resp.StatusCode, want)
	}
	return string(body)
}
