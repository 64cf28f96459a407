package node

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

// withCgroups opens the node's cgroups as Run does, skipping only where
// this machine cannot have them: not root, or no cgroup file system.
func withCgroups(t *testing.T, n *Runtime) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root here, and the tests do not run as root")
	}
	if _, err := os.Stat("/sys/fs/cgroup"); err != nil {
		t.Skip("the kernel has no cgroup file system mounted")
	}
	n.resources.openCgroups()
	if n.resources.cgroups == nil {
		t.Fatal("the node made no cgroups on a machine that has them")
	}
	t.Cleanup(func() {
		n.runner.runsDone.Wait()
		n.resources.closeCgroups()
	})
}

// histogramCount is how many observations a histogram of the node has for
// a job type.
func histogramCount(t *testing.T, n *Runtime, name, jobType string) uint64 {
	t.Helper()
	families, err := n.metrics.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelIs(m, "type", jobType) {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}

func labelIs(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

func TestNodeRecordsWhatARunUsed(t *testing.T) {
	n, s := testNode(t, nil)
	withCgroups(t, n)
	ctx := context.Background()
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec,
		Args: []string{"sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"}})
	if res := n.runner.Accept(ctx, o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v", res)
	}
	j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
	if j.Status != engine.StatusFinished || j.Usage == nil || j.Usage.CPUSeconds <= 0 || j.Usage.WallSeconds <= 0 ||
		j.Usage.PeakMemory <= 0 || j.Usage.OOMKilled {
		t.Fatalf("job %s with usage %+v; want FINISHED with its CPU time, wall time and peak", j.Status, j.Usage)
	}
	attempts, err := s.JobAttemptList(ctx, j.ID)
	if err != nil || len(attempts) != 1 || attempts[0].Usage == nil || *attempts[0].Usage != *j.Usage {
		t.Fatalf("attempts %+v, %v; want the one with the job's usage", attempts, err)
	}
	n.runner.runsDone.Wait()
	for _, name := range []string{"jobctl_job_wait_seconds", "jobctl_job_run_seconds", "jobctl_job_cpu_seconds"} {
		if got := histogramCount(t, n, name, engine.TypeExec); got != 1 {
			t.Errorf("%s{type=exec} has %d observations, want 1", name, got)
		}
	}
}

func TestNodeHoldsAJobToItsMemoryLimit(t *testing.T) {
	n, s := testNode(t, func(c *Config) {
		c.Enforce = true
		// A service whose jobs hold 200 MiB, limited to 64 MiB unless a
		// job says otherwise.
		c.Services = []Service{{Type: "hog", Argv: []string{"sh", "-c", "head -c 200M /dev/zero | tail -n 1 >/dev/null"},
			Memory: 64 << 20}}
	})
	withCgroups(t, n)
	if sup := n.resources.cgroups.Support(); !sup.MemoryLimit {
		t.Skipf("this kernel's cgroups hold no memory limit here: %v", sup.Missing)
	}
	ctx := context.Background()
	limited := offerFor(t, s, engine.JobInsertParams{Type: "hog"})
	roomy := offerFor(t, s, engine.JobInsertParams{Type: "hog", MemoryLimit: 512 << 20})
	for _, o := range []engine.DispatchOffer{limited, roomy} {
		if res := n.runner.Accept(ctx, o); res.Verdict != engine.OfferAccepted {
			t.Fatalf("offer: %+v", res)
		}
	}
	j := waitJob(t, s, limited.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
	if j.Status != engine.StatusFailed || !strings.HasPrefix(j.Message, "killed: out of memory, limit 64MiB") ||
		j.Usage == nil || !j.Usage.OOMKilled {
		t.Errorf("job over its service's limit: %s %q, usage %+v; want FAILED, killed: out of memory, limit 64MiB", j.Status, j.Message, j.Usage)
	}
	ok := waitJob(t, s, roomy.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
	if ok.Status != engine.StatusFinished || ok.Usage == nil || ok.Usage.PeakMemory < 200<<20 {
		t.Errorf("job within its own limit: %s %q, usage %+v; want FINISHED with a peak of 200 MiB", ok.Status, ok.Message, ok.Usage)
	}
	oom, err := s.JobList(ctx, engine.JobListParams{OOMKilled: true})
	if err != nil || len(oom) != 1 || oom[0].ID != j.ID {
		t.Errorf("jobs killed at their limit: %v, %v; want job %d alone", oom, err, j.ID)
	}
}

// TestNodeWithoutEnforceMeasuresOnly: a node without --enforce runs a job
// with a memory limit without it, and measures what it used.
func TestNodeWithoutEnforceMeasuresOnly(t *testing.T) {
	n, s := testNode(t, nil)
	withCgroups(t, n)
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, MemoryLimit: 64 << 20,
		Args: []string{"sh", "-c", "head -c 200M /dev/zero | tail -n 1 >/dev/null"}})
	if res := n.runner.Accept(context.Background(), o); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer: %+v", res)
	}
	j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
	if j.Status != engine.StatusFinished || j.Usage == nil || j.Usage.PeakMemory < 200<<20 || j.Usage.OOMKilled {
		t.Errorf("job %s %q, usage %+v; want FINISHED past its limit, with a peak of 200 MiB", j.Status, j.Message, j.Usage)
	}
}

func TestNodeReportsTheLiveUseOfItsRuns(t *testing.T) {
	for _, cgroups := range []bool{false, true} {
		name := "without cgroups"
		if cgroups {
			name = "in cgroups"
		}
		t.Run(name, func(t *testing.T) {
			n, s := testNode(t, nil)
			if cgroups {
				withCgroups(t, n)
			}
			ctx := context.Background()
			busy := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"sh", "-c", "while :; do :; done"}})
			idle := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeSleep, Payload: []byte(`{"duration":"1h"}`)})
			for _, o := range []engine.DispatchOffer{busy, idle} {
				if res := n.runner.Accept(ctx, o); res.Verdict != engine.OfferAccepted {
					t.Fatalf("offer: %+v", res)
				}
			}
			defer stopRuns(n)
			var usage []engine.LiveUsage
			if !waitfor.Within(20*time.Second, func() bool {
				usage = n.runner.runningUsage()
				if len(usage) > 1 {
					t.Fatalf("live usage %+v: a builtin has none", usage)
				}
				return len(usage) == 1 && usage[0].JobID == busy.JobID && usage[0].Attempt == busy.Attempt+1 &&
					usage[0].CPUSeconds > 0.1 && usage[0].Memory > 0
			}) {
				t.Fatalf("live usage never showed the busy job: %+v", usage)
			}
		})
	}
}
