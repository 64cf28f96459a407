package memstore

import (
	"math"

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

// lessLoad orders by load, then in dispatch order, so the jobs of one
// load are a run of byLoad in the order a page reads them.
func lessLoad(a, b queueEntry) bool {
	return a.load < b.load || (a.load == b.load && a.place.Before(b.place))
}

// firstPlace comes before every place of a queue.
var firstPlace = engine.QueuePlace{Priority: math.MaxInt, ID: math.MinInt64}

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

// maxLoadRuns is the most loads ascendInLoads merges; a range holding more
// is read by walking the queue in dispatch order.
const maxLoadRuns = 8

// ascendInLoads visits the entries of q from place from on whose load is
// above *above (nil: any) and at most maxLoad, in dispatch order, until
// visit returns false: the entries a walk of byPlace from there would
// visit after passing over the others, but without passing over them. It
// merges the runs of byLoad of each load in the range, so its cost is the
// entries visited and a seek per load, however many heavier jobs wait
// ahead of them. It reports false, having visited nothing, when the range
// holds more than maxLoadRuns loads.
func (q *queue) ascendInLoads(from engine.QueuePlace, above *float64, maxLoad float64, visit func(queueEntry) bool) bool {
	var runs []loadRun
	seek := queueEntry{load: math.Inf(-1), place: firstPlace}
	if above != nil {
		seek.load = math.Nextafter(*above, math.Inf(1))
	}
	for {
		first, ok := q.firstFrom(seek)
		if !ok || first.load > maxLoad {
			break
		}
		if len(runs) == maxLoadRuns {
			return false
		}
		runs = append(runs, loadRun{q: q, next: queueEntry{load: first.load, place: from}})
		seek = queueEntry{load: math.Nextafter(first.load, math.Inf(1)), place: firstPlace}
	}
	for {
		var head *loadRun
		for i := range runs {
			if r := &runs[i]; r.fill() && (head == nil || r.first().place.Before(head.first().place)) {
				head = r
			}
		}
		if head == nil {
			return true
		}
		e := head.first()
		head.at++
		if !visit(e) {
			return true
		}
	}
}

// firstFrom is the first entry of byLoad at or after e.
func (q *queue) firstFrom(e queueEntry) (queueEntry, bool) {
	var first queueEntry
	found := false
	q.byLoad.AscendGreaterOrEqual(e, func(x queueEntry) bool {
		first, found = x, true
		return false
	})
	return first, found
}

// loadRun reads the entries of one load of a queue from byLoad in dispatch
// order, a chunk at a time.
type loadRun struct {
	q    *queue
	next queueEntry // where the next chunk starts
	buf  []queueEntry
	at   int  // buf[at] is the run's next entry
	done bool // no entry of the load is left after buf
}

func (r *loadRun) first() queueEntry { return r.buf[r.at] }

const loadRunChunk = 16

// fill reads the next chunk when buf is used up; it reports whether buf
// holds an entry.
func (r *loadRun) fill() bool {
	if r.at < len(r.buf) {
		return true
	}
	if r.done {
		return false
	}
	if r.buf == nil {
		r.buf = make([]queueEntry, 0, loadRunChunk)
	}
	r.buf, r.at = r.buf[:0], 0
	load := r.next.load
	r.q.byLoad.AscendGreaterOrEqual(r.next, func(x queueEntry) bool {
		if x.load != load {
			return false
		}
		r.buf = append(r.buf, x)
		return len(r.buf) < loadRunChunk
	})
	if len(r.buf) < loadRunChunk {
		r.done = true
	}
	if len(r.buf) == 0 {
		return false
	}
	last := r.buf[len(r.buf)-1].place
	r.next.place = engine.QueuePlace{Priority: last.Priority, ID: last.ID + 1}
	return true
}
