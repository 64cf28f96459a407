package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/waitfor"
)

func TestExitStatusMapsToOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		script  string
		outcome Outcome
		code    int
		reason  string
	}{
		{"exit 0", Succeeded, 0, "exit code 0"},
		{"exit 3", Failed, 3, "exit code 3"},
		{"kill -KILL $$", Failed, -1, "killed by SIGKILL"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			t.Parallel()
			r := start(t, Spec{Argv: []string{"sh", "-c", tt.script}}, newRecordingOutput())
			got := measuredDone(t, r)
			want := Result{ExitCode: tt.code, Outcome: tt.outcome, Reason: tt.reason}
			if got != want {
				t.Errorf("result = %+v, want %+v", got, want)
			}
		})
	}
}

func TestStartFailureEndsLikeAShell(t *testing.T) {
	t.Parallel()
	notExecutable := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		argv []string
		code int
	}{
		{"not found", []string{"jobctl-runner-test-no-such-command"}, 127},
		{"not executable", []string{notExecutable}, 126},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := newRecordingOutput()
			r, err := Start(Spec{Argv: tt.argv}, out)
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			got := waitDone(t, r)
			if got.Outcome != Failed || got.ExitCode != tt.code || !strings.HasPrefix(got.Reason, "cannot start: ") {
				t.Errorf("result = %+v, want Failed, exit code %d, reason cannot start: ...", got, tt.code)
			}
			if log := out.logText(); !strings.HasPrefix(log, "jobctl: cannot start "+tt.argv[0]) {
				t.Errorf("log = %q, want a line saying it cannot start", log)
			}
			if err := r.Pause(); !errors.Is(err, ErrFinished) {
				t.Errorf("Pause after the end = %v, want ErrFinished", err)
			}
			r.Cancel("too late", 0) // must not panic or log
			if log := out.logText(); strings.Contains(log, "too late") {
				t.Errorf("Cancel after the end logged: %q", log)
			}
		})
	}
}

func TestStartRefusesEmptyArgv(t *testing.T) {
	t.Parallel()
	for _, argv := range [][]string{nil, {""}} {
		if _, err := Start(Spec{Argv: argv}, newRecordingOutput()); err == nil {
			t.Errorf("Start(%q) succeeded, want an error", argv)
		}
	}
}

func TestPayloadEnvironmentDirAndStderr(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := newRecordingOutput()
	r := start(t, Spec{
		JobID:   42,
		Attempt: 2,
		Argv:    []string{"sh", "-c", `cat; echo; echo "id=$JOBCTL_JOB_ID attempt=$JOBCTL_ATTEMPT extra=$EXTRA dir=$(pwd)" >&2`},
		Stdin:   []byte(`{"n":1}`),
		Env:     []string{"EXTRA=yes"},
		Dir:     dir,
	}, out)
	if res := waitDone(t, r); res.Outcome != Succeeded {
		t.Fatalf("result = %+v, log:\n%s", res, out.logText())
	}
	log := out.logText()
	for _, want := range []string{`{"n":1}`, "id=42 attempt=2 extra=yes dir=" + dir} {
		if !strings.Contains(log, want) {
			t.Errorf("log %q lacks %q", log, want)
		}
	}
}

func TestProgressAndWarningLines(t *testing.T) {
	t.Parallel()
	script := `echo "jobctl:progress 50 half way"
echo "jobctl:progress 150"
echo "jobctl:progress -5 below"
echo "jobctl:progressive 7"
echo "jobctl:warning disk almost full" >&2
echo "jobctl:warning disk almost full"
printf 'jobctl:warning last one'`
	out := newRecordingOutput()
	r := start(t, Spec{Argv: []string{"sh", "-c", script}}, out)
	res := measuredDone(t, r)

	want := Result{ExitCode: 0, Outcome: SucceededWithWarning, Warning: "last one", Reason: "exit code 0"}
	if res != want {
		t.Errorf("result = %+v, want %+v", res, want)
	}
	wantProgress := []progress{{50, "half way"}, {100, ""}, {0, "below"}}
	if got := out.progressCalls(); !slices.Equal(got, wantProgress) {
		t.Errorf("progress = %v, want %v", got, wantProgress)
	}
	// The stderr copy is only log: warnings come from stdout.
	wantWarnings := []string{"disk almost full", "last one"}
	if got := out.warningCalls(); !slices.Equal(got, wantWarnings) {
		t.Errorf("warnings = %q, want %q", got, wantWarnings)
	}
	// stdout and stderr are separate pipes, so only each stream's own order is fixed.
	log := out.logText()
	for _, want := range []string{"jobctl:progress 50 half way\n", "jobctl:progressive 7\n", "jobctl:warning last one"} {
		if !strings.Contains(log, want) {
			t.Errorf("log %q lacks %q: control lines must be logged as they are", log, want)
		}
	}
}

