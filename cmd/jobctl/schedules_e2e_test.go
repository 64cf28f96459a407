package main_test

import (
	"encoding/json"
	"slices"
	"syscall"
	"testing"
	"time"
)

type scheduledJob struct {
	ID        int64     `json:"id"`
	Creator   string    `json:"creator"`
	CreatedAt time.Time `json:"created_at"`
}

func (c *cluster) scheduledJobs() []scheduledJob {
	c.t.Helper()
	var js []scheduledJob
	if err := json.Unmarshal([]byte(c.ok("list", "--type", "noop", "--limit", "0", "-o", "json")), &js); err != nil {
		c.t.Fatalf("list: %v", err)
	}
	slices.SortFunc(js, func(a, b scheduledJob) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return js
}

type scheduleLease struct {
	Owner string `json:"owner"`
	Valid bool   `json:"valid"`
	Term  int64  `json:"term"`
}

func (c *cluster) scheduleLeaseGet() scheduleLease {
	c.t.Helper()
	var l scheduleLease
	if err := json.Unmarshal([]byte(c.ok("lease", "-o", "json")), &l); err != nil {
		c.t.Fatalf("lease: %v", err)
	}
	return l
}

// A schedule firing every second across a SIGKILL of the lease holder makes
// one job per fire time: none twice when the lease moves, and it goes on
// firing under the next holder.
func TestScheduleFiresOncePerTimeAcrossAFailover(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	nodes := map[string]*node{"a": c.serve("a"), "b": c.serve("b")}
	c.ok("schedules", "add", "tick", "--cron", "@every 1s", "--type", "noop")
	c.eventually(60*time.Second, "three fires", func() bool { return len(c.scheduledJobs()) >= 3 })

	var before scheduleLease
	c.eventually(20*time.Second, "a lease holder", func() bool { before = c.scheduleLeaseGet(); return before.Valid })
	nodes[before.Owner].stop(t, syscall.SIGKILL)
	killed := time.Now()
	beforeKill := len(c.scheduledJobs())
	nodes[before.Owner] = c.serve(before.Owner) // at once, under the same name
	// The lease moves to the other node, or back to the restarted one
	// (keeping its term when it renews in time): either way the failover
	// is over once a fire after the kill shows.
	c.eventually(60*time.Second, "a fire after the kill", func() bool {
		js := c.scheduledJobs()
		return len(js) > 0 && js[len(js)-1].CreatedAt.After(killed)
	})
	tookOver := time.Now()
	t.Logf("first fire after the kill seen %s after it", tookOver.Sub(killed).Round(time.Millisecond))
	c.eventually(60*time.Second, "three fires after the failover", func() bool {
		return len(c.scheduledJobs()) >= beforeKill+3
	})
	c.ok("schedules", "pause", "tick")
	jobs := c.scheduledJobs()

	// Paused, it fires no more: a few rounds of the holder later the jobs are the same.
	holder := nodes[c.scheduleLeaseGet().Owner]
	if holder != nil {
		c.waitRounds(holder, 5)
		if n := len(c.scheduledJobs()); n != len(jobs) {
			t.Errorf("%d jobs a while after the pause, %d at it", n, len(jobs))
		}
	}

	for _, j := range jobs {
		if j.Creator != "schedule:tick" {
			t.Errorf("job %d has creator %q, want schedule:tick", j.ID, j.Creator)
		}
	}
	// One job per fire time: each fire moves the next one past the second
	// its job was created in, so two jobs in one second are a fire made
	// twice. A gap says nothing here: fires missed while the lease moved,
	// or while a loaded machine stalled the holder, rightly become one job.
	for i := 1; i < len(jobs); i++ {
		prev, cur := jobs[i-1].CreatedAt, jobs[i].CreatedAt
		if prev.Truncate(time.Second).Equal(cur.Truncate(time.Second)) {
			t.Errorf("jobs %d and %d were both created in the second of %s: a fire made twice", jobs[i-1].ID, jobs[i].ID, cur.Truncate(time.Second))
		}
	}
	if t.Failed() {
		for _, j := range jobs {
			t.Logf("job %d created %s", j.ID, j.CreatedAt.Format(time.RFC3339Nano))
		}
		t.Logf("killed %s at %s, first fire after it seen at %s", before.Owner, killed.Format(time.RFC3339Nano), tookOver.Format(time.RFC3339Nano))
	}
}
