package node

import (
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func TestAFailedRunIsRetriedAfterTheBackoff(t *testing.T) {
	t.Parallel()
	// The lowest jitter: the first retry waits three quarters of the backoff.
	n, s := testNode(t, nil, WithRandom(func() float64 { return 0 }))
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"sh", "-c", "exit 3"}, Load: 1,
		MaxAttempts: 2, Backoff: 2 * time.Second})
	if res := n.runner.Accept(t.Context(), o); res.Verdict != engine.OfferAccepted {
		t.Fatal(res)
	}
	j := waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status != engine.StatusRunning })
	if j.Status != engine.StatusRestart || j.Node != "" || j.Attempt != 1 || j.Message != "exit code 3; retrying in 1.5s" {
		t.Fatalf("job = %s on %q attempt %d %q, want RESTART on no node, attempt 1, retrying in 1.5s",
			j.Status, j.Node, j.Attempt, j.Message)
	}
}
