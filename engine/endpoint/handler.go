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
}

// NewHandler serves a node's endpoint: POST and HEAD /v1/dispatch with the
// cluster token, GET /healthz open, GET /metrics open unless MetricsAuth.
func NewHandler(cfg HandlerConfig) http.Handler {
	h := &handler{token: cfg.Token, acceptor: cfg.Acceptor}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/dispatch", h.authenticated(h.dispatch))
	mux.HandleFunc("HEAD /v1/dispatch", h.authenticated(h.heartbeat))
	mux.HandleFunc("GET /healthz", h.health)
	if cfg.Metrics != nil {
		metrics := promhttp.HandlerFor(cfg.Metrics, promhttp.HandlerOpts{})
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
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxOfferBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil || o.JobID <= 0 || o.Type == "" || o.Load < 0 {
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
