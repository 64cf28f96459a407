package commands

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// complete runs the shell-completion entry point and returns the offered
// choices (without descriptions).
func (e *testEnv) complete(t *testing.T, args ...string) []string {
	t.Helper()
	if err := e.run(t, append([]string{"__complete"}, args...)...); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(e.stdout.String()), "\n") {
		if strings.HasPrefix(line, ":") { // the directive line
			continue
		}
		out = append(out, strings.SplitN(line, "\t", 2)[0])
	}
	return out
}

func TestCompletionOffersJobsTheVerbApplies(t *testing.T) {
	e := newTestEnv(t)
	queued := e.insert(t, engine.JobInsertParams{})
	done := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusDispatching, engine.StatusRunning, engine.StatusFinished)
	if got := e.complete(t, "cancel", ""); len(got) != 1 || got[0] != fmt.Sprint(queued.ID) {
		t.Errorf("cancel completes %v; want only the queued job %d", got, queued.ID)
	}
	if got := e.complete(t, "requeue", ""); len(got) != 1 || got[0] != fmt.Sprint(done.ID) {
		t.Errorf("requeue completes %v; want only the ended job %d", got, done.ID)
	}
	if got := e.complete(t, "show", ""); len(got) != 2 || got[0] != fmt.Sprint(done.ID) {
		t.Errorf("show completes %v; want both jobs, newest first", got)
	}
}

func TestCompletionOffersNodes(t *testing.T) {
	e := newTestEnv(t)
	_, err := e.store.NodeRegister(context.Background(), engine.NodeRegisterParams{
		Node: engine.Node{Name: "worker-1", MaxLoad: 1, MaxJobs: 1, Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.complete(t, "nodes", "maintenance", ""); len(got) != 1 || got[0] != "worker-1" {
		t.Errorf("nodes maintenance completes %v; want the node", got)
	}
	if got := e.complete(t, "nodes", "maintenance", "worker-1", ""); strings.Join(got, ",") != "on,off" {
		t.Errorf("nodes maintenance NAME completes %v; want on, off", got)
	}
	if got := e.complete(t, "serve", "--selector", ""); len(got) != 4 {
		t.Errorf("serve --selector completes %v; want the four selectors", got)
	}
}
