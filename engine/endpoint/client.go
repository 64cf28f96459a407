package endpoint

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Client speaks to nodes' endpoints with the cluster token.
type Client struct {
	http  *http.Client
	token string
}

// NewClient returns a client whose requests time out after timeout and that
// verifies HTTPS endpoints with tlsConfig (nil: the system's roots).
func NewClient(token string, timeout time.Duration, tlsConfig *tls.Config) *Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig
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
