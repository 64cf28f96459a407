package endpoint

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// fakeJobs is a node running jobs 1 ("tok-1") and 2 ("tok-2"). It keeps
// what the jobs asked for.
type fakeJobs struct {
	mu       sync.Mutex
	progress map[int64][]JobProgress
	children map[int64][]engine.SubmitRequest
	starting int   // answer this many requests with "still starting"
	failWith error // SubmitChild's error, when set
	// waitTimeouts are the timeouts waits were asked for.
	waitTimeouts []time.Duration
}

func newFakeJobs() *fakeJobs {
	return &fakeJobs{progress: map[int64][]JobProgress{}, children: map[int64][]engine.SubmitRequest{}}
}

func (f *fakeJobs) JobOfToken(token string) (RunningJob, bool) {
	switch token {
	case "tok-1":
		return fakeJob{f, 1}, true
	case "tok-2":
		return fakeJob{f, 2}, true
	}
	return nil, false
}

type fakeJob struct {
	f  *fakeJobs
	id int64
}

func (j fakeJob) ID() int64 { return j.id }

func (j fakeJob) startingErr() error {
	if j.f.starting > 0 {
		j.f.starting--
		return &JobAPIError{Status: http.StatusServiceUnavailable, Message: "still starting", RetryAfter: time.Second}
	}
	return nil
}

func (j fakeJob) Progress(_ context.Context, p JobProgress) error {
	j.f.mu.Lock()
	defer j.f.mu.Unlock()
	if err := j.startingErr(); err != nil {
		return err
	}
	j.f.progress[j.id] = append(j.f.progress[j.id], p)
	return nil
}

func (j fakeJob) SubmitChild(_ context.Context, r engine.SubmitRequest) (ChildSubmitted, error) {
	j.f.mu.Lock()
	defer j.f.mu.Unlock()
	if j.f.failWith != nil {
		return ChildSubmitted{}, j.f.failWith
	}
	j.f.children[j.id] = append(j.f.children[j.id], r)
	return ChildSubmitted{ID: 100 + int64(len(j.f.children[j.id])), Offered: true}, nil
}

func (j fakeJob) Children(context.Context) ([]Child, error) {
	j.f.mu.Lock()
	defer j.f.mu.Unlock()
	out := []Child{}
	for i := range j.f.children[j.id] {
		out = append(out, Child{ID: 101 + int64(i), Status: engine.StatusQueued})
	}
	return out, nil
}

// WaitChildren answers at once: the fake's children never end, so the
// wait is over only for a timeout, which the fake lets pass at once.
func (j fakeJob) WaitChildren(ctx context.Context, timeout time.Duration) (ChildrenWaited, error) {
	children, err := j.Children(ctx)
	if err != nil {
		return ChildrenWaited{}, err
	}
	if len(children) == 0 {
		return ChildrenWaited{Ended: true, Children: children}, nil
	}
	j.f.mu.Lock()
	j.f.waitTimeouts = append(j.f.waitTimeouts, timeout)
	j.f.mu.Unlock()
	return ChildrenWaited{Children: children}, nil
}

func jobAPIServer(t *testing.T) (*httptest.Server, *fakeJobs) {
	t.Helper()
	jobs := newFakeJobs()
	srv := httptest.NewServer(NewHandler(HandlerConfig{Token: testToken, Acceptor: &scriptedAcceptor{accepting: true}, JobAPI: jobs}))
	t.Cleanup(srv.Close)
	return srv, jobs
}

