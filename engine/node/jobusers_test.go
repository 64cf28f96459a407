package node

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// Not parallel: it sets variables of the test process, the node's
// environment.
func TestJobsOfAnotherUserGetItsIdentityAndAPrivateTmpdir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs jobs as the users nobody and daemon")
	}
	nobody, err1 := user.Lookup("nobody")
	daemon, err2 := user.Lookup("daemon")
	if err1 != nil || err2 != nil {
		t.Skipf("this machine lacks the user nobody or daemon (%v, %v)", err1, err2)
	}
	t.Setenv("HOME", "/root")
	t.Setenv("USER", "root")
	// The job user must reach its TMPDIR in the node's: not in t.TempDir's.
	tmp, err := os.MkdirTemp("", "jobusers-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	n, s := testNode(t, func(c *Config) {
		c.JobUser = "nobody"
		c.StateDir = t.TempDir()
		c.Services = []Service{{Type: "who", Argv: []string{"sh", "-c", "id -u"}, User: "daemon"}}
	})
	if err := n.resources.openTempDirs(); err != nil {
		t.Fatal(err)
	}
	report := `echo "uid=$(id -u) home=$HOME user=$USER logname=$LOGNAME pwd=$(pwd)"; echo "tmpdir=$TMPDIR"; stat -c 'mode=%a owner=%U' "$TMPDIR"; touch "$TMPDIR/left"`
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"sh", "-c", report}, Load: 1, MaxAttempts: 1})
	if res := n.runner.Accept(context.Background(), o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v, want accepted", res)
	}
	if j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() }); j.Status != engine.StatusFinished {
		t.Fatalf("the job ended %s: %s", j.Status, jobLog(t, s, o.JobID))
	}
	log := jobLog(t, s, o.JobID)
	dir := nobody.HomeDir
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = "/"
	}
	want := "uid=" + nobody.Uid + " home=" + nobody.HomeDir + " user=nobody logname=nobody pwd=" + dir + "\n"
	if !strings.Contains(log, want) || !strings.Contains(log, "mode=700 owner=nobody\n") {
		t.Errorf("the job said:\n%s\nwant %q and its TMPDIR 0700, nobody's", log, want)
	}
	_, rest, _ := strings.Cut(log, "tmpdir=")
	tmpdir, _, _ := strings.Cut(rest, "\n")
	if filepath.Dir(tmpdir) != n.resources.tempDirs.Base() {
		t.Errorf("TMPDIR %q is not in the node's directory of them, %s", tmpdir, n.resources.tempDirs.Base())
	}
	if _, err := os.Stat(tmpdir); !os.IsNotExist(err) {
		t.Errorf("the job's TMPDIR %s is still there after it ended (%v)", tmpdir, err)
	}

	o = offerFor(t, s, engine.JobInsertParams{Type: "who", Load: 1, MaxAttempts: 1})
	if res := n.runner.Accept(context.Background(), o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v, want accepted", res)
	}
	waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
	if got := strings.TrimSpace(jobLog(t, s, o.JobID)); got != daemon.Uid {
		t.Errorf("the service with user daemon ran as uid %q, want %s", got, daemon.Uid)
	}
}

func TestJobUsersMustExist(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{JobUser: "no-such-user-of-jobctl"},
		{Services: []Service{{Type: "x", Argv: []string{"x"}, User: "root:no-such-group-of-jobctl"}}},
	} {
		if _, err := cfg.JobUsers(); err == nil || !strings.Contains(err.Error(), "no-such-") {
			t.Errorf("%+v: %v, want an error naming the missing user or group", cfg, err)
		}
	}
	if us, err := (&Config{}).JobUsers(); err != nil || len(us) != 0 {
		t.Errorf("no job user: %v, %v; want none and no error", us, err)
	}
}
