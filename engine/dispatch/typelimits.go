package dispatch

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jobctl/jobctl/engine"
)

// WaitTypeLimit is why a job waits whose type already runs as many jobs
// as its limit allows (engine.TypeLimit): a key of RoundStats.Waiting.
const WaitTypeLimit = "type-limit"

// quotas are what a round may still start of each limited type: the
// limit, less the jobs of the type running when the round began (counted
// by the store, with the limits, in one statement), less the jobs the round
// has planned since. A type without a limit is absent and never held back.
//
// Counting once per round is enough for the limit to hold: only the lease
// holder makes offers, one round at a time, and a node starts a job only
// under the current lease term, so no offer of another dispatcher (a former
// holder) can start a job beside this round's. A round that begins after a
// failover reads the count afresh, so a new holder obeys the limit at once.
// A parent back from WAITING returns to RUNNING on its node without an
// offer; it is counted from then on.
type quotas map[string]*quota

type quota struct {
	limit engine.TypeLimit
	left  int
}

// readQuotas reads the limits and the running count of each limited type.
func readQuotas(ctx context.Context, store engine.TypeLimitLister) (quotas, error) {
	limits, err := store.TypeLimitList(ctx)
	if err != nil {
		return nil, err
	}
	q := make(quotas, len(limits))
	for _, l := range limits {
		q[l.Type] = &quota{limit: l, left: max(0, l.MaxRunning-l.Running)}
	}
	return q, nil
}

// exhausted reports whether the round may start no more jobs of typ.
func (q quotas) exhausted(typ string) bool {
	t, ok := q[typ]
	return ok && t.left <= 0
}

// left is how many more jobs of typ the round may start, and whether typ
// has a limit at all.
func (q quotas) left(typ string) (int, bool) {
	t, ok := q[typ]
	if !ok {
		return 0, false
	}
	return max(t.left, 0), true
}

// take counts p's job against its type's limit, as planned onto a node.
func (q quotas) take(p *planned) {
	if t, ok := q[p.job.Type]; ok {
		t.left--
		p.slot = true
	}
}

// release gives back the place p's job took: it was not started.
func (q quotas) release(p *planned) {
	if p.slot {
		q[p.job.Type].left++
		p.slot = false
	}
}

// forfeit keeps the place p's job took for the rest of the round, though
// the round takes the job off its node's books: the node's answer was lost
// or the job had moved on, so it may run after all. The next round counts
// it from the store.
func (q quotas) forfeit(p *planned) { p.slot = false }

// LimitReason says that a job is held back by its type's limit.
func LimitReason(l *engine.TypeLimit) string {
	return fmt.Sprintf("held back: type %s is at its limit of %d running (jobctl limits)", l.Type, l.MaxRunning)
}

// limitHeld puts the type's limit before what the nodes say, s: the limit
// holds the job back first, and the nodes decide once it no longer does.
func (e *Explanation) limitHeld(s string) string {
	if len(e.ranked()) > 0 {
		return LimitReason(e.TypeLimit) + "; once it is under it, " + s
	}
	return LimitReason(e.TypeLimit) + "; and " + s
}

// heldAtLimit counts a job its type's limit holds back.
func (r *round) heldAtLimit(job *engine.Job) {
	r.stats.wait(WaitTypeLimit)
	r.stats.atLimit(job.Type, r.quotas[job.Type].limit.MaxRunning)
}

// atLimit records that typ's limit of max held jobs back.
func (s *RoundStats) atLimit(typ string, max int) {
	if s.AtLimit == nil {
		s.AtLimit = map[string]int{}
	}
	s.AtLimit[typ] = max
}

// limitDetail names the types held back at their limit, in order.
func (s RoundStats) limitDetail() string {
	types := slices.Sorted(maps.Keys(s.AtLimit))
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("type %s at its limit of %d", t, s.AtLimit[t])
	}
	return strings.Join(parts, "; ")
}