// call sends one request and returns the status and the error line of the
// answer, checking that an error is one line of JSON.
func call(t *testing.T, srv *httptest.Server, method, path, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode < 300 {
		return resp.StatusCode, string(data)
	}
	var answer map[string]string
	if err := json.Unmarshal(data, &answer); err != nil || answer["error"] == "" || strings.Count(string(data), "\n") != 1 {
		t.Errorf("%s %s answered %d %q; want one line of JSON with an error", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode, answer["error"]
}

func TestJobAPIRefusesAnythingButAJobToken(t *testing.T) {
	t.Parallel()
	srv, jobs := jobAPIServer(t)
	for _, auth := range []string{"", "tok-1", "Basic tok-1", "Bearer ", "Bearer tok-3", "Bearer tok-1x", "Bearer " + testToken} {
		if code, _ := call(t, srv, "POST", "/v1/jobs/1/progress", auth, `{"percent":5}`); code != http.StatusUnauthorized {
			t.Errorf("progress with Authorization %q: %d, want 401", auth, code)
		}
		if code, _ := call(t, srv, "GET", "/v1/jobs/1/children", auth, ""); code != http.StatusUnauthorized {
			t.Errorf("children with Authorization %q: %d, want 401", auth, code)
		}
	}
	// Nor does a job token open the dispatch routes.
	if code, _ := call(t, srv, "POST", "/v1/dispatch", "Bearer tok-1", `{}`); code != http.StatusUnauthorized {
		t.Errorf("dispatch with a job token: %d, want 401", code)
	}
	if len(jobs.progress) != 0 {
		t.Errorf("progress recorded without a good token: %v", jobs.progress)
	}
}

func TestJobAPITokenGivesNoAccessToAnotherJob(t *testing.T) {
	t.Parallel()
	srv, jobs := jobAPIServer(t)
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/jobs/2/progress", `{"percent":50}`},
		{"POST", "/v1/jobs/2/children", `{"type":"noop"}`},
		{"GET", "/v1/jobs/2/children", ""},
	} {
		code, msg := call(t, srv, r.method, r.path, "Bearer tok-1", r.body)
		if code != http.StatusForbidden || !strings.Contains(msg, "job 2") {
			t.Errorf("%s %s with job 1's token: %d %q, want 403 naming job 2", r.method, r.path, code, msg)
		}
	}
	if len(jobs.progress)+len(jobs.children) != 0 {
		t.Errorf("job 1's token changed job 2: progress %v, children %v", jobs.progress, jobs.children)
	}
	if code, _ := call(t, srv, "POST", "/v1/jobs/x/progress", "Bearer tok-1", `{"percent":1}`); code != http.StatusBadRequest {
		t.Errorf("a job id that is no number: %d, want 400", code)
	}
}

func TestJobAPIProgress(t *testing.T) {
	t.Parallel()
	srv, jobs := jobAPIServer(t)
	if code, body := call(t, srv, "POST", "/v1/jobs/1/progress", "Bearer tok-1", `{"percent":40,"message":"half"}`); code != http.StatusNoContent {
		t.Fatalf("progress: %d %s, want 204", code, body)
	}
	for _, tt := range []struct {
		body string
		code int
	}{
		{`{"percent":101}`, http.StatusBadRequest},
		{`{"percent":-1}`, http.StatusBadRequest},
		{`{"percent":"40"}`, http.StatusBadRequest},
		{`{"percent":4,"node":"n2"}`, http.StatusBadRequest},
		{`{"percent":4} {"percent":5}`, http.StatusBadRequest},
		{`{"percent":4,"message":"` + strings.Repeat("m", MaxProgressMessage+1) + `"}`, http.StatusBadRequest},
		{`{"percent":4,"message":"` + strings.Repeat("m", maxProgressBytes) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		if code, _ := call(t, srv, "POST", "/v1/jobs/1/progress", "Bearer tok-1", tt.body); code != tt.code {
			t.Errorf("progress %.60s: %d, want %d", tt.body, code, tt.code)
		}
	}
	if got := jobs.progress[1]; len(got) != 1 || got[0] != (JobProgress{Percent: 40, Message: "half"}) {
		t.Errorf("progress recorded %v, want only 40 half", got)
	}
}

func TestJobAPIChildren(t *testing.T) {
	t.Parallel()
	srv, jobs := jobAPIServer(t)
	code, body := call(t, srv, "POST", "/v1/jobs/1/children", "Bearer tok-1",
		`{"type":"exec","args":["sh","-c","true"],"timeout":"90s","in":"1m","backoff":"2s","max_attempts":3,"key":"k"}`)
	if code != http.StatusCreated || !strings.Contains(body, `"id":101`) {
		t.Fatalf("child: %d %s, want 201 with id 101", code, body)
	}
	r := jobs.children[1][0]
	if r.Type != "exec" || len(r.Args) != 3 || r.Timeout == nil || *r.Timeout != 90*time.Second || r.RunIn == nil ||
		*r.RunIn != time.Minute || r.Backoff != 2*time.Second || r.MaxAttempts != 3 || r.Key != "k" || r.ParentID != nil {
		t.Errorf("child request reached the node as %+v", r)
	}
	for _, tt := range []struct {
		body string
		code int
	}{
		{`{"type":"noop","parent_id":7}`, http.StatusBadRequest}, // the parent is not the job's to choose
		{`{"type":"noop","timeout":"soon"}`, http.StatusBadRequest},
		{`{"type":"noop","timeout":"-1s"}`, http.StatusBadRequest},
		{`{"type":"noop","in":"1m","at":"2030-01-01T00:00:00Z"}`, http.StatusBadRequest},
		{`{"type":"noop","payload":"` + strings.Repeat("p", maxChildBytes) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		if code, _ := call(t, srv, "POST", "/v1/jobs/1/children", "Bearer tok-1", tt.body); code != tt.code {
			t.Errorf("child %.60s: %d, want %d", tt.body, code, tt.code)
		}
	}
	if code, body := call(t, srv, "GET", "/v1/jobs/1/children", "Bearer tok-1", ""); code != http.StatusOK ||
		strings.TrimSpace(body) != `{"children":[{"id":101,"status":"QUEUED"}]}` {
		t.Errorf("children: %d %s", code, body)
	}
	if code, body := call(t, srv, "GET", "/v1/jobs/2/children", "Bearer tok-2", ""); code != http.StatusOK ||
		strings.TrimSpace(body) != `{"children":[]}` {
		t.Errorf("children of a job without any: %d %s, want an empty list", code, body)
	}
}

func TestJobAPIErrorsOfTheNode(t *testing.T) {
	t.Parallel()
	srv, jobs := jobAPIServer(t)
	// A refusal of the node's reaches the job as it is.
	jobs.failWith = &JobAPIError{Status: http.StatusForbidden, Message: "a noop job cannot submit exec children"}
	if code, msg := call(t, srv, "POST", "/v1/jobs/1/children", "Bearer tok-1", `{"type":"exec","args":["true"]}`); code != http.StatusForbidden ||
		msg != "a noop job cannot submit exec children" {
		t.Errorf("refused child: %d %q, want 403 with the node's reason", code, msg)
	}
	// The node's own trouble does not: it may name its database.
	jobs.failWith = errors.New("dial postgres://jobctl:hunter2@db/jobctl: refused")
	code, msg := call(t, srv, "POST", "/v1/jobs/1/children", "Bearer tok-1", `{"type":"noop"}`)
	if code != http.StatusServiceUnavailable || strings.Contains(msg, "hunter2") || strings.Contains(msg, "postgres") {
		t.Errorf("failed child: %d %q, want 503 without the node's error", code, msg)
	}
}

func TestJobClient(t *testing.T) {
	t.Parallel()
	srv, jobs := jobAPIServer(t)
	jobs.starting = 2
	c := NewJobClient(srv.URL+"/", "tok-1", 1)
	ctx := context.Background()
	if err := c.Progress(ctx, JobProgress{Percent: 7, Message: "seven"}); err != nil {
		t.Fatalf("progress while the run is starting, then started: %v", err)
	}
	if got := jobs.progress[1]; len(got) != 1 || got[0].Percent != 7 {
		t.Errorf("progress recorded %v, want one of 7", got)
	}
	sub, err := c.SubmitChild(ctx, ChildRequest{Type: "noop"})
	if err != nil || sub.ID != 101 || !sub.Offered {
		t.Fatalf("child: %+v, %v", sub, err)
	}
	children, err := c.Children(ctx)
	if err != nil || len(children) != 1 || children[0].ID != 101 {
		t.Errorf("children: %v, %v", children, err)
	}
	err = c.Progress(ctx, JobProgress{Percent: 700})
	var apiErr *JobAPIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("bad progress: %v, want a 400 that is engine.ErrInvalid", err)
	}
	other := NewJobClient(srv.URL, "tok-1", 2)
	if err := other.Progress(ctx, JobProgress{Percent: 1}); !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
		t.Errorf("progress for another job: %v, want 403", err)
	}
}

func TestJobClientWaitsForChildren(t *testing.T) {
	t.Parallel()
	srv, jobs := jobAPIServer(t)
	c := NewJobClient(srv.URL, "tok-1", 1)
	ctx := context.Background()
	waited, err := c.WaitChildren(ctx, 0)
	if err != nil || !waited.Ended || waited.Children == nil || len(waited.Children) != 0 {
		t.Fatalf("wait without children: %+v, %v; want ended at once, an empty list", waited, err)
	}
	if _, err := c.SubmitChild(ctx, ChildRequest{Type: "noop"}); err != nil {
		t.Fatal(err)
	}
	waited, err = c.WaitChildren(ctx, 90*time.Second)
	if err != nil || waited.Ended || len(waited.Children) != 1 || waited.Children[0].ID != 101 {
		t.Errorf("wait with a child that does not end: %+v, %v", waited, err)
	}
	if len(jobs.waitTimeouts) != 1 || jobs.waitTimeouts[0] != 90*time.Second {
		t.Errorf("the node was asked to wait %v, want 1m30s", jobs.waitTimeouts)
	}
	for _, body := range []string{`{"timeout":"soon"}`, `{"timeout":"-1s"}`, ``, `{"until":"1s"}`} {
		if code, _ := call(t, srv, "POST", "/v1/jobs/1/wait", "Bearer tok-1", body); code != http.StatusBadRequest {
			t.Errorf("wait with body %q: %d, want 400", body, code)
		}
	}
	if code, _ := call(t, srv, "POST", "/v1/jobs/1/wait", "", `{}`); code != http.StatusUnauthorized {
		t.Errorf("wait without a token: %d, want 401", code)
	}
	if code, _ := call(t, srv, "POST", "/v1/jobs/2/wait", "Bearer tok-1", `{}`); code != http.StatusForbidden {
		t.Errorf("wait for another job: %d, want 403", code)
	}
}

func TestJobClientWaitOnANodeWithoutIt(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	if _, err := NewJobClient(srv.URL, "tok-1", 1).WaitChildren(context.Background(), 0); !errors.Is(err, ErrNoWait) {
		t.Errorf("wait on a node without it: %v, want ErrNoWait", err)
	}
}

func TestChildRequestRollback(t *testing.T) {
	t.Parallel()
	var r ChildRequest
	if err := json.Unmarshal([]byte(`{"type":"deploy","rollback":"undo 'v1'","rollback_type":"undeploy"}`), &r); err != nil {
		t.Fatal(err)
	}
	s, err := r.SubmitRequest()
	if err != nil || s.Rollback != "undo 'v1'" || s.RollbackType != "undeploy" {
		t.Errorf("SubmitRequest = %+v, %v", s, err)
	}
}

func TestChildRequestMemory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want *int64
		err  string
	}{
		{`{"type":"encode","memory":"64MiB"}`, engine.Ptr(int64(64 << 20)), ""},
		{`{"type":"encode","memory":"0"}`, engine.Ptr(int64(0)), ""},
		{`{"type":"encode"}`, nil, ""},
		{`{"type":"encode","memory":"lots"}`, nil, `memory: "lots" is not a size`},
	} {
		var r ChildRequest
		if err := json.Unmarshal([]byte(tc.body), &r); err != nil {
			t.Fatal(err)
		}
		s, err := r.SubmitRequest()
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error saying %q", tc.body, err, tc.err)
			}
		case err != nil || (tc.want == nil) != (s.MemoryLimit == nil) || (tc.want != nil && *tc.want != *s.MemoryLimit):
			t.Errorf("%s: memory %v, %v; want %v", tc.body, s.MemoryLimit, err, tc.want)
		}
	}
}

