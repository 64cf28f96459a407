package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func parseSimulate(t *testing.T, args ...string) (*SimulateOptions, error) {
	t.Helper()
	ios, _, _ := TestIO("")
	var got *SimulateOptions
	err := execParse(NewCmdSimulate(&Factory{IO: ios}, func(_ context.Context, o *SimulateOptions) error {
		got = o
		return nil
	}), args...)
	return got, err
}

func TestSimulateParsing(t *testing.T) {
	o, err := parseSimulate(t, "--nodes", "n.yaml", "--generate", "count=5")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Selectors, []string{"loadfactor"}) || o.Seed != 1 || o.Interval != 2*time.Second ||
		o.Timeline || o.SVGFile != "" || o.Output.Format != formatTable {
		t.Errorf("defaults: %+v", o)
	}
	o, err = parseSimulate(t, "--from-cluster", "--jobs", "j.json", "--selector", "Random,roundrobin",
		"--selector", "lowerweight", "--seed", "9", "--interval", "500ms", "--svg", "x.svg", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !o.FromCluster || o.JobsFile != "j.json" || !slices.Equal(o.Selectors, []string{"random", "roundrobin", "lowerweight"}) ||
		o.Seed != 9 || o.Interval != 500*time.Millisecond || o.SVGFile != "x.svg" || o.Output.Format != formatJSON {
		t.Errorf("flags: %+v", o)
	}
}

func TestSimulateUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--generate", "count=5"},
		{"--nodes", "n.yaml"},
		{"--nodes", "n.yaml", "--from-cluster", "--generate", "count=5"},
		{"--nodes", "n.yaml", "--jobs", "j.yaml", "--generate", "count=5"},
		{"--nodes", "n.yaml", "--generate", "count=5", "--selector", "fastest"},
		{"--nodes", "n.yaml", "--generate", "count=5", "--interval", "0s"},
		{"--nodes", "n.yaml", "--generate", "count=5", "--timeline", "-o", "json"},
		{"--nodes", "n.yaml", "--generate", "count=5", "stray"},
	} {
		_, err := parseSimulate(t, args...)
		var usage *UsageError
		if !errors.As(err, &usage) {
			t.Errorf("simulate %v: err = %v; want a usage error", args, err)
		}
	}
}

