package runner

import (
	"slices"
	"strings"
	"testing"
)

// Not parallel: it sets a variable of the test process, the node's
// environment.
func TestAProcessGetsOnlyTheSpecsEnvironment(t *testing.T) {
	t.Setenv("RUNNER_TEST_SECRET", "hunter2")
	out := newRecordingOutput()
	r := start(t, Spec{JobID: 7, Attempt: 3, Argv: []string{"env"}, Env: []string{"A=1", "B=2", "A=3"}}, out)
	if res := waitDone(t, r); res.Outcome != Succeeded {
		t.Fatalf("env: %+v\n%s", res, out.logText())
	}
	got := strings.Split(strings.TrimSpace(out.logText()), "\n")
	slices.Sort(got)
	// Later entries win, as the spec says.
	want := []string{"A=3", "B=2", "JOBCTL_ATTEMPT=3", "JOBCTL_JOB_ID=7"}
	if !slices.Equal(got, want) {
		t.Errorf("the process saw %q, want exactly %q", got, want)
	}
}
