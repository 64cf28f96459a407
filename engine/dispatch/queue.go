package dispatch

import (
	"slices"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// A round reads the queue by what it can place, never by how long the
// queue is. The store describes every queue (a status and a type) in a few
// index steps (engine.Store.JobQueueLoads); a round then reads, type by
// type, only the jobs whose load fits the most free room of an open node
// offering the type, at most as many as those nodes have slots left (and
// the type's limit allows), in dispatch order, and plans them together in
// that order. What it places shrinks the room, so the next page reads
// less; a queue whose lightest job fits nowhere, or whose page came back
// short, is not read again that round. A long queue of jobs that cannot
// fit costs a round nothing.
//
// Two kinds of job are read beyond the room, each bounded by the nodes
// that could take them: an oversized job (its load above every node's max
// load), which runs alone on one of the largest nodes or keeps one for
// itself (placement.Placement.Keep), and the first child of a parent none
// of whose children runs yet, which may queue ahead on a node without room.

// reader is a round's place in one queue.
type reader struct {
	q     engine.QueueLoads
	after engine.QueuePlace
	// done: the queue holds nothing more the round could place.
	done bool
}

// readers are the round's readers of the queues of status: the workflow
// steps' alone, or every other type's.
func (r *round) readers(status engine.Status, workflows bool) []*reader {
	var out []*reader
	for _, q := range r.queues {
		if q.Status == status && (q.Type == engine.TypeWorkflow) == workflows {
			out = append(out, &reader{q: q})
		}
	}
	return out
}

// readFitting reads rd's next page of jobs that fit the room left, or
// marks rd done and notes why its jobs wait unread.
func (r *round) readFitting(rd *reader) ([]*engine.Job, error) {
	f := r.fittingRead(rd)
	f.fetch(r)
	return r.settle(f)
}

// A pageRead is one read of a reader's queue, made in three steps so the
// store's part may run while the round does other work (readAhead): what
// to read is judged against the round's books (fittingRead), the store is
// read (fetch), and what came back is taken into the round (settle).
type pageRead struct {
	rd *reader
	p  engine.JobDispatchableParams
	// room and limit are what the page was judged against. done: the
	// reader was done already; none: nothing of the queue fits the room.
	// Either way nothing is read (reads).
	room  typeRoom
	limit int
	done  bool
	none  bool
	page  []*engine.Job
	err   error
}

// fittingRead judges rd's next read of jobs that fit the room left, one
// job more than the room takes, which tells whether the queue goes on.
func (r *round) fittingRead(rd *reader) *pageRead {
	f := &pageRead{rd: rd, done: rd.done}
	if rd.done {
		return f
	}
	f.room = r.roomFor(rd.q.Type, rd.q.Lightest)
	f.limit = min(r.pageSize, f.room.slots)
	if left, limited := r.quotas.left(rd.q.Type); limited {
		f.limit = min(f.limit, left)
	}
	if f.limit <= 0 || f.room.free+loadSlack < rd.q.Lightest {
		f.none = true
		return f
	}
	f.p = r.readParams(rd, engine.JobDispatchableParams{Limit: f.limit + 1, MaxLoad: engine.Ptr(f.room.free + loadSlack)})
	return f
}

// reads reports whether f has a page to read.
func (f *pageRead) reads() bool { return !f.done && !f.none }

// fetch makes f's read of the store, if it has one. It changes nothing of
// the round but f, so it may run beside the round's other work.
func (f *pageRead) fetch(r *round) {
	if !f.reads() {
		return
	}
	f.page, f.err = r.Dispatcher.store.JobListDispatchable(r.ctx, f.p)
}

// settle takes f's page into the round: it moves the reader past the
// page, or marks it done (noting why the jobs wait unread when none fit).
func (r *round) settle(f *pageRead) ([]*engine.Job, error) {
	rd := f.rd
	switch {
	case f.done:
		return nil, nil
	case f.none:
		rd.done = true
		r.noteUnread(rd, f.room)
		return nil, nil
	case f.err != nil:
		rd.done = true
		return nil, f.err
	}
	page := r.took(f.p, f.page)
	if len(page) <= f.limit {
		rd.done = true
		return page, nil
	}
	page = page[:f.limit]
	rd.after = engine.PlaceOf(page[f.limit-1])
	return page, nil
}

// readBeyondRoom reads the jobs of rd's queue that no open node has room
// for but that may still be placed: oversized jobs and first children.
func (r *round) readBeyondRoom(rd *reader) ([]*engine.Job, error) {
	var out []*engine.Job
	largest, takers := r.largestMaxLoad(rd.q.Type)
	if largest > 0 && rd.q.Heaviest > largest+loadSlack {
		if takers == 0 {
			// No node of the largest size takes jobs above its max load:
			// the heaviest of the queue can never run, and keep no node.
			r.stats.Unread = append(r.stats.Unread, UnreadQueue{Status: rd.q.Status, Type: rd.q.Type,
				Cause: WaitNeverRunnable, Lightest: rd.q.Lightest, Heaviest: rd.q.Heaviest, Room: largest})
			r.stats.More = true
		} else {
			page, err := r.read(rd, engine.JobDispatchableParams{Limit: takers, LoadAbove: engine.Ptr(largest + loadSlack)})
			if err != nil {
				return nil, err
			}
			out = append(out, page...)
		}
	}
	if rd.q.Children && rd.q.Type != engine.TypeWorkflow {
		room := r.roomFor(rd.q.Type, 0)
		if room.nodes > 0 && rd.q.Heaviest > room.free+loadSlack {
			page, err := r.read(rd, engine.JobDispatchableParams{Limit: room.nodes, FirstChildren: true,
				LoadAbove: engine.Ptr(room.free + loadSlack), MaxLoad: engine.Ptr(largest + loadSlack)})
			if err != nil {
				return nil, err
			}
			for _, j := range page {
				r.siblingsRunning[*j.ParentID] = false
			}
			out = append(out, page...)
		}
	}
	return out, nil
}

// read reads one page of rd's queue with p's limit and load range, after
// rd's place when p is of the fitting jobs.
func (r *round) read(rd *reader, p engine.JobDispatchableParams) ([]*engine.Job, error) {
	p = r.readParams(rd, p)
	page, err := r.Dispatcher.store.JobListDispatchable(r.ctx, p)
	if err != nil {
		return nil, err
	}
	return r.took(p, page), nil
}

// readParams completes p as a read of rd's queue.
func (r *round) readParams(rd *reader, p engine.JobDispatchableParams) engine.JobDispatchableParams {
	p.Status, p.Type = rd.q.Status, rd.q.Type
	if p.LoadAbove == nil {
		p.After = rd.after
	}
	p.Long = r.long[queueKey{status: p.Status, typ: p.Type}]
	return p
}

// took records a page read with p and returns its jobs the round has not
// placed yet.
func (r *round) took(p engine.JobDispatchableParams, page []*engine.Job) []*engine.Job {
	r.stats.Read += len(page)
	if p.LoadAbove == nil {
		r.long[queueKey{status: p.Status, typ: p.Type}] = len(page) == p.Limit
	}
	// A job placed ahead of the queue (it keeps a node) is not read twice.
	return slices.DeleteFunc(page, func(j *engine.Job) bool { return r.done[j.ID] })
}

// queueKey names a queue, for what the dispatcher remembers of it.
type queueKey struct {
	status engine.Status
	typ    string
}

// byPlace orders jobs of several queues in dispatch order.
func byPlace(a, b *engine.Job) int {
	if engine.PlaceOf(a).Before(engine.PlaceOf(b)) {
		return -1
	}
	return 1
}

// learnSiblings reads, for the parents of the children in jobs that the
// round knows nothing of yet, whether any of their children holds load on a
// node, in one listing: the round then judges every first child from
// memory (cluster.firstChild), never reading the store while it plans.
func (r *round) learnSiblings(jobs []*engine.Job) error {
	var parents []int64
	for _, j := range jobs {
		if j.ParentID == nil {
			continue
		}
		if _, known := r.siblingsRunning[*j.ParentID]; !known && !slices.Contains(parents, *j.ParentID) {
			parents = append(parents, *j.ParentID)
		}
	}
	if len(parents) == 0 {
		return nil
	}
	holding, err := r.Dispatcher.store.JobList(r.ctx, engine.JobListParams{ParentIDs: parents,
		Statuses: engine.LoadHoldingStatuses, Brief: true})
	if err != nil {
		return err
	}
	for _, id := range parents {
		r.siblingsRunning[id] = false
	}
	for _, j := range holding {
		if j.HoldsLoad() {
			r.siblingsRunning[*j.ParentID] = true
		}
	}
	return nil
}

// noteUnread records that rd's queue is left unread, and why.
func (r *round) noteUnread(rd *reader, room typeRoom) {
	u := UnreadQueue{Status: rd.q.Status, Type: rd.q.Type, Lightest: rd.q.Lightest}
	left, limited := r.quotas.left(rd.q.Type)
	switch {
	case limited && left == 0:
		u.Cause = WaitTypeLimit
		r.stats.atLimit(rd.q.Type, r.quotas[rd.q.Type].limit.MaxRunning)
	case room.nodes == 0:
		u.Cause = r.outCause(rd.q.Type)
	default:
		u.Cause, u.Room = string(placement.CauseBusy), max(room.free, 0)
	}
	r.stats.Unread = append(r.stats.Unread, u)
	r.stats.More = true
}

// outCause is why no node offering typ is open to more work: the cause
// that keeps the most of the ONLINE nodes offering it out, or
// WaitNeverRunnable when there are none.
func (r *round) outCause(typ string) string {
	counts := map[string]int{}
	best := WaitNeverRunnable
	for i, n := range r.nodes {
		if n.State != engine.NodeOnline || !n.Offers(typ) {
			continue
		}
		_, kept := r.heldFor[n.Name]
		var cause string
		switch {
		case r.closed[n.Name]:
			cause = WaitDeclined
		case r.unreachable[n.Name]:
			cause = WaitUnreachable
		case !r.healthy[i]:
			switch n.Overloaded().Kind {
			case engine.OverloadLoadAvg:
				cause = string(placement.CauseOverloaded)
			case engine.OverloadLowMemory:
				cause = string(placement.CauseLowMemory)
			default:
				cause = string(placement.CauseSilent)
			}
		case kept:
			cause = string(placement.CauseReserved)
		default:
			cause = string(placement.CauseMaxJobs)
		}
		counts[cause]++
		if best == WaitNeverRunnable || counts[cause] > counts[best] {
			best = cause
		}
	}
	return best
}
