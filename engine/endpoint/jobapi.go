package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jobctl/jobctl/engine"
)

// The job API: what a node offers the jobs it runs. A job authenticates with
// its own token ($JOBCTL_JOB_TOKEN), which is good only for that job's id
// and only while that attempt runs on the node, and may do no more than:
//
//	POST /v1/jobs/{id}/progress  {"percent": 40, "message": "half"}   → 204
//	POST /v1/jobs/{id}/children  {"type": "exec", "args": ["true"]}   → 201 {"id": 43, "offered": true}
//	GET  /v1/jobs/{id}/children                                       → 200 {"children": [{"id": 43, "status": "RUNNING"}]}
//	POST /v1/jobs/{id}/wait      {"timeout": "10m"}                   → 200 {"ended": true, "children": [...]}
//
// A wait answers once every child of the job has ended, or when its
// timeout ("" waits as long as it takes) passes first ("ended": false);
// meanwhile the job is WAITING and holds no load on its node. Sending it
// again, say after a lost connection, is safe: the job waits until the
// last of its waits is over.
//
// Errors are one line of JSON, {"error": "..."}: 401 no, bad or expired
// token; 403 another job's id, or a child the job may not submit; 400 bad
// input; 413 a body over its bound; 503 the node cannot do it now.

// Bounds of the job API's request bodies: a child carries at most a
// payload and args at their limits, with room for the other fields.
const (
	maxProgressBytes = 8 << 10
	maxChildBytes    = engine.MaxPayloadBytes + engine.MaxArgsBytes + 64<<10
	// MaxProgressMessage bounds a progress message, as the stdout
	// protocol bounds its lines.
	MaxProgressMessage = 4000
)

// JobAPI is the node behind the job API.
type JobAPI interface {
	// JobOfToken returns the running job a token was given to; false
	// for a token the node never gave or whose run has ended.
	JobOfToken(token string) (RunningJob, bool)
}

// RunningJob is one attempt of a job running on the node, as its token
// reaches it. Each method fails with a *JobAPIError of status 401 once the
// attempt has ended.
type RunningJob interface {
	ID() int64
	// Progress records the job's progress.
	Progress(ctx context.Context, p JobProgress) error
	// SubmitChild creates a child of the job; the parent and the creator
	// are the node's to set.
	SubmitChild(ctx context.Context, r engine.SubmitRequest) (ChildSubmitted, error)
	// Children lists the job's children.
	Children(ctx context.Context) ([]Child, error)
	// WaitChildren returns once every child of the job has ended, or once
	// timeout (0: none) or ctx ends first, with Ended false; the job is
	// WAITING meanwhile. A job being cancelled cannot wait: 409.
	WaitChildren(ctx context.Context, timeout time.Duration) (ChildrenWaited, error)
}

// JobAPIError is an answer of the job API other than success: its status
// and the one line that says why.
type JobAPIError struct {
	Status  int
	Message string
	// RetryAfter, when set, says nothing was done and the request may be
	// sent again after this long (the job's run is still being set up).
	RetryAfter time.Duration
}

func (e *JobAPIError) Error() string { return e.Message }

// Is lets a 400 match engine.ErrInvalid and a 404 engine.ErrNotFound, so
// the command line maps them to its usage and not-found exit codes.
func (e *JobAPIError) Is(target error) bool {
	return (target == engine.ErrInvalid && e.Status == http.StatusBadRequest) ||
		(target == engine.ErrNotFound && e.Status == http.StatusNotFound)
}

// JobProgress is the body of POST /v1/jobs/{id}/progress.
type JobProgress struct {
	Percent int    `json:"percent"`
	Message string `json:"message,omitempty"`
}

// Check reports what is wrong with p, if anything.
func (p JobProgress) Check() error {
	switch {
	case p.Percent < 0 || p.Percent > 100:
		return fmt.Errorf("progress %d is not between 0 and 100", p.Percent)
	case len(p.Message) > MaxProgressMessage:
		return fmt.Errorf("progress message is longer than %d bytes", MaxProgressMessage)
	case !utf8.ValidString(p.Message):
		return errors.New("progress message is not valid UTF-8")
	}
	return nil
}

