package node

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// tokenScript writes the job's token to $1/ID and runs until $1/gate exists.
const tokenScript = `printf '%s' "$JOBCTL_JOB_TOKEN" > "$1/$JOBCTL_JOB_ID.tmp"; mv "$1/$JOBCTL_JOB_ID.tmp" "$1/$JOBCTL_JOB_ID"; ` +
	`while [ ! -e "$1/gate" ]; do sleep 0.05; done`

// readToken waits until the job of id has written its token.
func readToken(t *testing.T, dir string, id int64) string {
	t.Helper()
	var token []byte
	waitfor.Until(t, 10*time.Second, "job "+strconv.FormatInt(id, 10)+" to write its token", func() bool {
		var err error
		token, err = os.ReadFile(filepath.Join(dir, strconv.FormatInt(id, 10)))
		return err == nil
	})
	return string(token)
}

func apiStatus(err error) int {
	var e *endpoint.JobAPIError
	if errors.As(err, &e) {
		return e.Status
	}
	if err == nil {
		return 0
	}
	return -1
}

func TestJobTokensReachOnlyTheirOwnRunningJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	n, s := testNode(t, func(c *Config) {
		c.Services = []Service{{Type: "svc", Argv: []string{"sh", "-c", tokenScript, "sh", dir}}}
	})
	// Runs before the node's cleanup waits for its runs, also when the test fails.
	t.Cleanup(func() { writeFile(t, filepath.Join(dir, "gate"), "") })
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	n.url = srv.URL
	execJob := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"sh", "-c", tokenScript, "sh", dir}, Load: 1, MaxAttempts: 1})
	svcJob := offerFor(t, s, engine.JobInsertParams{Type: "svc", Load: 1, MaxAttempts: 1})
	for _, o := range []engine.DispatchOffer{execJob, svcJob} {
		if res := n.runner.Accept(ctx, o); res.Verdict != engine.OfferAccepted {
			t.Fatalf("offer: %+v, want accepted", res)
		}
	}
	execToken, svcToken := readToken(t, dir, execJob.JobID), readToken(t, dir, svcJob.JobID)
	asExec := endpoint.NewJobClient(srv.URL, execToken, execJob.JobID)
	asSvc := endpoint.NewJobClient(srv.URL, svcToken, svcJob.JobID)

	// One job's token gives nothing of another job.
	posing := endpoint.NewJobClient(srv.URL, execToken, svcJob.JobID)
	if err := posing.Progress(ctx, endpoint.JobProgress{Percent: 99}); apiStatus(err) != http.StatusForbidden {
		t.Errorf("progress for another job: %v, want 403", err)
	}
	if _, err := posing.SubmitChild(ctx, endpoint.ChildRequest{Type: engine.TypeNoop}); apiStatus(err) != http.StatusForbidden {
		t.Errorf("child of another job: %v, want 403", err)
	}

	// Progress goes to the job's record.
	if err := asExec.Progress(ctx, endpoint.JobProgress{Percent: 40, Message: "half"}); err != nil {
		t.Fatalf("progress: %v", err)
	}
	waitJob(t, s, execJob.JobID, func(j *engine.Job) bool { return j.Progress == 40 && j.ProgressMessage == "half" })
	if j, _ := s.JobGet(ctx, svcJob.JobID); j.Progress != 0 {
		t.Errorf("the other job's progress is %d, want 0", j.Progress)
	}

	// Children: a job that is not exec gets no exec children.
	if _, err := asSvc.SubmitChild(ctx, endpoint.ChildRequest{Type: engine.TypeExec, Args: []string{"true"}}); apiStatus(err) != http.StatusForbidden {
		t.Errorf("exec child of a svc job: %v, want 403", err)
	}
	svcChild, err := asSvc.SubmitChild(ctx, endpoint.ChildRequest{Type: engine.TypeNoop})
	if err != nil {
		t.Fatalf("noop child of a svc job: %v", err)
	}
	execChild, err := asExec.SubmitChild(ctx, endpoint.ChildRequest{Type: engine.TypeExec, Args: []string{"true"}, Timeout: "1m"})
	if err != nil {
		t.Fatalf("exec child of an exec job: %+v, %v", execChild, err)
	}
	for parent, child := range map[int64]int64{svcJob.JobID: svcChild.ID, execJob.JobID: execChild.ID} {
		c, err := s.JobGet(ctx, child)
		if err != nil || c.ParentID == nil || *c.ParentID != parent || c.Creator != "job "+strconv.FormatInt(parent, 10)+"@n1" {
			t.Errorf("child %d: %+v, %v; want a child of %d created by that job", child, c, err, parent)
		}
		// The audit trail names the job as who submitted it.
		events, err := s.EventList(ctx, engine.EventListParams{JobID: &child})
		if err != nil || len(events) != 1 || events[0].Verb != engine.EventSubmit || events[0].Who != c.Creator {
			t.Errorf("events of child %d: %+v, %v; want one submit by %q", child, events, err, c.Creator)
		}
	}
	if _, err := asExec.SubmitChild(ctx, endpoint.ChildRequest{Type: engine.TypeNoop, Load: engine.Ptr(-1.0)}); apiStatus(err) != http.StatusBadRequest {
		t.Errorf("child with a negative load: %v, want 400", err)
	}
	children, err := asExec.Children(ctx)
	if err != nil || len(children) != 1 || children[0].ID != execChild.ID || children[0].Status != engine.StatusQueued {
		t.Errorf("children of the exec job: %v, %v; want only %d QUEUED", children, err, execChild.ID)
	}

	// Once the run has ended, its token is worth nothing.
	writeFile(t, filepath.Join(dir, "gate"), "")
	waitJob(t, s, execJob.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
	if !waitfor.Within(10*time.Second, func() bool {
		err = asExec.Progress(ctx, endpoint.JobProgress{Percent: 50})
		return apiStatus(err) == http.StatusUnauthorized
	}) {
		t.Fatalf("progress after the run ended: %v, want 401", err)
	}
	if j, _ := s.JobGet(ctx, execJob.JobID); j.Status != engine.StatusFinished || j.Progress != 40 {
		t.Errorf("job ended %s at %d%%, want FINISHED at 40", j.Status, j.Progress)
	}
	if strings.Contains(jobLog(t, s, execJob.JobID), execToken) {
		t.Error("the job's token is in its log")
	}
}
