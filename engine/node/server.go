package node

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jobctl/jobctl/engine"
)

// maxOfferBytes bounds a dispatch request body.
const maxOfferBytes = 64 << 10

// Handler serves the node endpoint (DESIGN.md §5).
func (n *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/dispatch", n.authenticated(n.handleDispatch))
	mux.HandleFunc("HEAD /v1/dispatch", n.authenticated(n.handleHeartbeat))
	mux.HandleFunc("GET /healthz", n.handleHealth)
	metrics := promhttp.HandlerFor(n.metrics.registry, promhttp.HandlerOpts{})
	if n.cfg.MetricsAuth {
		metrics = n.authenticated(metrics.ServeHTTP)
	}
	mux.Handle("GET /metrics", metrics)
	return mux
}

// authenticated lets a request through only with the cluster token,
// compared in constant time.
func (n *Node) authenticated(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(token), []byte(n.token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="jobctl"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "missing or bad cluster token"})
			return
		}
		next(w, r)
	}
}

func (n *Node) handleDispatch(w http.ResponseWriter, r *http.Request) {
	var o engine.DispatchOffer
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxOfferBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil || o.JobID <= 0 || o.Type == "" || o.Load < 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad dispatch request"})
		return
	}
	res := n.Accept(r.Context(), o)
	if res.Verdict == engine.OfferAccepted {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, statusOf(res.Verdict), map[string]string{"reason": res.Reason})
}

// statusOf is the HTTP status answering a verdict; Client.Offer reads it back.
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

func (n *Node) handleHeartbeat(w http.ResponseWriter, _ *http.Request) {
	n.mu.Lock()
	accepting := n.accepting
	n.mu.Unlock()
	if !accepting {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (n *Node) handleHealth(w http.ResponseWriter, _ *http.Request) {
	n.mu.Lock()
	body := map[string]any{"node": n.cfg.Name, "accepting": n.accepting, "load": n.load, "running": len(n.runs)}
	n.mu.Unlock()
	writeJSON(w, http.StatusOK, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