// ChildRequest is the body of POST /v1/jobs/{id}/children: the fields of
// 'jobctl submit', durations as Go duration strings ("90s"). The parent is
// always the calling job.
type ChildRequest struct {
	Type        string          `json:"type"`
	Operation   string          `json:"operation,omitempty"`
	Args        []string        `json:"args,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Load        *float64        `json:"load,omitempty"`
	Priority    int             `json:"priority,omitempty"` // 0: the parent's
	Key         string          `json:"key,omitempty"`
	MaxAttempts int             `json:"max_attempts,omitempty"`
	Backoff     string          `json:"backoff,omitempty"`
	Timeout     string          `json:"timeout,omitempty"`
	// Memory is the child's memory limit as submit --memory takes it
	// ("64MiB", "2GiB"); "" leaves it to the service.
	Memory string     `json:"memory,omitempty"`
	At     *time.Time `json:"at,omitempty"`
	In     string     `json:"in,omitempty"`
	Hold   bool       `json:"hold,omitempty"`
	// Rollback is a command line run once as its own job after the
	// child's final failure; RollbackType its type ("" the child's own).
	Rollback     string `json:"rollback,omitempty"`
	RollbackType string `json:"rollback_type,omitempty"`
}

// SubmitRequest is the engine's request for r; an error names the field
// that cannot be read.
func (r ChildRequest) SubmitRequest() (engine.SubmitRequest, error) {
	s := engine.SubmitRequest{Type: r.Type, Operation: r.Operation, Args: r.Args, Payload: r.Payload,
		Load: r.Load, Priority: r.Priority, Key: r.Key, MaxAttempts: r.MaxAttempts, RunAt: r.At, Hold: r.Hold,
		Rollback: r.Rollback, RollbackType: r.RollbackType}
	duration := func(field, v string) (*time.Duration, error) {
		if v == "" {
			return nil, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("%s %q is not a duration", field, v)
		}
		return &d, nil
	}
	backoff, err := duration("backoff", r.Backoff)
	if err != nil {
		return s, err
	}
	if backoff != nil {
		s.Backoff = *backoff
	}
	if s.Timeout, err = duration("timeout", r.Timeout); err != nil {
		return s, err
	}
	if s.Timeout != nil && *s.Timeout <= 0 {
		return s, fmt.Errorf("timeout %s is not positive", *s.Timeout)
	}
	if r.Memory != "" {
		limit, err := engine.ParseMemoryLimit(r.Memory)
		if err != nil {
			return s, fmt.Errorf("memory: %v", err)
		}
		s.MemoryLimit = &limit
	}
	if s.RunIn, err = duration("in", r.In); err != nil {
		return s, err
	}
	if s.RunIn != nil && *s.RunIn < 0 {
		return s, fmt.Errorf("in %s is negative", *s.RunIn)
	}
	if s.RunIn != nil && s.RunAt != nil {
		return s, errors.New("at and in both set the start time; give one")
	}
	return s, nil
}

// ChildSubmitted answers POST /v1/jobs/{id}/children.
type ChildSubmitted struct {
	ID int64 `json:"id"`
	// Offered reports whether a registered node offers the child's type.
	Offered bool `json:"offered"`
}

// Child is one child of the calling job.
type Child struct {
	ID     int64         `json:"id"`
	Status engine.Status `json:"status"`
}

// WaitRequest is the body of POST /v1/jobs/{id}/wait.
type WaitRequest struct {
	// Timeout, a Go duration, bounds the wait; "" waits as long as it takes.
	Timeout string `json:"timeout,omitempty"`
}

// ChildrenWaited answers POST /v1/jobs/{id}/wait.
type ChildrenWaited struct {
	// Ended reports that every child has ended; false, the timeout passed first.
	Ended    bool    `json:"ended"`
	Children []Child `json:"children"`
}

// childrenAnswer answers GET /v1/jobs/{id}/children.
type childrenAnswer struct {
	Children []Child `json:"children"`
}

// registerJobAPI adds the job API's routes to mux.
func registerJobAPI(mux *http.ServeMux, api JobAPI) {
	h := jobAPIHandler{api: api}
	mux.HandleFunc("POST /v1/jobs/{id}/progress", h.authorized(h.progress))
	mux.HandleFunc("POST /v1/jobs/{id}/children", h.authorized(h.submitChild))
	mux.HandleFunc("GET /v1/jobs/{id}/children", h.authorized(h.children))
	mux.HandleFunc("POST /v1/jobs/{id}/wait", h.authorized(h.wait))
}

type jobAPIHandler struct {
	api JobAPI
}

// authorized lets a request through only with a live job token, and only
// for the job it was given to. The node compares tokens in constant time.
func (h jobAPIHandler) authorized(next func(http.ResponseWriter, *http.Request, RunningJob)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		var job RunningJob
		if ok && token != "" {
			job, ok = h.api.JobOfToken(token)
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="jobctl job"`)
			writeJobError(w, &JobAPIError{Status: http.StatusUnauthorized, Message: "missing, bad or expired job token"})
			return
		}
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil || id <= 0 {
			writeJobError(w, &JobAPIError{Status: http.StatusBadRequest, Message: fmt.Sprintf("%q is not a job id", r.PathValue("id"))})
			return
		}
		if id != job.ID() {
			writeJobError(w, &JobAPIError{Status: http.StatusForbidden,
				Message: fmt.Sprintf("this token is job %d's; it gives no access to job %d", job.ID(), id)})
			return
		}
		next(w, r, job)
	}
}

