package memstore

import (
	"github.com/google/btree"

	"github.com/jobctl/jobctl/engine"
)

// queueKey names one queue: a dispatchable status and a job type.
type queueKey struct {
	status engine.Status
	typ    string
}

// queueEntry is one job of a queue, with what ordering and filtering need,
// so a page skips a job that does not fit without looking it up.
type queueEntry struct {
	place engine.QueuePlace
	load  float64
}

func lessPlace(a, b queueEntry) bool { return a.place.Before(b.place) }

func lessLoad(a, b queueEntry) bool {
	return a.load < b.load || (a.load == b.load && a.place.ID < b.place.ID)
}

// queue holds the jobs of one queue that can be dispatchable, as the SQL
// stores' indexes jobs_queue, jobs_queue_load and jobs_queue_children hold
// theirs: in dispatch order, by load, and the children apart.
type queue struct {
	byPlace  *btree.BTreeG[queueEntry]
	byLoad   *btree.BTreeG[queueEntry]
	children *btree.BTreeG[queueEntry]
}

func newQueue() *queue {
	return &queue{
		byPlace:  btree.NewG(32, lessPlace),
		byLoad:   btree.NewG(32, lessLoad),
		children: btree.NewG(16, lessPlace),
	}
}

func (q *queue) empty() bool { return q.byPlace.Len() == 0 }

// queued is where a job stands in the queues, to take it out again.
type queued struct {
	key   queueKey
	entry queueEntry
	child bool
}

// enqueue puts job j into its queue; j must be in no queue.
func (t *jobTable) enqueue(j *engine.Job) {
	k := queueKey{status: j.Status, typ: j.Type}
	q := t.queues[k]
	if q == nil {
		q = newQueue()
		t.queues[k] = q
	}
	e := queueEntry{place: engine.PlaceOf(j), load: j.Load}
	q.byPlace.ReplaceOrInsert(e)
	q.byLoad.ReplaceOrInsert(e)
	child := j.ParentID != nil
	if child {
		q.children.ReplaceOrInsert(e)
	}
	t.queued[j.ID] = queued{key: k, entry: e, child: child}
}

// dequeue takes job id out of the queue it is in, if any.
func (t *jobTable) dequeue(id int64) {
	in, ok := t.queued[id]
	if !ok {
		return
	}
	delete(t.queued, id)
	q := t.queues[in.key]
	q.byPlace.Delete(in.entry)
	q.byLoad.Delete(in.entry)
	if in.child {
		q.children.Delete(in.entry)
	}
	if q.empty() {
		delete(t.queues, in.key)
	}
}
