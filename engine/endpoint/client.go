package endpoint

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Client speaks to nodes' endpoints with the cluster token.
type Client struct {
	http  *http.Client
	token string
}

// NewClient returns a client whose requests time out after timeout and that
// verifies HTTPS endpoints with tlsConfig (nil: the system's roots). The
// client keeps a copy of tlsConfig: a transport adds its protocols to its
// config on first use, so two clients built from one config must not share
// it.
func NewClient(token string, timeout time.Duration, tlsConfig *tls.Config) *Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig.Clone()
	return &Client{http: &http.Client{Timeout: timeout, Transport: transport}, token: token}
}

// Offer POSTs a dispatch offer and reads the node's verdict. A node that
// cannot be reached, or answers with something else, gives OfferError.
func (c *Client) Offer(ctx context.Context, n *engine.Node, o engine.DispatchOffer) engine.OfferResult {
	body, _ := json.Marshal(o)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.URL+"/v1/dispatch", bytes.NewReader(body))
	if err != nil {
		return engine.OfferResult{Verdict: engine.OfferError, Reason: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return engine.OfferResult{Verdict: engine.OfferError, Reason: err.Error()}
	}
	defer resp.Body.Close()
	var answer struct {
		Reason string `json:"reason"`
		Error  string `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, maxOfferBytes)).Decode(&answer)
	v := verdictOf(resp.StatusCode)
	if v == engine.OfferError {
		return engine.OfferResult{Verdict: v, Reason: fmt.Sprintf("HTTP %d %s", resp.StatusCode, answer.Error)}
	}
	return engine.OfferResult{Verdict: v, Reason: answer.Reason}
}

// OfferBatch POSTs offers to a node in one request, or several of at most
// MaxBatchOffers, and reads back its verdict on each, in their order. A
// request the node does not answer, or answers with anything but a verdict
// per offer, gives OfferError for each of its offers: which of them the node
// took cannot be told, so none is trusted.
func (c *Client) OfferBatch(ctx context.Context, n *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult {
	out := make([]engine.OfferResult, 0, len(offers))
	for chunk := range slices.Chunk(offers, MaxBatchOffers) {
		out = append(out, c.offerBatch(ctx, n, chunk)...)
	}
	return out
}

func (c *Client) offerBatch(ctx context.Context, n *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult {
	body, err := json.Marshal(batchRequest{Offers: offers})
	if err != nil {
		return offerErrors(len(offers), err.Error())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.URL+"/v1/dispatch/batch", bytes.NewReader(body))
	if err != nil {
		return offerErrors(len(offers), err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return offerErrors(len(offers), err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var answer struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(io.LimitReader(resp.Body, maxOfferBytes)).Decode(&answer)
		return offerErrors(len(offers), fmt.Sprintf("HTTP %d %s", resp.StatusCode, answer.Error))
	}
	var answer batchAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBatchBytes)).Decode(&answer); err != nil {
		return offerErrors(len(offers), "unreadable answer: "+err.Error())
	}
	if len(answer.Results) != len(offers) {
		return offerErrors(len(offers), fmt.Sprintf("node answered %d verdicts for %d offers", len(answer.Results), len(offers)))
	}
	out := make([]engine.OfferResult, len(offers))
	for i, r := range answer.Results {
		v, ok := parseVerdict(r.Verdict)
		if !ok {
			out[i] = engine.OfferResult{Verdict: engine.OfferError, Reason: fmt.Sprintf("unknown verdict %q", r.Verdict)}
			continue
		}
		out[i] = engine.OfferResult{Verdict: v, Reason: r.Reason}
	}
	return out
}

// offerErrors is OfferError for each of count offers.
func offerErrors(count int, reason string) []engine.OfferResult {
	out := make([]engine.OfferResult, count)
	for i := range out {
		out[i] = engine.OfferResult{Verdict: engine.OfferError, Reason: reason}
	}
	return out
}

// Heartbeat sends HEAD /v1/dispatch; nil means the node accepts work.
func (c *Client) Heartbeat(ctx context.Context, n *engine.Node) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, n.URL+"/v1/dispatch", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("heartbeat answered HTTP %d", resp.StatusCode)
	}
	return nil
}
