package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// pipe runs `jobctl list -q args…` and feeds what it printed to the next
// command's stdin, the way the help's recipes chain them.
func (e *testEnv) pipe(t *testing.T, listArgs []string, next ...string) error {
	t.Helper()
	if err := e.run(t, append([]string{"list", "-q"}, listArgs...)...); err != nil {
		t.Fatal(err)
	}
	e.f.IO.In = strings.NewReader(e.stdout.String())
	return e.run(t, next...)
}

func TestVerbIDsFromStdin(t *testing.T) {
	e := newTestEnv(t)
	a := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFailed)
	b := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFailed)
	q := e.insert(t, engine.JobInsertParams{})

	// The recipe of 'jobctl requeue --help'.
	if err := e.pipe(t, []string{"--state", "failed"}, "requeue", "-"); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d\tRESTART\n%d\tRESTART\n", a.ID, b.ID); e.stdout.String() != want {
		t.Errorf("requeue - printed %q; want %q", e.stdout.String(), want)
	}
	// Nothing matches now: nothing to do, exit 0, no output.
	if err := e.pipe(t, []string{"--state", "failed"}, "requeue", "-"); err != nil {
		t.Errorf("requeue - on empty stdin: %v; want success", err)
	}
	if e.stdout.Len() != 0 || e.stderr.Len() != 0 {
		t.Errorf("requeue - on empty stdin wrote %q / %q; want nothing", e.stdout.String(), e.stderr.String())
	}
	e.f.IO.In = strings.NewReader("\n  \n")
	if err := e.run(t, "cancel", "-", "-o", "json"); err != nil || strings.TrimSpace(e.stdout.String()) != "[]" {
		t.Errorf("cancel - -o json on blank stdin: %v, %q; want []", err, e.stdout.String())
	}

	// Ids on stdin, blank-separated, mixed with arguments.
	e.f.IO.In = strings.NewReader(fmt.Sprintf("%d  %d\n", a.ID, b.ID))
	if err := e.run(t, "pause", fmt.Sprint(q.ID), "-"); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d\tPAUSED\n%d\tPAUSED\n%d\tPAUSED\n", q.ID, a.ID, b.ID); e.stdout.String() != want {
		t.Errorf("pause ID - printed %q; want %q", e.stdout.String(), want)
	}
}

func TestVerbStdinBadInputChangesNothing(t *testing.T) {
	e := newTestEnv(t)
	q := e.insert(t, engine.JobInsertParams{})
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{fmt.Sprintf("%d QUEUED\n", q.ID), []string{"cancel", "-"}},
		{fmt.Sprint(q.ID), []string{"cancel", "-", "-"}},
		{"", []string{"cancel"}},
	} {
		e.f.IO.In = strings.NewReader(c.stdin)
		if err := e.run(t, c.args...); !errors.As(err, new(*UsageError)) {
			t.Errorf("%v with stdin %q: %v; want a usage error", c.args, c.stdin, err)
		}
		if j := e.get(t, q.ID); j.Status != engine.StatusQueued {
			t.Errorf("%v with stdin %q left the job %s; want it unchanged", c.args, c.stdin, j.Status)
		}
	}
}

func TestVerbJSON(t *testing.T) {
	e := newTestEnv(t)
	q := e.insert(t, engine.JobInsertParams{})
	r := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning)
	for _, v := range []struct {
		args []string
		want []engine.Status
	}{
		{[]string{"pause", fmt.Sprint(q.ID), fmt.Sprint(r.ID)}, []engine.Status{engine.StatusPaused, engine.StatusPaused}},
		{[]string{"resume", fmt.Sprint(q.ID)}, []engine.Status{engine.StatusQueued}},
		{[]string{"cancel", fmt.Sprint(q.ID), fmt.Sprint(r.ID)}, []engine.Status{engine.StatusCancelled, engine.StatusCancelling}},
		{[]string{"requeue", fmt.Sprint(q.ID)}, []engine.Status{engine.StatusRestart}},
		{[]string{"cancel", fmt.Sprint(q.ID)}, []engine.Status{engine.StatusCancelled}},
	} {
		if err := e.run(t, append(v.args, "-o", "json")...); err != nil {
			t.Fatalf("%v: %v", v.args, err)
		}
		var jobs []*engine.Job
		if err := json.Unmarshal(e.stdout.Bytes(), &jobs); err != nil || len(jobs) != len(v.want) {
			t.Fatalf("%v -o json: %v\n%s", v.args, err, e.stdout.String())
		}
		for i, j := range jobs {
			if j.Status != v.want[i] {
				t.Errorf("%v -o json job %d: %s; want %s", v.args, j.ID, j.Status, v.want[i])
			}
			wantJobJSON(t, strings.Join(v.args, " ")+" -o json", j, e.get(t, j.ID))
		}
	}
	e.f.IO.In = strings.NewReader(fmt.Sprint(q.ID))
	if err := e.run(t, "delete", "-", "--jq", ".[] | .status"); err != nil {
		t.Fatal(err)
	}
	if e.stdout.String() != "DELETED\n" {
		t.Errorf("delete - --jq printed %q; want DELETED", e.stdout.String())
	}
}
