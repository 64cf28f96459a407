package commands

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// Priorities from every place a job is made or put back: submit, its batch
// lines, requeue; and list filters and sorts by them.
func TestPriorityOnSubmitBatchRequeueAndList(t *testing.T) {
	e := newTestEnv(t)
	submitted := func(args ...string) *engine.Job {
		t.Helper()
		if err := e.run(t, append([]string{"submit"}, args...)...); err != nil {
			t.Fatal(err)
		}
		id, err := strconv.ParseInt(strings.TrimSpace(e.stdout.String()), 10, 64)
		if err != nil {
			t.Fatalf("submit printed %q", e.stdout.String())
		}
		return e.get(t, id)
	}
	if j := submitted("--type", "noop"); j.Priority != engine.DefaultPriority {
		t.Errorf("default priority %d, want %d", j.Priority, engine.DefaultPriority)
	}
	urgent := submitted("--type", "noop", "--priority", "90")
	if urgent.Priority != 90 {
		t.Errorf("--priority 90 stored %d", urgent.Priority)
	}
	if j := submitted("--type", "noop", "--parent", fmt.Sprint(urgent.ID)); j.Priority != 90 {
		t.Errorf("a child of a priority-90 job has %d, want its parent's", j.Priority)
	}

	batch := filepath.Join(t.TempDir(), "jobs")
	if err := writeFile(batch, `{"type":"noop","priority":7}`+"\n"+`{"type":"noop"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "submit", "--batch", batch, "--priority", "20"); err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(e.stdout.String())
	for i, want := range []int{7, 20} {
		id, _ := strconv.ParseInt(ids[i], 10, 64)
		if got := e.get(t, id).Priority; got != want {
			t.Errorf("batch line %d: priority %d, want %d", i+1, got, want)
		}
	}
	if err := writeFile(batch, `{"type":"noop","priority":0}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "submit", "--batch", batch); !isUsage(err) || !strings.Contains(err.Error(), `"priority" 0`) {
		t.Errorf("a batch line with priority 0: %v, want a usage error naming it", err)
	}

	// list --priority, --sort priority.
	if err := e.run(t, "list", "--priority", "80..100", "-q"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(e.stdout.String()); len(got) != 2 || got[0] != fmt.Sprint(urgent.ID) {
		t.Errorf("list --priority 80..100: %q, want job %d and its child", got, urgent.ID)
	}
	if err := e.run(t, "list", "--sort", "-priority", "-q", "--limit", "0"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(e.stdout.String()); len(got) != 5 || got[len(got)-1] != ids[0] {
		t.Errorf("list --sort -priority: %q, want the priority-7 job %s last", got, ids[0])
	}
	for _, bad := range []string{"0", "1..x", "90..10", "200"} {
		if err := e.run(t, "list", "--priority", bad); !isUsage(err) {
			t.Errorf("list --priority %s: %v, want a usage error", bad, err)
		}
	}

	// requeue --priority.
	done := e.move(t, urgent, engine.StatusRunning, engine.StatusFailed)
	if err := e.run(t, "requeue", "--priority", "100", fmt.Sprint(done.ID)); err != nil {
		t.Fatal(err)
	}
	if j := e.get(t, done.ID); j.Status != engine.StatusRestart || j.Priority != 100 {
		t.Errorf("requeued job %s with priority %d, want RESTART with 100", j.Status, j.Priority)
	}
	if err := e.run(t, "requeue", "--priority", "101", fmt.Sprint(done.ID)); !isUsage(err) {
		t.Errorf("requeue --priority 101: %v, want a usage error", err)
	}
	if err := e.run(t, "cancel", "--priority", "5", fmt.Sprint(done.ID)); err == nil {
		t.Error("cancel --priority: accepted, want an unknown flag")
	}
}

func isUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}