// simulateEnv writes the files of a run and returns their directory.
func simulateEnv(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runSimulate(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	ios, stdout, stderr := TestIO("")
	root := NewRootCmd(NewFactory(ios), "1.2.3")
	root.SetArgs(append([]string{"simulate"}, args...))
	err := root.ExecuteContext(context.Background())
	return stdout.String(), stderr.String(), err
}

const simNodes = `
- {name: big, max_load: 4}
- {name: small, max_load: 2}
`

func TestSimulatePiped(t *testing.T) {
	dir := simulateEnv(t, map[string]string{"nodes.yaml": simNodes, "jobs.json": `[
		{"duration": "10s"}, {"duration": "10s"}, {"duration": "10s"},
		{"load": 2, "duration": 4, "submit_at": "1s"}]`})
	out, _, err := runSimulate(t, "--nodes", filepath.Join(dir, "nodes.yaml"), "--jobs", filepath.Join(dir, "jobs.json"),
		"--selector", "loadfactor,roundrobin")
	if err != nil {
		t.Fatal(err)
	}
	// loadfactor: 1 big, 2 small, 3 big at 0; 4 arrives at 1s and fits on
	// big (2 of 4) at the round at 2.05s: it waited 1.05s. Load carried:
	// 38 of 60 load-seconds.
	// A report's header comes along when piped, so the figures say what
	// they are.
	want := "SELECTOR\tPLACED\tNEVER PLACED\tMAKESPAN\tMEAN WAIT\tP95 WAIT\tP99 WAIT\tUTILISATION\tMAX LOAD FACTOR\tDECLINES\n" +
		"loadfactor\t4\t0\t10.000s\t0.263s\t1.050s\t1.050s\t63.3%\t1.00\t0\n"
	lines := strings.SplitAfter(out, "\n")
	if len(lines) < 3 || lines[0]+lines[1] != want {
		t.Fatalf("piped table:\n%s\nwant first lines:\n%s", out, want)
	}
	if !strings.HasPrefix(lines[2], "roundrobin\t4\t0\t") {
		t.Errorf("third line is not roundrobin's: %q", out)
	}
	// --no-headers leaves the rows alone.
	out, _, err = runSimulate(t, "--nodes", filepath.Join(dir, "nodes.yaml"), "--jobs", filepath.Join(dir, "jobs.json"),
		"--no-headers")
	if err != nil || out != lines[1] {
		t.Errorf("--no-headers printed %q (%v); want %q", out, err, lines[1])
	}
}

// TestSimulateJQ: --jq filters simulate's JSON like every other
// command's, instead of printing all of it.
func TestSimulateJQ(t *testing.T) {
	dir := simulateEnv(t, map[string]string{"nodes.yaml": simNodes, "jobs.json": `[
		{"duration": "10s"}, {"duration": "10s"}, {"duration": "10s"},
		{"load": 2, "duration": 4, "submit_at": "1s"}]`})
	out, _, err := runSimulate(t, "--nodes", filepath.Join(dir, "nodes.yaml"), "--jobs", filepath.Join(dir, "jobs.json"),
		"--selector", "loadfactor,roundrobin", "--jq", `.results[] | "\(.selector) \(.summary.placed) \(.placements[0].node)"`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "loadfactor 4 big\nroundrobin 4 big\n"; out != want {
		t.Errorf("--jq printed %q; want %q", out, want)
	}
	_, _, err = runSimulate(t, "--nodes", filepath.Join(dir, "nodes.yaml"), "--jobs", filepath.Join(dir, "jobs.json"),
		"--jq", ".results[0].summary.placed | error")
	var jqErr *JQError
	if !errors.As(err, &jqErr) {
		t.Errorf("a failing --jq: %v; want a jq error", err)
	}
}

func TestSimulateJSON(t *testing.T) {
	dir := simulateEnv(t, map[string]string{"nodes.yaml": simNodes})
	args := []string{"--nodes", filepath.Join(dir, "nodes.yaml"), "--generate", "count=50,rate=5/s,load=1..2,duration=1s..5s",
		"--selector", "random,loadfactor", "--seed", "3", "-o", "json"}
	out, _, err := runSimulate(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Results []struct {
			Selector   string `json:"selector"`
			Placements []struct {
				Job    int64    `json:"job"`
				Node   string   `json:"node"`
				StartS float64  `json:"start_s"`
				EndS   *float64 `json:"end_s"`
			} `json:"placements"`
			Summary map[string]float64 `json:"summary"`
		} `json:"results"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	if len(got.Results) != 2 || got.Results[0].Selector != "random" || len(got.Results[0].Placements) != 50 {
		t.Fatalf("-o json = %s", out)
	}
	var keys []string
	for k := range got.Results[1].Summary {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"declines", "makespan_s", "max_load_factor", "mean_utilisation", "mean_wait_s", "never_placed",
		"p95_wait_s", "p99_wait_s", "placed"}
	if !slices.Equal(keys, want) {
		t.Errorf("summary fields %v; want %v", keys, want)
	}
	again, _, err := runSimulate(t, args...)
	if err != nil || again != out {
		t.Errorf("a second run with the same seed differs (err %v)", err)
	}
}

func TestSimulateBadInput(t *testing.T) {
	dir := simulateEnv(t, map[string]string{
		"nodes.yaml":  simNodes,
		"typo.yaml":   "- {name: a, max_lod: 3}\n",
		"nomax.yaml":  "- {name: a}\n",
		"jobs.yaml":   "- {id: 1, parent: 2}\n- {id: 2}\n",
		"empty.yaml":  "",
		"badjob.yaml": "- {type: \"a\\u0001\"}\n",
	})
	path := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", path("typo.yaml"), "--generate", "count=1"}, "line 1: unknown field max_lod"},
		{[]string{"--nodes", path("nomax.yaml"), "--generate", "count=1"}, `node "a": max_load must be a positive number`},
		{[]string{"--nodes", path("missing.yaml"), "--generate", "count=1"}, "--nodes: open"},
		{[]string{"--nodes", path("nodes.yaml"), "--jobs", path("jobs.yaml")}, "job 1: parent 2 must be submitted before it"},
		{[]string{"--nodes", path("nodes.yaml"), "--jobs", path("empty.yaml")}, "is empty"},
		{[]string{"--nodes", path("nodes.yaml"), "--jobs", path("badjob.yaml")}, "type contains control characters"},
		{[]string{"--nodes", path("nodes.yaml"), "--generate", "count=1,rate=fast"}, "rate=fast: must be a positive number"},
		{[]string{"--nodes", path("nodes.yaml"), "--generate", "load=4..1"}, "load=4..1: the range ends below its start"},
	} {
		_, _, err := runSimulate(t, c.args...)
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("simulate %v: err = %v; want a one-line usage error with %q", c.args, err, c.want)
		}
	}
}

func TestSimulateFromCluster(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	if _, err := engine.RegisterNode(ctx, e.store, engine.NodeRegisterParams{Node: engine.Node{
		Name: "n1", URL: "http://n1", MaxLoad: 2, MaxJobs: 10, Weight: 100, AcceptExceeding: true,
		Services: []engine.NodeService{{Type: engine.TypeSleep}, {Type: engine.TypeNoop}},
	}}); err != nil {
		t.Fatal(err)
	}
	// Job 1 runs on n1 for the next hour and holds half of it; 2 fits
	// beside it at once, 3 only once 2 has ended at 3s: at the round at
	// 4.05s (rounds at 0, 0.05, then every 2s).
	e.move(t, e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, Payload: json.RawMessage(`{"duration":"1h"}`)}),
		engine.StatusRunning)
	e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep, Payload: json.RawMessage(`{"duration":"3s"}`)})
	e.insert(t, engine.JobInsertParams{Type: engine.TypeNoop})
	if err := e.run(t, "simulate", "--from-cluster", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	want := `"placements":[{"job":2,"node":"n1","start_s":0,"end_s":3},{"job":3,"node":"n1","start_s":4.05,"end_s":4.051}]`
	if !strings.Contains(e.stdout.String(), want) {
		t.Errorf("--from-cluster -o json = %s; want %s", e.stdout.String(), want)
	}
	if !strings.Contains(e.stdout.String(), `"placed":2,"never_placed":0`) {
		t.Errorf("the running job counts as placed by the run: %s", e.stdout.String())
	}
}

// TestSimulateFromClusterTakesMeasuredDurations: a job of a service type
// runs in the simulation for the median of its type's measured runs; one
// of a type never measured never ends.
func TestSimulateFromClusterTakesMeasuredDurations(t *testing.T) {
	e := newTestEnv(t)
	if _, err := engine.RegisterNode(context.Background(), e.store, engine.NodeRegisterParams{Node: engine.Node{
		Name: "n1", URL: "http://n1", MaxLoad: 4, MaxJobs: 10, Weight: 100, AcceptExceeding: true,
		Services: []engine.NodeService{{Type: "encode"}, {Type: "report"}},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, wall := range []float64{4, 8, 6} {
		e.runMeasured(t, "encode", 1, 1, wall, 1<<20, false)
	}
	encode := e.insert(t, engine.JobInsertParams{Type: "encode"})
	report := e.insert(t, engine.JobInsertParams{Type: "report"})
	if err := e.run(t, "simulate", "--from-cluster", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf(`{"job":%d,"node":"n1","start_s":0,"end_s":6}`, encode.ID),
		fmt.Sprintf(`{"job":%d,"node":"n1","start_s":0,"end_s":null}`, report.ID),
	} {
		if !strings.Contains(e.stdout.String(), want) {
			t.Errorf("--from-cluster -o json = %s; want %s", e.stdout.String(), want)
		}
	}
}

func TestSimulateTimelineAndSVG(t *testing.T) {
	dir := simulateEnv(t, map[string]string{"nodes.yaml": simNodes, "jobs.yaml": "- {load: 4, duration: 10s}\n"})
	svg := filepath.Join(dir, "loads.svg")
	out, _, err := runSimulate(t, "--nodes", filepath.Join(dir, "nodes.yaml"), "--jobs", filepath.Join(dir, "jobs.yaml"),
		"--timeline", "--svg", svg)
	if err != nil {
		t.Fatal(err)
	}
	bar := strings.Repeat("█", timelineWidth)
	want := "SELECTOR\tPLACED\tNEVER PLACED\tMAKESPAN\tMEAN WAIT\tP95 WAIT\tP99 WAIT\tUTILISATION\tMAX LOAD FACTOR\tDECLINES\n" +
		"loadfactor\t1\t0\t10.000s\t0.000s\t0.000s\t0.000s\t66.7%\t1.00\t0\n\n" +
		"loadfactor: load factor per node over 10s, 139ms per column\n" +
		"  big   |" + bar + "|\n" +
		"  small |" + strings.Repeat(" ", timelineWidth) + "|\n"
	if out != want {
		t.Errorf("--timeline:\n%s\nwant:\n%s", out, want)
	}
	b, err := os.ReadFile(svg)
	if err != nil || !strings.HasPrefix(string(b), "<svg ") || !strings.Contains(string(b), ">small</text>") {
		t.Errorf("--svg wrote %q (%v)", b, err)
	}
}