func (h jobAPIHandler) progress(w http.ResponseWriter, r *http.Request, job RunningJob) {
	var p JobProgress
	if !decodeJobBody(w, r, maxProgressBytes, &p) {
		return
	}
	if err := p.Check(); err != nil {
		writeJobError(w, &JobAPIError{Status: http.StatusBadRequest, Message: err.Error()})
		return
	}
	if err := job.Progress(r.Context(), p); err != nil {
		writeJobError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h jobAPIHandler) submitChild(w http.ResponseWriter, r *http.Request, job RunningJob) {
	var c ChildRequest
	if !decodeJobBody(w, r, maxChildBytes, &c) {
		return
	}
	req, err := c.SubmitRequest()
	if err != nil {
		writeJobError(w, &JobAPIError{Status: http.StatusBadRequest, Message: err.Error()})
		return
	}
	sub, err := job.SubmitChild(r.Context(), req)
	if err != nil {
		writeJobError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, sub)
}

func (h jobAPIHandler) children(w http.ResponseWriter, r *http.Request, job RunningJob) {
	children, err := job.Children(r.Context())
	if err != nil {
		writeJobError(w, err)
		return
	}
	if children == nil {
		children = []Child{}
	}
	writeJSON(w, http.StatusOK, childrenAnswer{Children: children})
}

func (h jobAPIHandler) wait(w http.ResponseWriter, r *http.Request, job RunningJob) {
	var req WaitRequest
	if !decodeJobBody(w, r, maxProgressBytes, &req) {
		return
	}
	var timeout time.Duration
	if req.Timeout != "" {
		var err error
		if timeout, err = time.ParseDuration(req.Timeout); err != nil || timeout < 0 {
			writeJobError(w, &JobAPIError{Status: http.StatusBadRequest, Message: fmt.Sprintf("timeout %q is not a duration of zero or more", req.Timeout)})
			return
		}
	}
	waited, err := job.WaitChildren(r.Context(), timeout)
	if err != nil {
		writeJobError(w, err)
		return
	}
	if waited.Children == nil {
		waited.Children = []Child{}
	}
	writeJSON(w, http.StatusOK, waited)
}

// decodeJobBody reads one JSON object of at most limit bytes into v, or
// answers why it cannot.
func decodeJobBody(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeJobError(w, &JobAPIError{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", limit)})
		return false
	case err != nil:
		writeJobError(w, &JobAPIError{Status: http.StatusBadRequest, Message: "bad request body: " + oneLine(err.Error())})
		return false
	}
	return true
}

// writeJobError answers err: a *JobAPIError as it is; anything else is the
// node's own trouble, which the node logs, so the job learns only that.
func writeJobError(w http.ResponseWriter, err error) {
	var e *JobAPIError
	if !errors.As(err, &e) {
		e = &JobAPIError{Status: http.StatusServiceUnavailable, Message: "the node cannot do this now; its log says why"}
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(max(int(e.RetryAfter.Round(time.Second)/time.Second), 1)))
	}
	writeJSON(w, e.Status, map[string]string{"error": oneLine(e.Message)})
}

// oneLine keeps an error message to one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
