package commands

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
)

// fakeNode is the node of job 5, token "tok": it keeps what the job asked
// for and answers with the children's statuses it is given.
type fakeNode struct {
	mu       sync.Mutex
	progress []endpoint.JobProgress
	children []engine.SubmitRequest
	statuses []engine.Status // of children 101, 102, ...
}

func (n *fakeNode) JobOfToken(token string) (endpoint.RunningJob, bool) {
	return fakeRunningJob{n}, token == "tok"
}

type fakeRunningJob struct{ n *fakeNode }

func (j fakeRunningJob) ID() int64 { return 5 }

func (j fakeRunningJob) Progress(_ context.Context, p endpoint.JobProgress) error {
	j.n.mu.Lock()
	defer j.n.mu.Unlock()
	j.n.progress = append(j.n.progress, p)
	return nil
}

func (j fakeRunningJob) SubmitChild(_ context.Context, r engine.SubmitRequest) (endpoint.ChildSubmitted, error) {
	j.n.mu.Lock()
	defer j.n.mu.Unlock()
	j.n.children = append(j.n.children, r)
	return endpoint.ChildSubmitted{ID: 100 + int64(len(j.n.children)), Offered: true}, nil
}

func (j fakeRunningJob) Children(context.Context) ([]endpoint.Child, error) {
	j.n.mu.Lock()
	defer j.n.mu.Unlock()
	out := []endpoint.Child{}
	for i, s := range j.n.statuses {
		out = append(out, endpoint.Child{ID: 101 + int64(i), Status: s})
	}
	return out, nil
}

