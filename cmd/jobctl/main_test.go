package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/commands"
	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
)

// runJobctl runs one command line against dsn and returns its exit code,
// stdout and stderr.
func runJobctl(t *testing.T, dsn string, args ...string) (int, string, string) {
	t.Helper()
	ios, stdout, stderr := commands.TestIO("")
	code := run(append([]string{"--db", dsn}, args...), ios)
	return code, stdout.String(), stderr.String()
}

func TestExitCodes(t *testing.T) {
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "jobctl.db")

	code, out, _ := runJobctl(t, dsn, "submit", "--", "true")
	if code != exitOK || strings.TrimSpace(out) != "1" {
		t.Fatalf("submit: exit %d, stdout %q; want 0 and id 1", code, out)
	}

	// End job 1 FAILED and job 2 FINISHED as nodes would.
	ctx := context.Background()
	s, err := dbstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	finish := func(id int64, to engine.Status) {
		j, err := s.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []engine.Status{engine.StatusRunning, to} {
			u := engine.JobUpdate{ID: id, From: j.Status, Version: j.Version, To: st, Node: engine.Ptr("n1")}
			if j, err = s.JobUpdate(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
	}
	finish(1, engine.StatusFailed)
	if code, _, _ := runJobctl(t, dsn, "submit", "--type", "noop"); code != exitOK {
		t.Fatalf("second submit: exit %d", code)
	}
	finish(2, engine.StatusFinished)
	if code, _, _ := runJobctl(t, dsn, "submit", "--type", "noop"); code != exitOK {
		t.Fatalf("third submit: exit %d", code)
	}

	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"wait", "2"}, exitOK, ""},
		{[]string{"list"}, exitOK, ""},
		{[]string{"wait", "1", "2"}, exitJobFailed, "jobctl: job 1 ended FAILED\n"},
		{[]string{"wait", "3", "--timeout", "200ms"}, exitTimeout, "jobctl: timed out after 200ms waiting for job 3; wait again with 'jobctl wait 3'\n"},
		{[]string{"show", "987654321"}, exitNotFound, "jobctl: job 987654321 not found\n"},
		{[]string{"cancel", "3", "987654321"}, exitNotFound, "jobctl: job 987654321 not found\n"},
		{[]string{"submit", "--load", "nope", "--", "true"}, exitUsage, "jobctl: invalid argument \"nope\" for \"--load\" flag: not a number (see 'jobctl submit --help')\n"},
		{[]string{"list", "--state", "NOSUCHSTATE"}, exitUsage, ""},
		{[]string{"list", "--nosuch"}, exitUsage, "jobctl: unknown flag: --nosuch (see 'jobctl list --help')\n"},
		{[]string{"nosuch"}, exitUsage, "jobctl: unknown command \"nosuch\" for \"jobctl\" (see 'jobctl --help')\n"},
		{[]string{"delete", "3"}, exitError, "jobctl: job 3 is QUEUED and cannot become DELETED: only ended jobs can be deleted; cancel it first\n"},
	}
	for _, c := range cases {
		code, _, stderr := runJobctl(t, dsn, c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d; want %d (stderr %q)", c.args, code, c.code, stderr)
		}
		if c.stderr != "" && stderr != c.stderr {
			t.Errorf("%v: stderr %q; want %q", c.args, stderr, c.stderr)
		}
		if c.code != exitOK && strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: stderr %q; want exactly one line", c.args, stderr)
		}
	}
}

func TestBadDatabase(t *testing.T) {
	code, _, stderr := runJobctl(t, "nosuch:thing", "list")
	// A DSN that does not parse is a usage error; one that parses but
	// cannot be reached is not.
	if code != exitUsage || !strings.HasPrefix(stderr, "jobctl: ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("bad DSN: exit %d, stderr %q; want exit 2 and one line", code, stderr)
	}
	code, _, stderr = runJobctl(t, "postgres://jobctl:s3cret@127.0.0.1:1/none?connect_timeout=2", "list")
	if code != exitError || strings.Contains(stderr, "s3cret") {
		t.Errorf("unreachable database: exit %d, stderr %q; want exit 1 without the password", code, stderr)
	}
}

func TestExitCodeMapping(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{errors.New("boom"), exitError},
		{&commands.UsageError{Err: errors.New("bad flag")}, exitUsage},
		{&engine.InvalidError{What: "job", Problems: []string{"key is longer than 255 characters"}}, exitUsage},
		{fmt.Errorf("--parent: %w", &engine.NotFoundError{What: "job", ID: "9"}), exitNotFound},
		{&commands.WaitFailedError{Jobs: []*engine.Job{{ID: 1, Status: engine.StatusFailed}}}, exitJobFailed},
		{&commands.WaitTimeoutError{Pending: []int64{1}}, exitTimeout},
		{fmt.Errorf("waiting: %w", context.Canceled), exitInterrupted},
	}
	for _, c := range cases {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d; want %d", c.err, got, c.want)
		}
	}
}

func TestPrintErrorIsOneLine(t *testing.T) {
	var b strings.Builder
	printError(&b, errors.Join(errors.New("first"), errors.New("second")), exitError)
	if got := b.String(); got != "jobctl: first; second\n" {
		t.Errorf("printError = %q", got)
	}
}