func TestWarningDoesNotHideFailure(t *testing.T) {
	t.Parallel()
	r := start(t, Spec{Argv: []string{"sh", "-c", "echo 'jobctl:warning careful'; exit 4"}}, newRecordingOutput())
	want := Result{ExitCode: 4, Outcome: Failed, Warning: "careful", Reason: "exit code 4"}
	if got := measuredDone(t, r); got != want {
		t.Errorf("result = %+v, want %+v", got, want)
	}
}

func TestTimeoutStopsTheJob(t *testing.T) {
	t.Parallel()
	out := newRecordingOutput()
	r := start(t, Spec{Argv: []string{"sleep", "1000"}, Timeout: 200 * time.Millisecond}, out)
	got := measuredDone(t, r)
	want := Result{ExitCode: -1, Outcome: TimedOut, Reason: "timed out after 200ms"}
	if got != want {
		t.Errorf("result = %+v, want %+v", got, want)
	}
	if log := out.logText(); log != "jobctl: timed out after 200ms, sending SIGTERM\n" {
		t.Errorf("log = %q, want the timeout line", log)
	}
}

// groupScript starts a grandchild in the job's process group, prints its
// pid, and waits for it. On SIGTERM the job waits for the grandchild again
// before it exits, so it ends before the grace period only if the grandchild
// got SIGTERM too.
const groupScript = `trap 'wait; exit 0' TERM; sleep 1000 & echo "$!"; wait`

// grandchildPid waits for the pid groupScript prints.
func grandchildPid(t *testing.T, out *recordingOutput) int {
	t.Helper()
	line, _, _ := strings.Cut(out.waitLog(t, "\n"), "\n")
	pid, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("first log line %q is not a pid", line)
	}
	return pid
}

// waitCommand waits until pid runs the command name.
func waitCommand(t *testing.T, pid int, name string) {
	t.Helper()
	var comm []byte
	var err error
	if !waitfor.Within(hangGuard, func() bool {
		comm, err = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		return err == nil && strings.TrimSpace(string(comm)) == name
	}) {
		t.Fatalf("process %d does not run %s (%q, %v)", pid, name, comm, err)
	}
}

func TestCancelStopsTheWholeProcessGroup(t *testing.T) {
	t.Parallel()
	out := newRecordingOutput()
	r := start(t, Spec{Argv: []string{"sh", "-c", groupScript}}, out)
	grandchild := grandchildPid(t, out)
	// Until it execs, the forked shell still has the job's TERM trap and would
	// swallow the signal.
	waitCommand(t, grandchild, "sleep")

	r.Cancel("by operator", 10*time.Second)
	r.Cancel("again", 10*time.Second)
	got := measuredDone(t, r)
	// Exit 0 after a cancel is still Cancelled: the job ended because it was asked to.
	want := Result{ExitCode: 0, Outcome: Cancelled, Reason: "cancelled: by operator"}
	if got != want {
		t.Errorf("result = %+v, want %+v", got, want)
	}
	waitGone(t, grandchild)
	_, log, _ := strings.Cut(out.logText(), "\n")
	if log != "jobctl: cancelled (by operator), sending SIGTERM\n" {
		t.Errorf("log after the pid = %q, want one cancel line", log)
	}
}

