package node

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
)

// jobAPI answers the requests a job process makes to its node with the
// token the node gave its run ($JOBCTL_JOB_TOKEN): its progress, children
// it submits and lists, and waits for its children, during which its job
// is WAITING and holds no load (waitchildren.go). A token is good only
// while its run goes on here, as the runner says (liveRun).
type jobAPI struct {
	node         string
	pollInterval time.Duration // how often a wait for children looks again
	store        jobAPIStore
	// submit creates a job a running job asks for (engine.SubmitRecorded).
	submit func(ctx context.Context, nodes []*engine.Node, r engine.SubmitRequest, by engine.Actor) (engine.Submitted, error)
	log    *slog.Logger
	runs   liveRuns
	books  waitingBooks
	// runningJobs and waitingJobs count the runs that hold load and those
	// that wait for their children.
	runningJobs, waitingJobs prometheus.Gauge

	tokens jobTokens
	// mu guards the runs' waiters and waiting.
	mu sync.Mutex
}

// jobAPIStore is what the job API reads and writes: a job's children, its
// moves into and out of WAITING, and the nodes a child may go to.
type jobAPIStore interface {
	JobGet(ctx context.Context, id int64) (*engine.Job, error)
	JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error)
	JobUpdate(ctx context.Context, u engine.JobUpdate) (*engine.Job, error)
	NodeList(ctx context.Context) ([]*engine.Node, error)
}

// liveRuns is what the job API needs of the runner (jobRunner).
type liveRuns interface {
	liveRun(g tokenGrant) (ar *activeRun, started, live bool)
}

// waitingBooks take a run's load off and on again while its job waits
// for its children (placement.Books).
type waitingBooks interface {
	SetWaiting(id int64, on bool) bool
}

func newJobAPI(cfg Config, store engine.Store, runs liveRuns, books waitingBooks, m *metrics, log *slog.Logger) *jobAPI {
	return &jobAPI{node: cfg.Name, pollInterval: cfg.PollInterval, store: store, runs: runs, books: books,
		runningJobs: m.running, waitingJobs: m.waiting, log: log,
		submit: func(ctx context.Context, nodes []*engine.Node, r engine.SubmitRequest, by engine.Actor) (engine.Submitted, error) {
			return engine.SubmitRecorded(ctx, store, nodes, r, by)
		}}
}

// jobTokens are the tokens the node gave its job processes
// ($JOBCTL_JOB_TOKEN), one per attempt, made as the run starts. A token is
// good only while its attempt runs here (see liveRun); one whose run has
// ended is dropped when next used or at the next sweep. The zero value is
// ready to use. Lock order: jobTokens.mu, then jobRunner.mu.
type jobTokens struct {
	mu sync.Mutex
	// grants are keyed by the token's SHA-256: looking a token up leaks
	// nothing of its bytes through timing.
	grants  map[[sha256.Size]byte]tokenGrant
	sweepAt int // sweep when there are this many grants
}

// tokenGrant is what a token gives access to.
type tokenGrant struct {
	token   string
	jobID   int64
	attempt int
}

// issueJobToken makes the token of one attempt of a job about to start.
func (a *jobAPI) issueJobToken(jobID int64, attempt int) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("cannot make the job's token: %w", err)
	}
	token := hex.EncodeToString(b[:])
	t := &a.tokens
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.grants == nil {
		t.grants = map[[sha256.Size]byte]tokenGrant{}
	}
	if len(t.grants) >= t.sweepAt {
		// Amortized: each sweep at least doubles the room before the next.
		for k, g := range t.grants {
			if _, _, live := a.runs.liveRun(g); !live {
				delete(t.grants, k)
			}
		}
		t.sweepAt = 2*len(t.grants) + 64
	}
	t.grants[sha256.Sum256([]byte(token))] = tokenGrant{token: token, jobID: jobID, attempt: attempt}
	return token, nil
}

// JobOfToken implements endpoint.JobAPI.
func (a *jobAPI) JobOfToken(token string) (endpoint.RunningJob, bool) {
	t := &a.tokens
	key := sha256.Sum256([]byte(token))
	t.mu.Lock()
	defer t.mu.Unlock()
	g, ok := t.grants[key]
	if !ok || subtle.ConstantTimeCompare([]byte(g.token), []byte(token)) != 1 {
		return nil, false
	}
	if _, _, live := a.runs.liveRun(g); !live {
		delete(t.grants, key) // its run has ended: no need to wait for a sweep
		return nil, false
	}
	return runningJob{api: a, grant: g}, true
}

