package main_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// simJob is one job of the workload both the cluster and the simulation run.
type simJob struct {
	load     int
	duration time.Duration
}

// TestSimulateMatchesCluster runs a small workload of sleep jobs on a real
// two-node cluster and in `jobctl simulate` with the same nodes, and expects
// every job on the same node, started in the same order (jobs started in
// one round count as started together: a round offers its nodes their
// shares at once, so their start times interleave). The workload is
// laid out so that no outcome hangs on timing: jobs 1-5 fill both nodes in
// the first round, 7 takes the room job 2 leaves on small after 2s, and 6
// (load 2) fits only once job 4 has left small empty at 4s, while big is
// full until 6s.
func TestSimulateMatchesCluster(t *testing.T) {
	jobs := []simJob{{2, 6 * time.Second}, {1, 2 * time.Second}, {1, 6 * time.Second}, {1, 4 * time.Second},
		{1, 6 * time.Second}, {2, time.Second}, {1, time.Second}}

	c := sqliteCluster(t)
	c.serve("big", "--max-load", "4", "--max-load-avg", "off")
	c.serve("small", "--max-load", "2", "--max-load-avg", "off")
	// Every job becomes dispatchable at the same instant, as in the
	// simulation, where they are all submitted at its start.
	start := time.Now().Add(5 * time.Second)
	at := start.UTC().Format(time.RFC3339Nano)
	var ids []string
	for _, j := range jobs {
		ids = append(ids, c.submit("--type", "sleep", "--load", fmt.Sprint(j.load),
			"--payload", fmt.Sprintf(`{"duration":%q}`, j.duration), "--at", at))
	}
	if time.Now().After(start) {
		t.Fatal("submitting took longer than the start delay; raise it")
	}
	var real []simPlaced
	for _, id := range ids {
		j := c.waitStatus(id, "FINISHED", 30*time.Second)
		real = append(real, simPlaced{Job: id, Node: j.Node, start: *j.StartedAt})
	}
	slices.SortStableFunc(real, func(a, b simPlaced) int { return a.start.Compare(b.start) })

	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.yaml")
	writeSimFile(t, nodes, "- {name: big, max_load: 4, services: [noop, sleep]}\n- {name: small, max_load: 2, services: [noop, sleep]}\n")
	workload := filepath.Join(dir, "jobs.yaml")
	var text string
	for i, j := range jobs {
		text += fmt.Sprintf("- {id: %s, type: sleep, load: %d, duration: %s}\n", ids[i], j.load, j.duration)
	}
	writeSimFile(t, workload, text)
	var out struct {
		Results []struct {
			Placements []struct {
				Job  json.Number `json:"job"`
				Node string      `json:"node"`
			} `json:"placements"`
		} `json:"results"`
	}
	stdout := c.ok("simulate", "--nodes", nodes, "--jobs", workload, "--interval", "200ms", "-o", "json")
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Results) != 1 {
		t.Fatalf("simulate -o json: %v\n%s", err, stdout)
	}
	var sim []simPlaced
	for _, p := range out.Results[0].Placements {
		sim = append(sim, simPlaced{Job: p.Job.String(), Node: p.Node})
	}
	// The first round places jobs 1-5; sort it by job to compare.
	if len(real) == len(jobs) {
		slices.SortFunc(real[:5], func(a, b simPlaced) int {
			return cmp.Or(cmp.Compare(len(a.Job), len(b.Job)), strings.Compare(a.Job, b.Job))
		})
	}
	if fmt.Sprint(sim) != fmt.Sprint(real) {
		t.Errorf("placements in start order:\nsimulated %v\n  cluster %v", sim, real)
	}
	t.Logf("placements: %v", sim)
}

// simPlaced is one job on one node.
type simPlaced struct {
	Job, Node string
	start     time.Time
}

func (p simPlaced) String() string { return p.Job + "@" + p.Node }

// writeSimFile writes one input file of the simulation.
func writeSimFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSimulateBadInputExitsTwo: a workload or node list that cannot be
// simulated is a usage error, said on one line.
func TestSimulateBadInputExitsTwo(t *testing.T) {
	c := sqliteCluster(t)
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.yaml")
	writeSimFile(t, nodes, "- {name: a, max_load: 2}\n")
	typo := filepath.Join(dir, "typo.yaml")
	writeSimFile(t, typo, "- {name: a, max_lod: 2}\n")
	for _, args := range [][]string{
		{"simulate", "--nodes", typo, "--generate", "count=1"},
		{"simulate", "--nodes", filepath.Join(dir, "missing.yaml"), "--generate", "count=1"},
		{"simulate", "--nodes", nodes, "--generate", "count=1,rate=fast"},
		{"simulate", "--nodes", nodes, "--generate", "count=1", "--selector", "best"},
		{"simulate", "--nodes", nodes},
	} {
		r := c.run(args...)
		if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "jobctl: ") {
			t.Errorf("jobctl %v: exit %d, stdout %q, stderr %q; want exit 2 and one line on stderr", args, r.code, r.stdout, r.stderr)
		}
	}
}
