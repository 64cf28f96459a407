package commands

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/bench"
)

func parseBench(t *testing.T, args ...string) (*BenchOptions, error) {
	t.Helper()
	ios, _, _ := TestIO("")
	var got *BenchOptions
	err := execParse(NewCmdBench(&Factory{IO: ios}, func(_ context.Context, o *BenchOptions) error {
		got = o
		return nil
	}), args...)
	return got, err
}

func TestBenchParsing(t *testing.T) {
	o, err := parseBench(t, "--burn-down", "500")
	if err != nil {
		t.Fatal(err)
	}
	if o.BurnDown != 500 || o.Duration != 0 || o.Nodes != 1 || o.Cluster || o.MaxJobs != bench.DefaultMaxJobs ||
		o.DispatchInterval != 2*time.Second || o.Output.Format != formatTable {
		t.Errorf("defaults: %+v", o)
	}
	o, err = parseBench(t, "--duration", "30s", "--rate", "250", "--nodes", "3", "--max-jobs", "50",
		"--dispatch-interval", "200ms", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if o.Duration != 30*time.Second || o.Rate != 250 || o.Nodes != 3 || o.MaxJobs != 50 ||
		o.DispatchInterval != 200*time.Millisecond || o.Output.Format != formatJSON {
		t.Errorf("flags: %+v", o)
	}
	if o, err = parseBench(t, "--cluster", "--duration", "1m"); err != nil || !o.Cluster {
		t.Errorf("--cluster: %+v, %v", o, err)
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--burn-down", "10", "--duration", "1s"},
		{"--burn-down", "0"},
		{"--burn-down", "-5"},
		{"--burn-down", "ten"},
		{"--duration", "0s"},
		{"--duration", "-1s"},
		{"--burn-down", "10", "--rate", "5"},
		{"--duration", "1s", "--rate", "0"},
		{"--duration", "1s", "--rate", "-3"},
		{"--burn-down", "10", "--nodes", "0"},
		{"--burn-down", "10", "--max-jobs", "0"},
		{"--burn-down", "10", "--dispatch-interval", "0s"},
		{"--burn-down", "10", "--cluster", "--nodes", "2"},
		{"--burn-down", "10", "--cluster", "--max-jobs", "5"},
		{"--burn-down", "10", "--cluster", "--dispatch-interval", "1s"},
		{"--burn-down", "10", "-o", "yaml"},
		{"--burn-down", "10", "stray"},
	} {
		_, err := parseBench(t, args...)
		var usage *UsageError
		if !errors.As(err, &usage) {
			t.Errorf("bench %v: err = %v; want a usage error", args, err)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("bench %v: error is not one line: %q", args, err)
		}
	}
}

func TestBenchJSON(t *testing.T) {
	e := newTestEnv(t)
	if err := e.run(t, "bench", "--burn-down", "50", "--nodes", "2", "-o", "json"); err != nil {
		t.Fatalf("%v; stderr %s", err, e.stderr)
	}
	var got map[string]any
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v in %s", err, e.stdout)
	}
	for _, k := range []string{"jobs_per_second", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "jobs", "seconds",
		"dialect", "nodes", "mode"} {
		if _, ok := got[k]; !ok {
			t.Errorf("-o json lacks %q: %s", k, e.stdout)
		}
	}
	if len(got) != 9 {
		t.Errorf("-o json has %d fields; want the 9 documented: %s", len(got), e.stdout)
	}
	if got["jobs"] != 50.0 || got["nodes"] != 2.0 || got["mode"] != "burn-down" || got["dialect"] != "sqlite" {
		t.Errorf("-o json: %s", e.stdout)
	}
	if jps, _ := got["jobs_per_second"].(float64); !(jps > 0) {
		t.Errorf("jobs_per_second %v; want positive", got["jobs_per_second"])
	}
	p50, _ := got["latency_p50_ms"].(float64)
	p99, _ := got["latency_p99_ms"].(float64)
	if p50 < 0 || p99 < p50 {
		t.Errorf("latencies p50 %v, p99 %v; want 0 <= p50 <= p99", p50, p99)
	}
	if strings.ContainsAny(e.stderr.String(), "\r\x1b") {
		t.Errorf("stderr of a piped run: %q; want no progress line", e.stderr)
	}
	jobs, err := e.store.JobList(context.Background(), engine.JobListParams{})
	if err != nil || len(jobs) != 0 {
		t.Errorf("after the run: %d jobs, %v; want none", len(jobs), err)
	}
}

// TestBenchPiped: piped, every figure is on a line of its own, named as
// -o json names it, so `jobctl bench | cat` says what each number is.
func TestBenchPiped(t *testing.T) {
	e := newTestEnv(t)
	if err := e.run(t, "bench", "--burn-down", "20"); err != nil {
		t.Fatalf("%v; stderr %s", err, e.stderr)
	}
	got := map[string]string{}
	var names []string
	for _, line := range strings.Split(strings.TrimSuffix(e.stdout.String(), "\n"), "\n") {
		name, value, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("line %q is not name TAB value in %q", line, e.stdout)
		}
		got[name] = value
		names = append(names, name)
	}
	want := []string{"jobs", "seconds", "jobs_per_second", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms",
		"mode", "dialect", "nodes"}
	if !slices.Equal(names, want) {
		t.Fatalf("names %q; want %q", names, want)
	}
	if got["jobs"] != "20" || got["mode"] != "burn-down" || got["dialect"] != "sqlite" || got["nodes"] != "1" {
		t.Errorf("figures %q", got)
	}
	for _, n := range []string{"seconds", "jobs_per_second", "latency_p50_ms", "latency_p99_ms"} {
		if _, err := strconv.ParseFloat(got[n], 64); err != nil {
			t.Errorf("%s %q is not a number", n, got[n])
		}
	}
}

func TestBenchClusterWithoutNodesIsAUsageError(t *testing.T) {
	e := newTestEnv(t)
	err := e.run(t, "bench", "--cluster", "--burn-down", "10")
	var usage *UsageError
	if !errors.As(err, &usage) || !errors.Is(err, bench.ErrNoClusterNode) {
		t.Fatalf("err = %v; want the no-node usage error", err)
	}
	jobs, lerr := e.store.JobList(context.Background(), engine.JobListParams{})
	if lerr != nil || len(jobs) != 0 {
		t.Errorf("refused run left %d jobs (%v); want none", len(jobs), lerr)
	}
}
