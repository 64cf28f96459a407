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
	done := e.move(t, e.insert(t, engine.JobInsertParams{}), engine.StatusRunning, engine.StatusFinished)
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
	_, err := engine.RegisterNode(context.Background(), e.store, engine.NodeRegisterParams{
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

// --type completes the types the registered nodes offer, and never file
// names; --node completes node names, on every command that takes one.
func TestCompletionOffersTypesAndNodes(t *testing.T) {
	e := newTestEnv(t)
	e.addNode(t, "big", 8, []string{engine.TypeNoop, "encode"}, nil)
	e.addNode(t, "small", 2, []string{engine.TypeNoop, "render"}, nil)
	for _, args := range [][]string{
		{"submit", "--type", ""},
		{"submit", "--rollback-type", ""},
		{"schedules", "add", "nightly", "--type", ""},
		{"list", "--type", ""},
		{"limits", "set", ""},
	} {
		if got := e.complete(t, args...); strings.Join(got, ",") != "encode,noop,render" {
			t.Errorf("%v completes %v; want the offered types", args, got)
		}
		if !strings.Contains(e.stdout.String(), "\n:4\n") { // ShellCompDirectiveNoFileComp
			t.Errorf("%v: %q; want no file names offered", args, e.stdout.String())
		}
	}
	if got := e.complete(t, "list", "--type", "encode,r"); strings.Join(got, " ") != "encode,encode encode,noop encode,render" {
		t.Errorf("list --type encode,r completes %v; want each type after the comma", got)
	}
	if !strings.Contains(e.stdout.String(), "noop\toffered by 2 nodes") {
		t.Errorf("%q; want each type described by how many nodes offer it", e.stdout.String())
	}
	for _, args := range [][]string{
		{"list", "--node", ""},
		{"serve", "--node", ""},
		{"nodes", "drain", ""},
		{"nodes", "rm", ""},
	} {
		if got := e.complete(t, args...); strings.Join(got, ",") != "big,small" {
			t.Errorf("%v completes %v; want the node names", args, got)
		}
	}
}