// runningJob is a job's run as its token reaches it.
type runningJob struct {
	api   *jobAPI
	grant tokenGrant
}

func (j runningJob) ID() int64 { return j.grant.jobID }

// startWait bounds how long a request waits for start to record the run
// whose process made it.
const startWait = 5 * time.Second

// started is the job's run, once its process has been started. A request
// from the job's own process can come before start has recorded that
// process, a moment after its exec: it waits for that moment, not to be
// answered 503.
func (j runningJob) started(ctx context.Context) (*activeRun, error) {
	ar, started, live := j.api.runs.liveRun(j.grant)
	if live && !started && ar.begun != nil {
		wait := time.NewTimer(startWait)
		select {
		case <-ar.begun:
		case <-ctx.Done():
		case <-wait.C:
		}
		wait.Stop()
		ar, started, live = j.api.runs.liveRun(j.grant)
	}
	switch {
	case !live:
		return nil, &endpoint.JobAPIError{Status: http.StatusUnauthorized, Message: "the run this token was given to has ended"}
	case !started:
		return nil, &endpoint.JobAPIError{Status: http.StatusServiceUnavailable, Message: "the job is still starting; try again",
			RetryAfter: time.Second}
	}
	return ar, nil
}

// Progress goes the way of a "jobctl:progress" line: through the run's
// output to the node's progress writer.
func (j runningJob) Progress(ctx context.Context, p endpoint.JobProgress) error {
	ar, err := j.started(ctx)
	if err != nil {
		return err
	}
	ar.out.Progress(p.Percent, strings.TrimSpace(p.Message))
	return nil
}

// SubmitChild creates a child through the engine's own submit path. A job
// that is not exec cannot have exec children: a job may not widen what it
// runs to arbitrary commands.
func (j runningJob) SubmitChild(ctx context.Context, r engine.SubmitRequest) (endpoint.ChildSubmitted, error) {
	ar, err := j.started(ctx)
	if err != nil {
		return endpoint.ChildSubmitted{}, err
	}
	if strings.TrimSpace(r.Type) == engine.TypeExec && ar.job.Type != engine.TypeExec {
		return endpoint.ChildSubmitted{}, &endpoint.JobAPIError{Status: http.StatusForbidden,
			Message: fmt.Sprintf("a %s job cannot submit exec children; only an exec job can", ar.job.Type)}
	}
	parent := j.grant.jobID
	r.ParentID = &parent
	r.Creator = fmt.Sprintf("job %d@%s", parent, j.api.node)
	nodes, err := j.api.store.NodeList(ctx)
	if err != nil {
		return endpoint.ChildSubmitted{}, j.api.jobAPIFailure("submit a child", parent, err)
	}
	// The job is who submits it, in its event as in the child's creator.
	sub, err := j.api.submit(ctx, nodes, r, engine.Actor{Who: r.Creator})
	switch {
	case errors.Is(err, engine.ErrInvalid):
		return endpoint.ChildSubmitted{}, &endpoint.JobAPIError{Status: http.StatusBadRequest, Message: err.Error()}
	case err != nil:
		return endpoint.ChildSubmitted{}, j.api.jobAPIFailure("submit a child", parent, err)
	}
	return endpoint.ChildSubmitted{ID: sub.Job.ID, Offered: sub.Offered}, nil
}

// Children lists the job's children, brief: ids and statuses are all a
// waiting job needs.
func (j runningJob) Children(ctx context.Context) ([]endpoint.Child, error) {
	if _, err := j.started(ctx); err != nil {
		return nil, err
	}
	parent := j.grant.jobID
	jobs, err := j.api.store.JobList(ctx, engine.JobListParams{ParentID: &parent, Brief: true})
	if err != nil {
		return nil, j.api.jobAPIFailure("list its children", parent, err)
	}
	out := make([]endpoint.Child, len(jobs))
	for i, c := range jobs {
		out[i] = endpoint.Child{ID: c.ID, Status: c.Status}
	}
	return out, nil
}

// jobAPIFailure logs what the node could not do for a job and returns it;
// the job is told only that the node could not.
func (a *jobAPI) jobAPIFailure(what string, job int64, err error) error {
	a.log.Warn("a job's request to its node failed", "job", job, "request", what, "err", err)
	return err
}
