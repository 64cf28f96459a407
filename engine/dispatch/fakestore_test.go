package dispatch_test

import (
	"context"
	"slices"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// queueStore is the least of a store a dispatch round needs, held in
// memory, for benchmarks that measure the dispatcher's own cost on queues
// far longer than SQLite makes practical. Jobs have ids 1..n and no keys,
// parents or run_after; it checks status and version like a real store.
type queueStore struct {
	engine.Store // not implemented: a call panics
	nodes        []*engine.Node
	jobs         []engine.Job // jobs[id-1]
	reservations []engine.Reservation
}

func newQueueStore(nodes int, maxLoad float64, jobs int, load float64) *queueStore {
	s := &queueStore{}
	for i := range nodes {
		s.nodes = append(s.nodes, &engine.Node{Name: "n" + itoa(int64(i)), State: engine.NodeOnline, MaxLoad: maxLoad,
			MaxJobs: 1 << 30, Weight: 100, AcceptExceeding: true, Services: []engine.NodeService{{Type: engine.TypeNoop}}})
	}
	s.jobs = make([]engine.Job, jobs)
	for i := range s.jobs {
		s.jobs[i] = engine.Job{ID: int64(i + 1), Type: engine.TypeNoop, Load: load, Status: engine.StatusQueued, MaxAttempts: 1}
	}
	return s
}

func (s *queueStore) Now(context.Context) (time.Time, error) { return time.Unix(0, 0), nil }

func (s *queueStore) TypeLimitList(context.Context) ([]engine.TypeLimit, error) { return nil, nil }

func (s *queueStore) JobListRollbackPending(context.Context, int) ([]*engine.Job, error) {
	return nil, nil
}

func (s *queueStore) NodeList(context.Context) ([]*engine.Node, error) {
	out := make([]*engine.Node, len(s.nodes))
	byName := map[string]*engine.Node{}
	for i, n := range s.nodes {
		c := *n
		c.Load, c.Running = 0, 0
		out[i], byName[c.Name] = &c, &c
	}
	for i := range s.jobs {
		if j := &s.jobs[i]; j.HoldsLoad() {
			byName[j.Node].Load += j.Load
			byName[j.Node].Running++
		}
	}
	return out, nil
}

func (s *queueStore) JobGet(_ context.Context, id int64) (*engine.Job, error) {
	if id < 1 || int(id) > len(s.jobs) {
		return nil, &engine.NotFoundError{What: "job"}
	}
	j := s.jobs[id-1]
	return &j, nil
}

func (s *queueStore) JobList(_ context.Context, p engine.JobListParams) ([]*engine.Job, error) {
	var out []*engine.Job
	for i := range s.jobs {
		if j := s.jobs[i]; slices.Contains(p.Statuses, j.Status) {
			out = append(out, &j)
		}
	}
	return out, nil
}

func (s *queueStore) JobListDispatchable(_ context.Context, p engine.JobDispatchableParams) ([]*engine.Job, error) {
	var out []*engine.Job
	for i := int(p.AfterID); i < len(s.jobs) && len(out) < p.Limit; i++ {
		if j := s.jobs[i]; j.Status == p.Status {
			out = append(out, &j)
		}
	}
	return out, nil
}

func (s *queueStore) JobUpdate(_ context.Context, u engine.JobUpdate) (*engine.Job, error) {
	j := &s.jobs[u.ID-1]
	if j.Status != u.From || j.Version != u.Version {
		return nil, engine.ErrConflict
	}
	j.Status = u.To
	j.Version++
	if u.Node != nil {
		j.Node = *u.Node
	}
	if u.IncrementAttempt {
		j.Attempt++
	}
	c := *j
	return &c, nil
}

func (s *queueStore) JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error) {
	out := make([]engine.JobUpdateResult, len(us))
	for i, u := range us {
		out[i].Job, out[i].Err = s.JobUpdate(ctx, u)
	}
	return out, nil
}

func (s *queueStore) ReservationList(context.Context) ([]engine.Reservation, error) {
	return slices.Clone(s.reservations), nil
}

func (s *queueStore) ReservationSet(_ context.Context, r engine.Reservation) error {
	s.reservations = append(s.reservations, r)
	return nil
}

func (s *queueStore) ReservationDelete(_ context.Context, id int64) error {
	s.reservations = slices.DeleteFunc(s.reservations, func(r engine.Reservation) bool { return r.JobID == id })
	return nil
}

// startingNodes accepts every offer and starts the batch in one
// JobUpdateMany, as a node's acceptance does, without recording anything.
type startingNodes struct{ store engine.Store }

func (n startingNodes) OfferBatch(ctx context.Context, node *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult {
	us := make([]engine.JobUpdate, len(offers))
	for i, o := range offers {
		us[i] = engine.StartOfferUpdate(o, node.Name)
	}
	out := make([]engine.OfferResult, len(offers))
	results, err := n.store.JobUpdateMany(ctx, us)
	for i := range out {
		if err != nil || results[i].Err != nil {
			out[i] = engine.OfferResult{Verdict: engine.OfferGone}
		}
	}
	return out
}
