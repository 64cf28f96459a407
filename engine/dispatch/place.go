package dispatch

import (
	"sync"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// A round places jobs a batch at a time: it plans a whole page against the
// nodes as the round books them in memory, offers each node its share in
// one request, all nodes at once, and settles the verdicts. Each job is
// offered with the status and version the round read; the node that
// accepts it starts it with one guarded transition (QUEUED or RESTART →
// RUNNING on that node), which is also its claim, so a job costs the
// database its start and its end and nothing for the handshake. Jobs a
// node declined, or that a node did not answer for, are planned again
// against the other nodes; what no node takes was never touched and stays
// queued. The guarantees are those of offering one job at a time: a job
// is claimed by one guarded transition, runs only where a node accepted
// it, and of two offers of one job (an answer lost, a failover) at most
// one starts it.

// planned is one job of a batch and the node it is planned onto.
type planned struct {
	job  *engine.Job // as read
	node *engine.Node
	// first: it was planned as the first child of its parent, and the
	// round counted its parent's children as running on its account.
	first bool
	// declined: some node declined it this round.
	declined bool
	// reason is the refusing node's reason.
	reason string
	// slot: it counts against its type's limit this round (quotas).
	slot bool
}

// placeAll places a batch of dispatchable jobs: it plans them in memory
// (plan), then applies the plan (apply), and plans and applies again what
// nodes declined, until every job is placed or waits. beforeOffers, if
// not nil, is called once the batch is planned, before its first offer,
// when there is one to make.
func (r *round) placeAll(jobs []*engine.Job, beforeOffers func()) error {
	if len(jobs) == 0 {
		return nil
	}
	if err := r.learnSiblings(jobs); err != nil {
		return err
	}
	plan := make([]*planned, 0, len(jobs))
	// One allocation holds every job's plan: a round plans each job it reads.
	all := make([]planned, len(jobs))
	for i, job := range jobs {
		r.stats.Considered++
		p := &all[i]
		p.job = job
		if r.plan(p) {
			plan = append(plan, p)
		}
	}
	if beforeOffers != nil && len(plan) > 0 {
		beforeOffers()
	}
	var err error
	for len(plan) > 0 && err == nil {
		var retry []*planned
		if retry, err = r.apply(plan); err != nil {
			plan = nil // apply took them off the books
			break
		}
		plan = plan[:0]
		for _, p := range retry {
			if r.plan(p) {
				plan = append(plan, p)
			}
		}
	}
	// Jobs still planned when the batch ended early come off the books.
	for _, p := range plan {
		r.unbook(p)
	}
	if err == nil {
		err = r.applyKeeps()
	}
	return err
}

// plan chooses the node p's job is offered to next, among its candidates
// that have not declined or failed to answer this round, and books the job
// there in memory. With none left it counts why the job waits and has it
// keep a node if it is oversized. It reads nothing: what it knows of a
// parent's children the round learned before (learnSiblings).
func (r *round) plan(p *planned) bool {
	job := p.job
	if r.quotas.exhausted(job.Type) {
		r.heldAtLimit(job)
		return false
	}
	first := r.candidates(&r.p, job, false)
	had := len(r.p.Eligible)
	r.p.Eligible = r.open(r.p.Eligible)
	if len(r.p.Eligible) == 0 {
		switch {
		case had > 0 && p.declined:
			r.stats.wait(WaitDeclined)
		case had > 0:
			r.stats.wait(WaitUnreachable)
		case r.p.NeverRunnable():
			r.stats.wait(WaitNeverRunnable)
		default:
			r.stats.wait(string(r.p.WaitCause()))
		}
		r.keep(job)
		return false
	}
	now := r.clock.Now()
	var n *engine.Node
	if picker, ok := r.selector.(placement.Picker); ok {
		n = picker.Pick(job, r.p.Eligible, now)
	} else {
		n = r.selector.Order(job, r.p.Eligible, now)[0]
	}
	p.node = n
	n.Load += job.Load
	n.Running++
	r.quotas.take(p)
	if first {
		// Its siblings later in the queue need room of their own: they are
		// no longer first children, unless this one is not taken.
		p.first = true
		r.siblingsRunning[*job.ParentID] = true
	}
	return true
}

// open drops the nodes that declined or did not answer this round, in place.
func (r *round) open(nodes []*engine.Node) []*engine.Node {
	if len(r.closed) == 0 && len(r.unreachable) == 0 {
		return nodes
	}
	kept := nodes[:0]
	for _, n := range nodes {
		if !r.closed[n.Name] && !r.unreachable[n.Name] {
			kept = append(kept, n)
		}
	}
	return kept
}

// unbook takes a planned job off its node's books in memory: it was not
// taken there.
func (r *round) unbook(p *planned) {
	if p.node == nil {
		return
	}
	p.node.Load -= p.job.Load
	p.node.Running--
	p.node = nil
	r.reshaped++
	r.quotas.release(p)
	if p.first {
		p.first = false
		r.siblingsRunning[*p.job.ParentID] = r.acceptedChild[*p.job.ParentID]
	}
}

// apply records the nodes the plan keeps, offers a planned batch and
// settles the verdicts. It returns the jobs to plan again (declined, or
// their node did not answer). No job is written before the offers: each
// job is offered as the round read it, and the node that takes it starts
// it guarded by that status and version, so its start is the claim. A job
// no node takes stays where it was.
func (r *round) apply(plan []*planned) ([]*planned, error) {
	if !r.trusted() {
		return nil, r.abandon(plan, ErrUntrusted)
	}
	if err := r.applyKeeps(); err != nil {
		return nil, r.abandon(plan, err)
	}
	verdicts := r.offerAll(plan)
	var retry, refused []*planned
	for i, p := range plan {
		res := verdicts[i]
		if r.debug {
			r.log.Debug("offered job", "job", p.job.ID, "target", p.node.Name, "verdict", res.Verdict, "reason", res.Reason)
		}
		switch res.Verdict {
		case engine.OfferAccepted:
			r.stats.Dispatched++
			if p.job.ParentID != nil {
				r.acceptedChild[*p.job.ParentID] = true
				r.siblingsRunning[*p.job.ParentID] = true
			}
			p.first = false
			if err := r.unkeep(p.job.ID); err != nil {
				return nil, err
			}
		case engine.OfferRefused:
			r.stats.Failed++
			p.reason = res.Reason
			refused = append(refused, p)
		case engine.OfferGone, engine.OfferUnknownJob:
			r.quotas.forfeit(p)
			r.unbook(p)
		case engine.OfferError:
			if !r.unreachable[p.node.Name] {
				r.unreachable[p.node.Name] = true
				r.log.Warn("node did not answer an offer", "target", p.node.Name, "jobs", countOn(plan, p.node), "err", res.Reason)
			}
			r.quotas.forfeit(p)
			r.unbook(p)
			retry = append(retry, p)
		default: // declined: the node's own books are fuller than the round's
			r.closed[p.node.Name] = true
			p.declined = true
			r.unbook(p)
			retry = append(retry, p)
		}
	}
	return retry, r.refuse(refused)
}

// offerAll sends each node its share of the batch, every node at once, and
// returns the verdicts in the order of batch.
func (r *round) offerAll(batch []*planned) []engine.OfferResult {
	verdicts := make([]engine.OfferResult, len(batch))
	shares := map[*engine.Node][]int{}
	var order []*engine.Node
	for i, p := range batch {
		if shares[p.node] == nil {
			order = append(order, p.node)
		}
		shares[p.node] = append(shares[p.node], i)
	}
	var wg sync.WaitGroup
	for _, n := range order {
		idx := shares[n]
		offers := make([]engine.DispatchOffer, len(idx))
		for k, i := range idx {
			offers[k] = engine.OfferOf(batch[i].job, r.term)
		}
		offer := func() {
			var got []engine.OfferResult
			if r.isLocal(n) {
				jobs := make([]*engine.Job, len(idx))
				for k, i := range idx {
					jobs[k] = batch[i].job
				}
				got = r.local.StartLocal(r.ctx, r.term, jobs)
			} else {
				got = r.offerer.OfferBatch(r.ctx, n, offers)
			}
			for k, i := range idx {
				if k < len(got) {
					verdicts[i] = got[k]
				} else {
					verdicts[i] = engine.OfferResult{Verdict: engine.OfferError, Reason: "no verdict for the job"}
				}
			}
		}
		if r.sequential || len(order) == 1 {
			offer()
		} else {
			wg.Go(offer)
		}
	}
	wg.Wait()
	return verdicts
}

// isLocal reports whether n is the dispatcher's own node (LocalOfferer).
func (r *round) isLocal(n *engine.Node) bool { return r.local != nil && r.local.Local(n) }

// refuse fails the jobs a node refused for good (412: type not offered,
// invalid payload): no retry would change the answer. Each is failed as
// the round read it; one the node had started already (an invalid spec,
// which the node fails itself) has moved on, and its update conflicts and
// changes nothing.
func (r *round) refuse(ps []*planned) error {
	var us []engine.JobUpdate
	for _, p := range ps {
		us = append(us, engine.RefuseUpdate(p.job, p.node.Name, p.reason))
		r.unbook(p)
		if err := r.unkeep(p.job.ID); err != nil {
			return err
		}
	}
	if len(us) == 0 {
		return nil
	}
	_, err := r.Dispatcher.store.JobUpdateMany(r.ctx, us)
	return err
}

// abandon ends a batch before its offers: the planned jobs come off the
// books, untouched in the store.
func (r *round) abandon(plan []*planned, cause error) error {
	for _, p := range plan {
		r.unbook(p)
	}
	return cause
}

func countOn(batch []*planned, n *engine.Node) int {
	c := 0
	for _, p := range batch {
		if p.node == n {
			c++
		}
	}
	return c
}
