package node

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// healthFeed hands the node the machine figures a test sets.
type healthFeed struct {
	mu      sync.Mutex
	reading HealthReading
}

func (f *healthFeed) read() HealthReading {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reading
}

func (f *healthFeed) set(h HealthReading) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reading = h
}

func TestOverloadIsLoggedOncePerChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	feed := &healthFeed{}
	s := testStore(t)
	var logs logBuffer
	n := testNodeLogging(t, s, &logs, func(c *Config) { c.MaxLoadAvg, c.ReservedMemory = 4, 1<<30 }, WithHealthReader(feed.read))
	if _, err := s.NodeRegister(ctx, engine.NodeRegisterParams{Node: n.row()}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()

	steps := []struct {
		reading    HealthReading
		overloaded bool
	}{
		{HealthReading{LoadAvg: 1, MemAvailable: 8 << 30}, false},
		{HealthReading{LoadAvg: 9.5, MemAvailable: 8 << 30}, true},
		{HealthReading{LoadAvg: 12, MemAvailable: 8 << 30}, true},
		{HealthReading{LoadAvg: 9.5, MemAvailable: 8 << 30}, true},
		{HealthReading{LoadAvg: 2, MemAvailable: 8 << 30}, false},
		{HealthReading{LoadAvg: 2, MemAvailable: 8 << 30}, false},
		{HealthReading{LoadAvg: 2, MemAvailable: 100 << 20}, true},
		{HealthReading{LoadAvg: 2, MemAvailable: 90 << 20}, true},
	}
	for i, step := range steps {
		feed.set(step.reading)
		n.liveness.touch(ctx)
		want := "jobctl_node_overloaded 0"
		if step.overloaded {
			want = "jobctl_node_overloaded 1"
		}
		if m := metricsText(t, srv.URL); !strings.Contains(m, want) {
			t.Errorf("step %d (%+v): metrics lack %q", i, step.reading, want)
		}
	}
	out := logs.String()
	for line, count := range map[string]int{
		"load average 9.5 is above --max-load-avg 4: this node gets new work only when no node under its limit can take it ('--max-load-avg off' removes the limit)": 1,
		"taking no new work: free memory 100MiB is under --reserved-memory 1GiB (set it lower, or to 0 to remove the reserve)":                                       1,
		"is above --max-load-avg": 1,
		"taking no new work":      1,
		"no longer overloaded":    1,
	} {
		if got := strings.Count(out, line); got != count {
			t.Errorf("%q logged %d times, want %d; log:\n%s", line, got, count, out)
		}
	}
	if me, err := s.NodeGet(ctx, "n1"); err != nil || me.LoadAvg != 2 || me.MemAvailable != 90<<20 {
		t.Errorf("stored health = %+v, %v; want the last reading", me, err)
	}
}

func TestNoLoadAverageLimitNeverOverloads(t *testing.T) {
	t.Parallel()
	feed := &healthFeed{}
	var logs logBuffer
	n := testNodeLogging(t, testStore(t), &logs, func(c *Config) { c.MaxLoadAvg = 0 }, WithHealthReader(feed.read))
	feed.set(HealthReading{LoadAvg: 1000})
	n.liveness.noteOverload(feed.read())
	n.liveness.logOverloadLimits()
	if out := logs.String(); strings.Contains(out, "above --max-load-avg") || !strings.Contains(out, "max_load_avg=off") {
		t.Errorf("with --max-load-avg off the node logged:\n%s", out)
	}
}

func metricsText(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
