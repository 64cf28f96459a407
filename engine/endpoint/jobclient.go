package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// jobClientPatience is how long a job's request keeps being retried while
// its node says the run is still being set up, or cannot be reached at all
// (nothing was sent).
const jobClientPatience = 10 * time.Second

// JobClient is a job speaking to its own node ($JOBCTL_URL) with its own
// token ($JOBCTL_JOB_TOKEN).
type JobClient struct {
	http *http.Client
	// waits has no timeout: a wait's answer comes when the children end.
	waits *http.Client
	url   string
	token string
	id    int64
	err   error // why the client cannot be used, returned by every call
}

// NewJobClient returns a client for job id's API on the node at url.
func NewJobClient(url, token string, id int64) *JobClient {
	return &JobClient{http: &http.Client{Timeout: 30 * time.Second}, waits: &http.Client{}, url: strings.TrimRight(url, "/"), token: token, id: id}
}

// TrustFile makes c trust the certificates in the PEM file at path for
// its node's HTTPS endpoint, in place of the system's roots: a node whose
// certificate no public CA signed hands its jobs that certificate
// ($JOBCTL_CA_FILE). A file that cannot be read fails every later call.
func (c *JobClient) TrustFile(path string) *JobClient {
	cfg, err := TLS{CAFile: path}.ClientConfig()
	if err != nil {
		c.err = fmt.Errorf("$JOBCTL_CA_FILE: %w", err)
		return c
	}
	for _, hc := range []*http.Client{c.http, c.waits} {
		// A config each: a transport writes its protocols into its own.
		hc.Transport = &http.Transport{TLSClientConfig: cfg.Clone(), Proxy: http.ProxyFromEnvironment}
	}
	return c
}

// Progress records the job's progress.
func (c *JobClient) Progress(ctx context.Context, p JobProgress) error {
	return c.do(ctx, http.MethodPost, "progress", p, nil)
}

// SubmitChild creates a child of the job.
func (c *JobClient) SubmitChild(ctx context.Context, r ChildRequest) (ChildSubmitted, error) {
	var out ChildSubmitted
	err := c.do(ctx, http.MethodPost, "children", r, &out)
	return out, err
}

// Children lists the job's children.
func (c *JobClient) Children(ctx context.Context) ([]Child, error) {
	var out childrenAnswer
	err := c.do(ctx, http.MethodGet, "children", nil, &out)
	return out.Children, err
}

// WaitChildren waits on the node until every child of the job has ended,
// or timeout (0: none) passes first. A node that has no wait (an older
// jobctl) answers ErrNoWait.
func (c *JobClient) WaitChildren(ctx context.Context, timeout time.Duration) (ChildrenWaited, error) {
	var out ChildrenWaited
	req := WaitRequest{}
	if timeout > 0 {
		req.Timeout = timeout.String()
	}
	err := c.send(ctx, c.waits, http.MethodPost, "wait", req, &out)
	var apiErr *JobAPIError
	if errors.As(err, &apiErr) && (apiErr.Status == http.StatusNotFound || apiErr.Status == http.StatusMethodNotAllowed) {
		return out, ErrNoWait
	}
	return out, err
}

// ErrNoWait: the node has no POST /v1/jobs/{id}/wait; the job can only
// poll its children's states.
var ErrNoWait = errors.New("the node cannot hold a job waiting for its children")

// do sends one request, again while the node says nothing was done yet or
// the connection was refused, and decodes a success into out.
func (c *JobClient) do(ctx context.Context, method, path string, in, out any) error {
	return c.send(ctx, c.http, method, path, in, out)
}

// send is do with a client of its own.
func (c *JobClient) send(ctx context.Context, client *http.Client, method, path string, in, out any) error {
	if c.err != nil {
		return c.err
	}
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	u := c.url + "/v1/jobs/" + strconv.FormatInt(c.id, 10) + "/" + path
	deadline := time.Now().Add(jobClientPatience)
	delay := 20 * time.Millisecond
	for {
		err := c.once(ctx, client, method, u, body, out)
		var apiErr *JobAPIError
		retry := errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &apiErr) && apiErr.RetryAfter > 0)
		if !retry || time.Now().Add(delay).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Second)
	}
}

func (c *JobClient) once(ctx context.Context, client *http.Client, method, u string, body []byte, out any) error {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, reader)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the node at %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxChildBytes))
	if err != nil {
		return fmt.Errorf("reading the node's answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		var answer struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(data, &answer)
		if answer.Error == "" {
			answer.Error = "HTTP " + resp.Status
		}
		e := &JobAPIError{Status: resp.StatusCode, Message: "node: " + answer.Error}
		if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
			e.RetryAfter = time.Second
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("the node's answer is not what jobctl expects: %w", err)
	}
	return nil
}
