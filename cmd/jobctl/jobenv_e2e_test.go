package main_test

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clusterToken reads the cluster token a node created in the database.
func clusterToken(t *testing.T, dsn string) string {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var token string
	if err := db.QueryRow(`SELECT value FROM settings WHERE name = 'cluster_token'`).Scan(&token); err != nil || token == "" {
		t.Fatalf("reading the cluster token: %q, %v", token, err)
	}
	return token
}

func TestAJobGetsNoDatabaseAddressNorClusterToken(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	// The server trusts the user: the password is never checked, but it
	// is part of the address the node was given, and no job may see it.
	u, err := url.Parse(c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	secret := "pw-" + randomSuffix()
	u.User = url.UserPassword(u.User.Username(), secret)
	c.dsn = u.String()
	n := c.serve("n1", "--exec")
	id := c.submit("--", "env")
	if j := c.waitStatus(id, "FINISHED", 30*time.Second); j.ExitCode == nil || *j.ExitCode != 0 {
		t.Fatalf("env ended %+v", j)
	}
	log := c.ok("logs", id)
	token := clusterToken(t, c.dsn)
	for what, s := range map[string]string{"JOBCTL_DB": "JOBCTL_DB", "the database address": c.dsn,
		"the database password": secret, "the cluster token": token} {
		if strings.Contains(log, s) {
			t.Errorf("the job saw %s:\n%s", what, log)
		}
	}
	for _, want := range []string{"JOBCTL_JOB_ID=" + id + "\n", "JOBCTL_URL=http://" + n.addr + "\n", "JOBCTL_JOB_TOKEN=", "JOBCTL_NODE=n1\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("the job's environment lacks %q:\n%s", want, log)
		}
	}
	// The job printed its own token; the node must not have.
	_, rest, _ := strings.Cut(log, "JOBCTL_JOB_TOKEN=")
	jobToken, _, _ := strings.Cut(rest, "\n")
	if len(jobToken) < 32 || strings.Contains(n.log.String(), jobToken) {
		t.Errorf("job token %q is short or in the node's log", jobToken)
	}
}

// childView is what the test reads of a child in 'list -o json'.
type childView struct {
	ID         int64      `json:"id"`
	Status     string     `json:"status"`
	ParentID   *int64     `json:"parent_id"`
	FinishedAt *time.Time `json:"finished_at"`
}

func TestAJobReportsProgressAndWaitsForItsChildrenThroughItsNode(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	// Room for the parent and its children at once on any machine.
	c.serve("n1", "--exec", "--max-load", "4")
	// The failing commands' errors go to stdout, the pipe the echo after
	// them writes to, so the log has the two in that order: the node reads
	// stdout and stderr through pipes of their own.
	script := `set -e
"$1" progress 40 half
"$1" submit --child -- true
"$1" submit --child -- sh -c 'exit 0'
"$1" wait --children
"$1" list 2>&1 || echo "list exited $?"
"$1" submit --parent 999999 -- true 2>&1 || echo "submit to another parent exited $?"`
	id := c.submit("--", "sh", "-c", script, "sh", binary)
	j := c.waitStatus(id, "FINISHED", 60*time.Second)
	log := c.ok("logs", id)
	if j.Progress != 40 {
		t.Errorf("the job's progress is %d, want the 40 it reported:\n%s", j.Progress, log)
	}
	var full struct {
		ProgressMessage string     `json:"progress_message"`
		FinishedAt      *time.Time `json:"finished_at"`
	}
	if err := json.Unmarshal([]byte(c.ok("show", id, "-o", "json")), &full); err != nil || full.ProgressMessage != "half" {
		t.Errorf("progress message %q (%v), want half", full.ProgressMessage, err)
	}
	var children []childView
	if err := json.Unmarshal([]byte(c.ok("list", "--parent", id, "-o", "json")), &children); err != nil {
		t.Fatal(err)
	}
	if len(children) != 2 {
		t.Fatalf("the job has %d children, want 2:\n%s", len(children), log)
	}
	for _, ch := range children {
		if ch.Status != "FINISHED" || ch.ParentID == nil || strconv.FormatInt(*ch.ParentID, 10) != id {
			t.Errorf("child %+v, want FINISHED with parent %s", ch, id)
		}
		if ch.FinishedAt == nil || full.FinishedAt == nil || full.FinishedAt.Before(*ch.FinishedAt) {
			t.Errorf("child %d finished at %v, the parent at %v: want the parent after its children", ch.ID, ch.FinishedAt, full.FinishedAt)
		}
	}
	for _, want := range []string{
		"jobctl: a job has no database access; inside a job only 'jobctl submit --child', 'jobctl progress' and 'jobctl wait --children' work\nlist exited 1\n",
		"jobctl: a job has no database access;",
		"submit to another parent exited 1\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the job's log lacks %q:\n%s", want, log)
		}
	}
}

func TestAJobTokenCannotReportForAnotherJob(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	n := c.serve("n1", "--exec", "--max-load", "4")
	dir := t.TempDir()
	g := newGate(t)
	t.Cleanup(func() { g.open(t) })
	script := `printf '%s' "$JOBCTL_JOB_TOKEN" > "$1/$JOBCTL_JOB_ID.tmp"; mv "$1/$JOBCTL_JOB_ID.tmp" "$1/$JOBCTL_JOB_ID"; ` + g.script()
	a := c.submit("--", "sh", "-c", script, "sh", dir)
	b := c.submit("--", "sh", "-c", script, "sh", dir)
	tokenOf := func(id string) string {
		var token []byte
		c.eventually(30*time.Second, "job "+id+" to write its token", func() bool {
			var err error
			token, err = os.ReadFile(filepath.Join(dir, id))
			return err == nil
		})
		return string(token)
	}
	tokenA := tokenOf(a)
	tokenOf(b)
	post := func(id, token string) int {
		req, err := http.NewRequest("POST", "http://"+n.addr+"/v1/jobs/"+id+"/progress", strings.NewReader(`{"percent":77}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(b, tokenA); code != http.StatusForbidden {
		t.Errorf("job %s's token posting progress for job %s: HTTP %d, want 403", a, b, code)
	}
	if code := post(a, tokenA+"0"); code != http.StatusUnauthorized {
		t.Errorf("a bad token: HTTP %d, want 401", code)
	}
	if code := post(a, tokenA); code != http.StatusNoContent {
		t.Errorf("job %s's token for itself: HTTP %d, want 204", a, code)
	}
	c.eventually(30*time.Second, "job "+a+"'s progress stored", func() bool { return c.show(a).Progress == 77 })
	if p := c.show(b).Progress; p != 0 {
		t.Errorf("job %s's progress is %d, want 0", b, p)
	}
	g.open(t)
	c.waitStatus(a, "FINISHED", 30*time.Second)
	c.eventually(30*time.Second, "job "+a+"'s token to stop working", func() bool { return post(a, tokenA) == http.StatusUnauthorized })
}

func TestJobCommandsOutsideAJobAreUsageErrors(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	for _, args := range [][]string{{"progress", "40"}, {"submit", "--child", "--", "true"}, {"wait", "--children"}} {
		r := c.run(args...)
		if r.code != 2 || !strings.Contains(r.stderr, "only inside a job") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("jobctl %s outside a job: exit %d, stderr %q; want 2 and one line saying it works only inside a job",
				strings.Join(args, " "), r.code, r.stderr)
		}
	}
}