// A job of a node serving HTTPS under a certificate no public CA signed
// reaches it by trusting that certificate, and only then.
func TestJobClientTrustsItsNodesCertificate(t *testing.T) {
	t.Parallel()
	cert, key := selfSigned(t)
	serverTLS, err := TLS{CertFile: cert, KeyFile: key}.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	jobs := newFakeJobs()
	srv := httptest.NewUnstartedServer(NewHandler(HandlerConfig{Token: testToken, Acceptor: &scriptedAcceptor{accepting: true}, JobAPI: jobs}))
	srv.TLS = serverTLS
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ctx := context.Background()

	if err := NewJobClient(srv.URL, "tok-1", 1).Progress(ctx, JobProgress{Percent: 1}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("progress without trusting the node's certificate: %v, want a certificate error", err)
	}
	if err := NewJobClient(srv.URL, "tok-1", 1).TrustFile(cert).Progress(ctx, JobProgress{Percent: 2}); err != nil {
		t.Fatalf("progress trusting the node's certificate: %v", err)
	}
	if got := jobs.progress[1]; len(got) != 1 || got[0].Percent != 2 {
		t.Errorf("progress recorded %v, want one of 2", got)
	}
	missing := filepath.Join(t.TempDir(), "none.crt")
	if err := NewJobClient(srv.URL, "tok-1", 1).TrustFile(missing).Progress(ctx, JobProgress{Percent: 3}); err == nil || !strings.Contains(err.Error(), "JOBCTL_CA_FILE") {
		t.Errorf("progress with an unreadable certificate file: %v, want an error naming $JOBCTL_CA_FILE", err)
	}
}
