package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// chaosSampleEvery is how often the samplers look at the cluster.
const chaosSampleEvery = 100 * time.Millisecond

// ended counts the jobs in a terminal state.
func (cc *chaosCluster) ended() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	err := cc.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs
		WHERE status IN ('FINISHED', 'WARNING', 'FAILED', 'CANCELLED', 'DELETED')`).Scan(&n)
	return n, err
}

// loadSampler reads every node's load and max load in one statement, the
// load being the sum over its load-holding jobs, as dispatch counts it.
type loadSampler struct {
	cc *chaosCluster

	mu         sync.Mutex
	last       map[string]float64
	samples    int
	maxFactor  float64
	violations []string // samples where a node carried more than its max load
	errors     int
	firstErr   error
}

// chaosLoadTolerance absorbs float rounding in summed loads, nothing more.
const chaosLoadTolerance = 1e-6

func (s *loadSampler) run(stop <-chan struct{}) {
	tick := time.NewTicker(chaosSampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		s.sample()
	}
}

func (s *loadSampler) sample() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := s.cc.db.QueryContext(ctx, `SELECT n.name, n.max_load, COALESCE(SUM(j.job_load), 0)
		FROM nodes n LEFT JOIN jobs j ON j.node = n.name
		 AND j.status IN ('RUNNING', 'PAUSED', 'CANCELLING')
		GROUP BY n.name, n.max_load`)
	now := time.Now()
	loads := map[string]float64{}
	var bad []string
	factor := 0.0
	if err == nil {
		for rows.Next() {
			var name string
			var maxLoad, load float64
			if err = rows.Scan(&name, &maxLoad, &load); err != nil {
				break
			}
			loads[name] = load
			if maxLoad > 0 {
				factor = max(factor, load/maxLoad)
			}
			if load > maxLoad+chaosLoadTolerance {
				bad = append(bad, fmt.Sprintf("%s: node %s carried load %g over its max load %g", now.Format("15:04:05.000"), name, load, maxLoad))
			}
		}
		if err == nil {
			err = rows.Err()
		}
		rows.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errors++
		if s.firstErr == nil {
			s.firstErr = err
		}
		return
	}
	s.samples++
	s.last = loads
	s.maxFactor = max(s.maxFactor, factor)
	s.violations = append(s.violations, bad...)
}

func (s *loadSampler) latest() map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// chaosLease is what `lease -o json` says, with the fields of a term.
type chaosLease struct {
	Owner      string     `json:"owner"`
	Term       int64      `json:"term"`
	AcquiredAt *time.Time `json:"acquired_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	Valid      bool       `json:"valid"`
}

// leaseTerm is one term of the lease as the sampler saw it.
type leaseTerm struct {
	Term       int64
	Owner      string
	AcquiredAt time.Time
	Conflict   string // set when two samples of the term disagree
}

// leaseSampler reads `lease -o json` and learns each term's owner and
// acquisition.
type leaseSampler struct {
	cc *chaosCluster

	mu       sync.Mutex
	samples  int
	terms    map[int64]*leaseTerm
	missing  int // samples of a held lease without a term or its acquisition
	errors   int
	firstErr error
}

func (s *leaseSampler) run(stop <-chan struct{}) {
	tick := time.NewTicker(chaosSampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		s.sample()
	}
}

func (s *leaseSampler) sample() {
	out, err := s.cc.jobctl(10*time.Second, "lease", "-o", "json")
	var l chaosLease
	if err == nil {
		err = json.Unmarshal([]byte(out), &l)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errors++
		if s.firstErr == nil {
			s.firstErr = err
		}
		return
	}
	s.samples++
	if l.Owner == "" {
		return // released or never held: no term to learn
	}
	if l.Term == 0 || l.AcquiredAt == nil {
		s.missing++
		return
	}
	if s.terms == nil {
		s.terms = map[int64]*leaseTerm{}
	}
	t := s.terms[l.Term]
	if t == nil {
		s.terms[l.Term] = &leaseTerm{Term: l.Term, Owner: l.Owner, AcquiredAt: *l.AcquiredAt}
		return
	}
	if t.Owner != l.Owner || !t.AcquiredAt.Equal(*l.AcquiredAt) {
		t.Conflict = fmt.Sprintf("term %d was seen owned by %s since %s and by %s since %s",
			l.Term, t.Owner, t.AcquiredAt.Format(time.RFC3339Nano), l.Owner, l.AcquiredAt.Format(time.RFC3339Nano))
	}
}
