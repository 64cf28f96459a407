package dispatch

import (
	"context"
	"slices"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// A round is snapshot, plan, apply. It reads a snapshot of the cluster
// (the nodes with their loads and the nodes kept for oversized jobs, the
// type limits, and what each queue holds); then, a slice at a time, it
// reads the jobs that fit (queue.go), plans them onto nodes in memory
// without reading the store (plan), and applies the plan: the nodes kept
// for oversized jobs are recorded and each node is offered its share in
// one request (commit). Before every slice it asks whether the lease may
// still be trusted, renewing it when due, so however much a round places
// it never outlasts its trust. Housekeeping (recovering silent nodes'
// jobs, creating rollback jobs, dropping lapsed reservations) is not a
// round's: the lease holder runs it apart
// (Housekeeper).

// round is the state of one dispatch round.
type round struct {
	*Dispatcher
	*cluster
	ctx context.Context
	// trusted is asked before every slice and every offer; it renews the
	// lease when due.
	trusted func() bool
	// term is the lease term the round works under, read at its start.
	term engine.LeaseTerm
	// healthy marks, per node, those the round may offer work (judgeHealth).
	healthy []bool
	// unreachable are nodes whose endpoint did not answer this round: they
	// get no more offers until the next one.
	unreachable map[string]bool
	// closed are nodes that declined an offer this round: their own books
	// are fuller than the round's, so they get no more offers until the
	// next one.
	closed map[string]bool
	// acceptedChild marks the parents a child was accepted for this round.
	acceptedChild map[int64]bool
	// debug: offers are logged one by one (asked once per round).
	debug bool
	// done are the jobs placed ahead of the queue (those kept a node),
	// which the pages skip.
	done map[int64]bool
	// queues are what the store holds in each queue, read at the start.
	queues []engine.QueueLoads
	// p is reused for every job of the round.
	p     placement.Placement
	stats RoundStats
	// quotas are what the round may still start of each limited type.
	quotas quotas
	// keeps are the nodes the plan keeps for oversized jobs, which the
	// apply step records in the store.
	keeps []engine.Reservation
	// reshaped counts the changes to the books other than a job booked:
	// a job taken off them, a node kept for an oversized job freed. A
	// page judged against the books is still the page to read while it
	// stands (readAhead).
	reshaped int
}

func (r *round) run() error {
	kept, err := r.snapshot()
	if err != nil {
		return err
	}
	r.judgeHealth()
	// Jobs that keep a node go first: the node was drained for them.
	r.done = make(map[int64]bool, len(kept))
	for _, job := range kept {
		r.done[job.ID] = true
	}
	if err := r.placeAll(kept, nil); err != nil {
		return err
	}
	// RESTART before QUEUED; workflow steps last, so the work they stand
	// for is placed first.
	for _, workflows := range []bool{false, true} {
		for _, status := range engine.DispatchableStatuses {
			if err := r.drain(status, workflows); err != nil {
				return err
			}
		}
	}
	return nil
}

// snapshot reads what the round plans against: the nodes and the
// reservations that still stand, the type limits, and the queues. The
// reads go one after another, on one connection: a round works within the
// lease holder's share of its node's connection budget.
func (r *round) snapshot() (kept []*engine.Job, err error) {
	store := r.Dispatcher.store
	if r.cluster, kept, _, err = loadCluster(r.ctx, store); err != nil {
		return nil, err
	}
	if r.quotas, err = readQuotas(r.ctx, store); err != nil {
		return nil, err
	}
	if r.queues, err = store.JobQueueLoads(r.ctx); err != nil {
		return nil, err
	}
	return kept, nil
}

// drain places the jobs of the queues of status, the workflow steps' or
// every other type's, a slice at a time, until nothing more fits. The jobs
// read beyond the room (oversized ones, first children) join the slice
// that reaches their place in their queue, so every slice is planned in
// dispatch order. Each slice but the first is read while the one before
// is offered (readAhead).
func (r *round) drain(status engine.Status, workflows bool) error {
	readers := r.readers(status, workflows)
	var beyond []*engine.Job
	for _, rd := range readers {
		page, err := r.readBeyondRoom(rd)
		if err != nil {
			return err
		}
		beyond = append(beyond, page...)
	}
	var ahead *readAhead
	defer func() { r.drop(ahead) }()
	for {
		if !r.trusted() {
			return ErrUntrusted
		}
		slice, err := r.nextSlice(readers, ahead)
		if err != nil {
			return err
		}
		ahead = nil
		var later []*engine.Job
		for _, j := range beyond {
			if rd := readerOf(readers, j.Type); rd.done || engine.PlaceOf(j).Before(rd.after) {
				slice = append(slice, j)
			} else {
				later = append(later, j)
			}
		}
		beyond = later
		if len(slice) == 0 {
			return nil
		}
		slices.SortFunc(slice, byPlace)
		if err := r.learnSiblings(slice); err != nil {
			return err
		}
		placed := r.stats.Dispatched
		if err := r.placeAll(slice, func() { ahead = r.startReadAhead(readers) }); err != nil {
			return err
		}
		if r.stats.Dispatched == placed {
			// Nothing of a slice that fitted the room was taken: every
			// node that had room declined or did not answer.
			r.stats.More = r.stats.More || slices.ContainsFunc(readers, func(rd *reader) bool { return !rd.done })
			return nil
		}
	}
}

// readAhead is the next slice's read, made while the slice before is
// offered: the offers wait on the nodes, the read on the database, and
// the two need not wait for each other. Its pages are judged against the
// books as the plan left them, which are the books the next slice is read
// against unless the offers reshape them (a job declined, unanswered,
// refused or gone, a node kept for an oversized job freed); then what was
// read ahead is dropped and the slice read again. A slice that plans
// nothing to offer ends the drain, so nothing is read ahead of it.
type readAhead struct {
	reads    []*pageRead
	reshaped int
	fetched  chan struct{}
}

// startReadAhead starts reading the readers' next pages, unless the round
// offers one node after another (a simulation, which replays exactly) or
// no reader has a page to read.
func (r *round) startReadAhead(readers []*reader) *readAhead {
	if r.sequential {
		return nil
	}
	a := &readAhead{reshaped: r.reshaped, fetched: make(chan struct{})}
	reading := false
	for _, rd := range readers {
		f := r.fittingRead(rd)
		a.reads = append(a.reads, f)
		reading = reading || f.reads()
	}
	if !reading {
		close(a.fetched)
		return a
	}
	go func() {
		defer close(a.fetched)
		for _, f := range a.reads {
			f.fetch(r)
		}
	}()
	return a
}

// drop waits for a's reads and drops their pages, counted as read all the
// same.
func (r *round) drop(a *readAhead) {
	if a == nil {
		return
	}
	<-a.fetched
	for _, f := range a.reads {
		r.stats.Read += len(f.page)
	}
}

// nextSlice is the readers' next pages of jobs that fit the room left:
// those read ahead while the books stand as they were judged against,
// else read now.
func (r *round) nextSlice(readers []*reader, ahead *readAhead) ([]*engine.Job, error) {
	if ahead != nil && ahead.reshaped != r.reshaped {
		r.drop(ahead)
		ahead = nil
	}
	if ahead != nil {
		<-ahead.fetched
	}
	var slice []*engine.Job
	for i, rd := range readers {
		var page []*engine.Job
		var err error
		if ahead != nil {
			page, err = r.settle(ahead.reads[i])
		} else {
			page, err = r.readFitting(rd)
		}
		if err != nil {
			return nil, err
		}
		slice = append(slice, page...)
	}
	return slice, nil
}

// readerOf is the reader of typ's queue among readers.
func readerOf(readers []*reader, typ string) *reader {
	for _, rd := range readers {
		if rd.q.Type == typ {
			return rd
		}
	}
	return nil
}