func TestExitStopsLeftoverProcesses(t *testing.T) {
	t.Parallel()
	out := newRecordingOutput()
	// The grandchild keeps stdout open: the run must still end, and take it along.
	r := start(t, Spec{Argv: []string{"sh", "-c", `sleep 1000 & echo "$!"`}}, out)
	if got := waitDone(t, r); got.Outcome != Succeeded {
		t.Errorf("result = %+v, want Succeeded", got)
	}
	waitGone(t, grandchildPid(t, out))
	if log := out.logText(); strings.Contains(log, "output still open") {
		t.Errorf("output was held open: %q", log)
	}
}

func TestCancelKillsAfterGrace(t *testing.T) {
	t.Parallel()
	out := newRecordingOutput()
	// An ignored signal stays ignored across exec, so sleep ignores SIGTERM too.
	r := start(t, Spec{Argv: []string{"sh", "-c", `trap '' TERM; echo ready; while :; do sleep 0.05; done`}}, out)
	out.waitLog(t, "ready\n")

	r.Cancel("", 200*time.Millisecond)
	got := measuredDone(t, r)
	want := Result{ExitCode: -1, Outcome: Cancelled, Reason: "cancelled"}
	if got != want {
		t.Errorf("result = %+v, want %+v", got, want)
	}
	wantLog := "ready\njobctl: cancelled, sending SIGTERM\njobctl: still running 200ms after SIGTERM, sending SIGKILL\n"
	if log := out.logText(); log != wantLog {
		t.Errorf("log = %q, want %q", log, wantLog)
	}
}

// fileSize is the size of path, 0 while it does not exist.
func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// waitGrowth waits until path is larger than size.
func waitGrowth(t *testing.T, path string, size int64) {
	t.Helper()
	waitfor.Until(t, hangGuard, fmt.Sprintf("%s to grow past %d bytes", path, size), func() bool { return fileSize(t, path) > size })
}

// counterScript appends a line to the file named by $1 every 50ms.
const counterScript = `i=0; while :; do i=$((i+1)); echo "$i" >> "$1"; sleep 0.05; done`

func TestPauseStopsTheJobAndResumeContinues(t *testing.T) {
	t.Parallel()
	counter := filepath.Join(t.TempDir(), "counter")
	out := newRecordingOutput()
	r := start(t, Spec{Argv: []string{"sh", "-c", counterScript, "sh", counter}}, out)
	waitGrowth(t, counter, 0)

	if err := r.Pause(); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if err := r.Pause(); err != nil {
		t.Fatalf("second Pause: %v", err)
	}
	if !r.Paused() {
		t.Error("Paused() = false after Pause")
	}
	time.Sleep(50 * time.Millisecond) // let a write already under way land
	paused := fileSize(t, counter)
	time.Sleep(300 * time.Millisecond)
	if size := fileSize(t, counter); size != paused {
		t.Fatalf("file grew from %d to %d bytes while paused", paused, size)
	}

	if err := r.Resume(); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if r.Paused() {
		t.Error("Paused() = true after Resume")
	}
	waitGrowth(t, counter, paused)
	if log := out.logText(); log != "jobctl: paused\njobctl: resumed\n" {
		t.Errorf("log = %q, want one paused and one resumed line", log)
	}
}

func TestCancelResumesAPausedJob(t *testing.T) {
	t.Parallel()
	counter := filepath.Join(t.TempDir(), "counter")
	out := newRecordingOutput()
	r := start(t, Spec{Argv: []string{"sh", "-c", counterScript, "sh", counter}}, out)
	waitGrowth(t, counter, 0)
	if err := r.Pause(); err != nil {
		t.Fatalf("Pause: %v", err)
	}

	// The grace is long enough to tell: the job must end through SIGTERM, not SIGKILL.
	r.Cancel("stop", 5*time.Second)
	if got := waitDone(t, r); got.Outcome != Cancelled || got.Reason != "cancelled: stop" {
		t.Errorf("result = %+v, want Cancelled", got)
	}
	if log := out.logText(); strings.Contains(log, "SIGKILL") {
		t.Errorf("a paused job needed SIGKILL: %q", log)
	}
	if r.Paused() {
		t.Error("Paused() = true after Cancel")
	}
	if err := r.Resume(); !errors.Is(err, ErrFinished) {
		t.Errorf("Resume after the end = %v, want ErrFinished", err)
	}
}
