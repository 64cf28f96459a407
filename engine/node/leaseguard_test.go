package node

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/endpoint"
)

// An offer made under a lease term that is no longer current is declined,
// in-process and over HTTP, and leaves the job as it was; one under the
// current term starts it and records the dispatcher and term.
func TestOfferUnderALostLeaseTermIsDeclined(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, s := testNode(t, nil)
	srv := httptest.NewServer(n.Handler())
	defer srv.Close()
	remote := endpoint.NewClient("secret-token", 5*time.Second, nil)
	term, err := s.LeaseAcquire(ctx, "d1", time.Hour)
	if err != nil || !term.Held() {
		t.Fatalf("LeaseAcquire = %v, %v", term, err)
	}
	under := func(o engine.DispatchOffer, t engine.LeaseTerm) engine.DispatchOffer {
		o.Dispatcher, o.LeaseTerm = t.Owner, t.Term
		return o
	}
	lost := term
	lost.Term++
	o := offerFor(t, s, engine.JobInsertParams{Type: engine.TypeNoop, Load: 1, MaxAttempts: 1})
	for how, res := range map[string]engine.OfferResult{
		"in-process": n.runner.Accept(ctx, under(o, lost)),
		"over HTTP":  remote.Offer(ctx, &engine.Node{URL: srv.URL}, under(o, lost)),
	} {
		if res.Verdict != engine.OfferDeclined || !strings.Contains(res.Reason, "lease term") {
			t.Errorf("%s: offer under a lost term: %+v, want declined for its term", how, res)
		}
	}
	j, err := s.JobGet(ctx, o.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != engine.StatusQueued || j.Version != o.Version || j.Attempt != 0 {
		t.Fatalf("declined offers changed the job: %s v%d attempt %d", j.Status, j.Version, j.Attempt)
	}
	if res := n.runner.Accept(ctx, under(o, term)); res.Verdict != engine.OfferAccepted {
		t.Fatalf("offer under the current term: %+v, want accepted", res)
	}
	j = waitJob(t, s, o.JobID, func(j *engine.Job) bool { return j.Status.Terminal() })
	if j.Dispatcher != "d1" || j.LeaseTerm != term.Term || j.Attempt != 1 {
		t.Errorf("job ran under %q term %d attempt %d, want d1 term %d attempt 1", j.Dispatcher, j.LeaseTerm, j.Attempt, term.Term)
	}
}