// WaitChildren answers at once when every child has ended, else once the
// timeout passes.
func (j fakeRunningJob) WaitChildren(ctx context.Context, timeout time.Duration) (endpoint.ChildrenWaited, error) {
	children, _ := j.Children(ctx)
	if !slices.ContainsFunc(children, func(c endpoint.Child) bool { return !c.Status.Terminal() }) {
		return endpoint.ChildrenWaited{Ended: true, Children: children}, nil
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	<-ctx.Done()
	return endpoint.ChildrenWaited{Children: children}, nil
}

// inJob is a factory for a command run inside job 5, whose node is node,
// without a database.
func inJob(t *testing.T, node *fakeNode) (*testEnv, func(args ...string) error) {
	t.Helper()
	srv := httptest.NewServer(endpoint.NewHandler(endpoint.HandlerConfig{JobAPI: node}))
	t.Cleanup(srv.Close)
	ios, stdout, stderr := TestIO("")
	f := NewFactory(ios)
	f.Clock = fixedClock(testNow)
	f.Job = func() JobEnv { return JobEnv{ID: 5, URL: srv.URL, Token: "tok", viaNode: true} }
	e := &testEnv{f: f, stdout: stdout, stderr: stderr}
	return e, func(args ...string) error { return e.run(t, args...) }
}

func TestSubmitChildGoesThroughTheNode(t *testing.T) {
	t.Parallel()
	node := &fakeNode{}
	e, run := inJob(t, node)
	if err := run("submit", "--child", "--key", "k", "--timeout", "1m", "--in", "30s", "--", "echo", "hi"); err != nil {
		t.Fatalf("submit --child: %v", err)
	}
	if e.stdout.String() != "101\n" {
		t.Errorf("stdout %q, want the child's id", e.stdout.String())
	}
	if err := run("submit", "--parent", "5", "--type", "noop", "-o", "json"); err != nil {
		t.Fatalf("submit --parent $JOBCTL_JOB_ID: %v", err)
	}
	if got := strings.TrimSpace(e.stdout.String()); got != `[{"id":102,"parent_id":5}]` && got != "[\n  {\n    \"id\": 102,\n    \"parent_id\": 5\n  }\n]" {
		t.Errorf("-o json printed %q", got)
	}
	if len(node.children) != 2 {
		t.Fatalf("the node got %d children, want 2", len(node.children))
	}
	c := node.children[0]
	if c.Type != engine.TypeExec || !slices.Equal(c.Args, []string{"echo", "hi"}) || c.Key != "k" || c.Timeout == nil ||
		*c.Timeout != time.Minute || c.RunIn == nil || *c.RunIn != 30*time.Second || c.MaxAttempts != 1 || c.Backoff != 10*time.Second {
		t.Errorf("the node got %+v", c)
	}
	if node.children[1].Type != engine.TypeNoop {
		t.Errorf("the second child is %+v, want noop", node.children[1])
	}
	var usage *UsageError
	for _, args := range [][]string{
		{"submit", "--child", "--parent", "6", "--", "true"},
		{"submit", "--child", "--wait", "--", "true"},
		{"submit", "--child", "--batch", "-"},
		{"submit", "--child", "--reason", "the node records the job as who submitted it", "--", "true"},
	} {
		if err := run(args...); !errors.As(err, &usage) {
			t.Errorf("jobctl %s: %v, want a usage error", strings.Join(args, " "), err)
		}
	}
	if len(node.children) != 2 {
		t.Errorf("a refused command line submitted a child: %v", node.children)
	}
}

func TestProgressGoesThroughTheNode(t *testing.T) {
	t.Parallel()
	node := &fakeNode{}
	_, run := inJob(t, node)
	if err := run("progress", "40%", "half", "way"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"101", "-1", "x"} {
		var usage *UsageError
		if err := run("progress", bad); !errors.As(err, &usage) {
			t.Errorf("progress %s: %v, want a usage error", bad, err)
		}
	}
	if !slices.Equal(node.progress, []endpoint.JobProgress{{Percent: 40, Message: "half way"}}) {
		t.Errorf("the node got %v", node.progress)
	}
}

func TestWaitChildrenAsksTheNode(t *testing.T) {
	t.Parallel()
	node := &fakeNode{statuses: []engine.Status{engine.StatusFinished, engine.StatusWarning}}
	e, run := inJob(t, node)
	if err := run("wait", "--children"); err != nil {
		t.Fatalf("wait --children with all ended well: %v", err)
	}
	if e.stdout.String() != "101\tFINISHED\n102\tWARNING\n" {
		t.Errorf("stdout %q", e.stdout.String())
	}
	node.statuses = append(node.statuses, engine.StatusFailed)
	var failed *WaitFailedError
	if err := run("wait", "--children"); !errors.As(err, &failed) || len(failed.Jobs) != 1 || failed.Jobs[0].ID != 103 {
		t.Errorf("wait --children with a failed child: %v, want job 103 failed", err)
	}
	node.statuses = []engine.Status{engine.StatusFinished, engine.StatusRunning}
	var timedOut *WaitTimeoutError
	if err := run("wait", "--children", "--timeout", "300ms"); !errors.As(err, &timedOut) || !slices.Equal(timedOut.Pending, []int64{102}) {
		t.Errorf("wait --children with a running child: %v, want a timeout on 102", err)
	}
	var usage *UsageError
	if err := run("wait", "--children", "7"); !errors.As(err, &usage) {
		t.Errorf("wait --children 7: %v, want a usage error", err)
	}
}

func TestInsideAJobOtherCommandsHaveNoDatabase(t *testing.T) {
	t.Parallel()
	_, run := inJob(t, &fakeNode{})
	for _, args := range [][]string{{"list"}, {"submit", "--", "true"}, {"submit", "--parent", "6", "--", "true"}, {"db", "status"}} {
		if err := run(args...); !errors.Is(err, ErrJobHasNoDatabase) {
			t.Errorf("jobctl %s inside a job: %v, want %v", strings.Join(args, " "), err, ErrJobHasNoDatabase)
		}
	}
}

// Not parallel: it sets the process's environment.
func TestTheJobsEnvironmentDecidesWhetherItGoesThroughItsNode(t *testing.T) {
	t.Setenv("JOBCTL_JOB_ID", "5")
	t.Setenv("JOBCTL_URL", "http://127.0.0.1:7420")
	t.Setenv("JOBCTL_JOB_TOKEN", "tok")
	t.Setenv("JOBCTL_DB", "")
	if e := jobFromEnv(false); !e.InJob() || !e.ViaNode() || e.ID != 5 || e.Token != "tok" {
		t.Errorf("a job's environment: %+v, want job 5 via its node", e)
	}
	if e := jobFromEnv(true); !e.InJob() || e.ViaNode() {
		t.Errorf("with --db: %+v, want the database", e)
	}
	t.Setenv("JOBCTL_DB", "sqlite:x.db")
	if e := jobFromEnv(false); e.ViaNode() {
		t.Errorf("with JOBCTL_DB: %+v, want the database", e)
	}
	t.Setenv("JOBCTL_JOB_ID", "")
	if e := jobFromEnv(false); e.InJob() {
		t.Errorf("without JOBCTL_JOB_ID: %+v, want outside a job", e)
	}
}
