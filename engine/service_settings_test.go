package engine_test

import (
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// TestServiceSettings: what a job asks for wins, then the service's
// setting, then the default; a submit and a workflow's operation both
// take the rule.
func TestServiceSettings(t *testing.T) {
	svc := engine.NodeService{Type: "encode", Load: 2.5, Timeout: engine.Duration(time.Hour), Memory: 1 << 30}
	cases := []struct {
		name    string
		svc     engine.NodeService
		load    *float64
		timeout *time.Duration
		memory  *int64
		want    [3]any
	}{
		{"the defaults without a service", engine.NodeService{}, nil, nil, nil, [3]any{1.0, engine.DefaultJobTimeout, int64(0)}},
		{"the service's", svc, nil, nil, nil, [3]any{2.5, time.Hour, int64(1 << 30)}},
		{"the job's own", svc, engine.Ptr(0.5), engine.Ptr(time.Minute), engine.Ptr(int64(1 << 20)), [3]any{0.5, time.Minute, int64(1 << 20)}},
		{"a load of zero asked for", svc, engine.Ptr(0.0), nil, nil, [3]any{0.0, time.Hour, int64(1 << 30)}},
	}
	for _, c := range cases {
		load, timeout, memory := c.svc.Settings(c.load, c.timeout, c.memory)
		if got := [3]any{load, timeout, memory}; got != c.want {
			t.Errorf("%s: %v; want %v", c.name, got, c.want)
		}
	}
}

// TestKeepsNodeBusy is the drain's rule: a job holding load on the node,
// or a parent there waiting for its children.
func TestKeepsNodeBusy(t *testing.T) {
	cases := []struct {
		status engine.Status
		node   string
		busy   bool
	}{
		{engine.StatusRunning, "n1", true},
		{engine.StatusPaused, "n1", true},
		{engine.StatusPaused, "", false},
		{engine.StatusCancelling, "n1", true},
		{engine.StatusWaiting, "n1", true},
		{engine.StatusQueued, "", false},
		{engine.StatusFinished, "n1", false},
	}
	for _, c := range cases {
		j := &engine.Job{Status: c.status, Node: c.node}
		if got := j.KeepsNodeBusy(); got != c.busy {
			t.Errorf("%s on %q: busy %v; want %v", c.status, c.node, got, c.busy)
		}
	}
}
