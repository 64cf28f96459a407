package endpoint

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jobctl/jobctl/engine"
)

// Acceptor is the node runtime behind the endpoint.
type Acceptor interface {
	// Accept answers one dispatch offer.
	Accept(ctx context.Context, o engine.DispatchOffer) engine.OfferResult
	// AcceptBatch answers many offers, a verdict each in their order.
	AcceptBatch(ctx context.Context, offers []engine.DispatchOffer) []engine.OfferResult
	// Accepting reports whether the node takes work at all; heartbeats
	// answer with it.
	Accepting() bool
	// Health is what GET /healthz shows.
	Health() Health
}

// Health is a node's answer to GET /healthz.
type Health struct {
	Node      string  `json:"node"`
	Accepting bool    `json:"accepting"`
	Load      float64 `json:"load"`
	Running   int     `json:"running"`
	// Waiting counts the jobs that wait for their children: they are in
	// neither Load nor Running.
	Waiting int `json:"waiting,omitempty"`
}

// HandlerConfig is what the endpoint serves.
type HandlerConfig struct {
	Token    string   // the cluster token dispatch requests must carry
	Acceptor Acceptor // answers offers and heartbeats
	// Metrics is served on GET /metrics; nil serves no metrics.
	Metrics prometheus.Gatherer
	// MetricsAuth puts /metrics behind the cluster token too: the series
	// name job types and nodes, which some clusters keep to themselves.
	MetricsAuth bool
	// Jobs, when set, adds the cluster's jobs per status (jobctl_jobs) to
	// /metrics, counted at each scrape.
	Jobs JobCounter
	// JobAPI, when set, serves the jobs running on the node under
	// /v1/jobs/{id}/, each with its own token (see jobapi.go).
	JobAPI JobAPI
}

// NewHandler serves a node's endpoint: POST and HEAD /v1/dispatch and POST
// /v1/dispatch/batch with the cluster token, GET /healthz open, GET
// /metrics open unless MetricsAuth.
func NewHandler(cfg HandlerConfig) http.Handler {
	h := &handler{token: cfg.Token, acceptor: cfg.Acceptor}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/dispatch", h.authenticated(h.dispatch))
	mux.HandleFunc("POST /v1/dispatch/batch", h.authenticated(h.dispatchBatch))
	mux.HandleFunc("HEAD /v1/dispatch", h.authenticated(h.heartbeat))
	mux.HandleFunc("GET /healthz", h.health)
	if cfg.JobAPI != nil {
		registerJobAPI(mux, cfg.JobAPI)
	}
	if cfg.Metrics != nil {
		gatherer := cfg.Metrics
		if cfg.Jobs != nil {
			jobs := prometheus.NewRegistry()
			jobs.MustRegister(newJobCollector(cfg.Jobs, jobCountTimeout))
			gatherer = prometheus.Gatherers{cfg.Metrics, jobs}
		}
		metrics := promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{})
		if cfg.MetricsAuth {
			metrics = h.authenticated(metrics.ServeHTTP)
		}
		mux.Handle("GET /metrics", metrics)
	}
	return mux
}

type handler struct {
	token    string
	acceptor Acceptor
}

// authenticated lets a request through only with the cluster token,
// compared in constant time so its bytes cannot be guessed one by one from
// response times.
func (h *handler) authenticated(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || h.token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(h.token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="jobctl"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "missing or bad cluster token"})
			return
		}
		next(w, r)
	}
}

func (h *handler) dispatch(w http.ResponseWriter, r *http.Request) {
	var o engine.DispatchOffer
	if err := decodeBody(w, r, maxOfferBytes, &o); err != nil || !validOffer(o) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad dispatch request"})
		return
	}
	res := h.acceptor.Accept(r.Context(), o)
	if res.Verdict == engine.OfferAccepted {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, statusOf(res.Verdict), map[string]string{"reason": res.Reason})
}

// dispatchBatch answers many offers in one request: 200 with a verdict per
// offer, in order, whatever the verdicts are. A body that is not a list of
// valid offers, each job at most once, is refused whole.
func (h *handler) dispatchBatch(w http.ResponseWriter, r *http.Request) {
	var req batchRequest
	if err := decodeBody(w, r, maxBatchBytes, &req); err != nil || !validBatch(req.Offers) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad dispatch batch"})
		return
	}
	results := h.acceptor.AcceptBatch(r.Context(), req.Offers)
	answer := batchAnswer{Results: make([]batchResult, len(results))}
	for i, res := range results {
		answer.Results[i] = batchResult{Verdict: res.Verdict.String(), Reason: res.Reason}
	}
	writeJSON(w, http.StatusOK, answer)
}

// validBatch holds for a list, possibly empty, of at most MaxBatchOffers
// valid offers naming distinct jobs: a verdict per job must be unambiguous.
func validBatch(offers []engine.DispatchOffer) bool {
	if offers == nil || len(offers) > MaxBatchOffers {
		return false
	}
	seen := make(map[int64]struct{}, len(offers))
	for _, o := range offers {
		if _, dup := seen[o.JobID]; dup || !validOffer(o) {
			return false
		}
		seen[o.JobID] = struct{}{}
	}
	return true
}

func (h *handler) heartbeat(w http.ResponseWriter, _ *http.Request) {
	if !h.acceptor.Accepting() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (h *handler) health(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, h.acceptor.Health())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
