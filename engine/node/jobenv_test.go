package node

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// jobLog is the whole log of a job.
func jobLog(t *testing.T, s engine.Store, id int64) string {
	t.Helper()
	chunks, err := s.JobLogList(context.Background(), engine.JobLogListParams{JobID: id})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for _, c := range chunks {
		log.Write(c.Data)
	}
	return log.String()
}

// Not parallel: it sets variables of the test process, the node's
// environment.
func TestAJobSeesOnlyItsOwnVariablesAndTheAllowedOnes(t *testing.T) {
	t.Setenv("JOBENV_SECRET", "hunter2")
	t.Setenv("JOBENV_PASSED", "yes")
	t.Setenv("JOBCTL_DB", "postgres://jobctl:hunter2@db/jobctl")
	t.Setenv("LANG", "C.UTF-8")
	n, s := testNode(t, func(c *Config) { c.PassEnv = []string{"JOBENV_PASSED", " PATH"} })
	n.url = "http://127.0.0.1:7420"
	parent, err := s.JobInsert(context.Background(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"env"}, Load: 1, MaxAttempts: 1,
		Key: "k1", ParentID: &parent.ID})
	if res := n.runner.Accept(context.Background(), o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v, want accepted", res)
	}
	if j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() }); j.Status != engine.StatusFinished {
		t.Fatalf("env ended %s: %s", j.Status, jobLog(t, s, o.JobID))
	}
	log := jobLog(t, s, o.JobID)
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		name, value, _ := strings.Cut(line, "=")
		got[name] = value
	}
	want := []string{"JOBCTL_JOB_ID", "JOBCTL_ATTEMPT", "JOBCTL_KEY", "JOBCTL_PARENT_ID", "JOBCTL_NODE", "JOBCTL_URL",
		"JOBCTL_JOB_TOKEN", "JOBENV_PASSED"}
	for _, name := range DefaultPassEnv {
		if _, ok := os.LookupEnv(name); ok {
			want = append(want, name)
		}
	}
	slices.Sort(want)
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("the job saw the variables %v, want exactly %v", names, want)
	}
	if strings.Contains(log, "hunter2") {
		t.Errorf("the job saw a secret of its node:\n%s", log)
	}
	for name, value := range map[string]string{"JOBCTL_KEY": "k1", "JOBCTL_NODE": "n1", "JOBCTL_URL": n.url,
		"JOBCTL_ATTEMPT": "1", "JOBCTL_PARENT_ID": strconv.FormatInt(parent.ID, 10), "JOBCTL_JOB_ID": strconv.FormatInt(o.JobID, 10),
		"JOBENV_PASSED": "yes", "LANG": "C.UTF-8", "PATH": os.Getenv("PATH")} {
		if got[name] != value {
			t.Errorf("$%s = %q, want %q", name, got[name], value)
		}
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(got["JOBCTL_JOB_TOKEN"]) {
		t.Errorf("$JOBCTL_JOB_TOKEN = %q, want 64 random hex digits", got["JOBCTL_JOB_TOKEN"])
	}
}

func TestPassEnvCannotNameJobctlVariables(t *testing.T) {
	t.Parallel()
	for _, names := range [][]string{{"JOBCTL_DB"}, {"jobctl_job_token"}, {"A=B"}, {""}, {"PGPASSWORD"}} {
		cfg := Defaults()
		cfg.Name, cfg.PassEnv = "n1", names
		if _, err := New(cfg, nil, engine.SystemClock{}, nil); err == nil || !strings.Contains(err.Error(), "--pass-env") {
			t.Errorf("--pass-env %q: %v, want an error naming --pass-env", names, err)
		}
	}
}

func TestTokensOfEndedRunsAreDropped(t *testing.T) {
	t.Parallel()
	n, _ := testNode(t, nil)
	for i := range 1000 {
		if _, err := n.api.issueJobToken(int64(i+1), 1); err != nil {
			t.Fatal(err)
		}
	}
	// None of these jobs runs here: each sweep drops every grant.
	if left := len(n.api.tokens.grants); left > 64 {
		t.Errorf("%d tokens kept for runs that are not running, want at most 64", left)
	}
}
