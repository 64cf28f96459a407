package memstore

import (
	"github.com/google/btree"

	"github.com/jobctl/jobctl/engine"
)

// idSet is a set of job ids kept in order.
type idSet = btree.BTreeG[int64]

// The trees share one free list, so the many small sets (one per key, node
// and parent) do not each keep spare nodes of their own.
var (
	freeIDNodes = btree.NewFreeListG[int64](btree.DefaultFreeListSize)
	lessID      = func(a, b int64) bool { return a < b }
)

func newIDSet() *idSet { return btree.NewWithFreeListG(16, lessID, freeIDNodes) }

// keySlot is a job's place in its key's order (engine.Job.KeyBefore).
type keySlot struct{ place, id int64 }

// slotSet is a key's jobs in the key's order.
type slotSet = btree.BTreeG[keySlot]

func lessSlot(a, b keySlot) bool { return a.place < b.place || (a.place == b.place && a.id < b.id) }

func slotOf(j *engine.Job) keySlot { return keySlot{place: j.KeyPlace(), id: j.ID} }

func addTo[K comparable](m map[K]*idSet, k K, id int64) {
	set := m[k]
	if set == nil {
		set = newIDSet()
		m[k] = set
	}
	set.ReplaceOrInsert(id)
}

// removeFrom drops id from m[k], and the set once it is empty, so keys and
// nodes that are gone cost nothing.
func removeFrom[K comparable](m map[K]*idSet, k K, id int64) {
	set := m[k]
	if set == nil {
		return
	}
	set.Delete(id)
	if set.Len() == 0 {
		delete(m, k)
	}
}

// jobTable holds the jobs and every index the store's queries use. Stored
// jobs are never changed in place: an update stores a new *engine.Job, so
// the old one can serve as the undo of a transaction.
type jobTable struct {
	byID map[int64]*engine.Job
	all  *idSet

	// Indexes of fields that never change after the insert.
	byKey    map[string]*idSet // jobs with a key
	byType   map[string]*idSet
	byParent map[int64]*idSet

	// Indexes of fields that transitions change.
	byStatus map[engine.Status]*idSet
	byNode   map[string]*idSet // jobs with a node
	// keyLive holds, in the key's order, the jobs of a key that can block
	// a later one: those that have not ended, and those that failed and
	// wait for their rollback job (engine.Job.RollbackPending).
	keyLive     map[string]*slotSet
	keyActive   map[string]*idSet // jobs that hold their key (Job.HoldsKey)
	loadHolding map[string]*idSet // jobs that count against a node (Job.HoldsLoad)
	// childrenHolding counts, per parent, its children that hold load.
	childrenHolding map[int64]int
	// nodeLoads sums, per node, the load and count of its load-holding
	// jobs, so a node's live figures cost no walk of its jobs.
	nodeLoads map[string]*engine.NodeLoad

	// queues hold, per dispatchable status and type, the only jobs that
	// can be dispatchable: those without a key, and the head of each key
	// (its first job in keyLive). Every other job of a key has an earlier
	// job of keyLive, which blocks it. So a page of dispatchable jobs
	// reads a queue, not every queued job; queued says where each job in
	// one stands.
	queues map[queueKey]*queue
	queued map[int64]queued
	heads  map[string]int64 // key → its head
}

func newJobTable() *jobTable {
	return &jobTable{
		byID:        map[int64]*engine.Job{},
		all:         newIDSet(),
		byKey:       map[string]*idSet{},
		byType:      map[string]*idSet{},
		byParent:    map[int64]*idSet{},
		byStatus:    map[engine.Status]*idSet{},
		byNode:      map[string]*idSet{},
		keyLive:     map[string]*slotSet{},
		keyActive:   map[string]*idSet{},
		loadHolding: map[string]*idSet{},

		childrenHolding: map[int64]int{},
		nodeLoads:       map[string]*engine.NodeLoad{},
		queues:          map[queueKey]*queue{},
		queued:          map[int64]queued{},
		heads:           map[string]int64{},
	}
}

// put stores j, a new job or the next version of a stored one, and brings
// every index up to date.
func (t *jobTable) put(j *engine.Job) {
	old := t.byID[j.ID]
	t.byID[j.ID] = j
	if old == nil {
		t.indexEvery(j, true)
		t.indexFixed(j, true)
		t.indexState(j, true)
	} else {
		t.reindexState(old, j)
	}
	if j.Key != "" {
		t.refreshHead(j.Key)
	}
	// Only a job of a dispatchable status is ever queued: one that was not
	// and is not stays out, without a look-up in queued.
	if old == nil || old.Status.Dispatchable() || j.Status.Dispatchable() {
		t.syncReady(j.ID)
	}
}

// remove takes a job out again (the undo of its insert).
func (t *jobTable) remove(id int64) { t.removeMany([]int64{id}) }

// removeMany takes the jobs out, as a purge does. When they are at least
// half the jobs stored, the sets every job is in (indexEvery) are built
// again from the jobs that stay, where taking each job out of them would
// cost a search of a tree apiece: a purge of ended jobs leaves few.
func (t *jobTable) removeMany(ids []int64) {
	rebuild := 2*len(ids) >= t.all.Len()
	for _, id := range ids {
		old := t.byID[id]
		if old == nil {
			continue
		}
		if !rebuild {
			t.indexEvery(old, false)
		}
		t.indexFixed(old, false)
		t.indexState(old, false)
		delete(t.byID, id)
		if old.Key != "" {
			t.refreshHead(old.Key)
		}
		t.syncReady(id)
	}
	if rebuild {
		t.all = newIDSet()
		clear(t.byType)
		clear(t.byStatus)
		clear(t.byNode)
		for _, j := range t.byID {
			t.indexEvery(j, true)
		}
	}
}

// indexEvery adds a new job to the sets every job is in, or takes it off.
func (t *jobTable) indexEvery(j *engine.Job, add bool) {
	if !add {
		t.all.Delete(j.ID)
		removeFrom(t.byType, j.Type, j.ID)
		removeFrom(t.byStatus, j.Status, j.ID)
		if j.Node != "" {
			removeFrom(t.byNode, j.Node, j.ID)
		}
		return
	}
	t.all.ReplaceOrInsert(j.ID)
	addTo(t.byType, j.Type, j.ID)
	addTo(t.byStatus, j.Status, j.ID)
	if j.Node != "" {
		addTo(t.byNode, j.Node, j.ID)
	}
}

// indexFixed indexes the fields that never change after the insert, but
// the type (indexEvery).
func (t *jobTable) indexFixed(j *engine.Job, add bool) {
	update := addTo[string]
	updateParent := addTo[int64]
	if !add {
		update, updateParent = removeFrom[string], removeFrom[int64]
	}
	if j.Key != "" {
		update(t.byKey, j.Key, j.ID)
	}
	if j.ParentID != nil {
		updateParent(t.byParent, *j.ParentID, j.ID)
	}
}

// indexState indexes the fields that transitions change, but the status
// and node (indexEvery).
func (t *jobTable) indexState(j *engine.Job, add bool) {
	update := addTo[string]
	if !add {
		update = removeFrom[string]
	}
	if j.HoldsLoad() {
		update(t.loadHolding, j.Node, j.ID)
		t.countHolding(j, add)
	}
	if j.Key == "" {
		return
	}
	if keyLive(j) {
		if add {
			t.addKeyLive(j)
		} else if set := t.keyLive[j.Key]; set != nil {
			set.Delete(slotOf(j))
			if set.Len() == 0 {
				delete(t.keyLive, j.Key)
			}
		}
	}
	if j.HoldsKey() {
		update(t.keyActive, j.Key, j.ID)
	}
}

// reindexState moves a job from the indexes of old, its stored version, to
// those of j, the next: what indexState(old, false) then indexState(j,
// true) leave, but a set the job stays in is not touched (a job that ends
// stays in its node's set). The sums of load are taken off and added
// again as ever, so their rounding is what it always was.
func (t *jobTable) reindexState(old, j *engine.Job) {
	if old.Status != j.Status {
		removeFrom(t.byStatus, old.Status, old.ID)
		addTo(t.byStatus, j.Status, j.ID)
	}
	if old.Node != j.Node {
		if old.Node != "" {
			removeFrom(t.byNode, old.Node, old.ID)
		}
		if j.Node != "" {
			addTo(t.byNode, j.Node, j.ID)
		}
	}
	oldHolds, holds := old.HoldsLoad(), j.HoldsLoad()
	// An entry that stays as it was is left alone.
	staysHolding := oldHolds && holds && old.Node == j.Node
	if oldHolds && !staysHolding {
		removeFrom(t.loadHolding, old.Node, old.ID)
	}
	if holds && !staysHolding {
		addTo(t.loadHolding, j.Node, j.ID)
	}
	if oldHolds {
		t.countHolding(old, false)
	}
	if holds {
		t.countHolding(j, true)
	}
	if j.Key == "" {
		return
	}
	oldLive, live := keyLive(old), keyLive(j)
	oldSlot, slot := slotOf(old), slotOf(j)
	staysLive := oldLive && live && oldSlot == slot
	if oldLive && !staysLive {
		if set := t.keyLive[old.Key]; set != nil {
			set.Delete(oldSlot)
			if set.Len() == 0 {
				delete(t.keyLive, old.Key)
			}
		}
	}
	if live && !staysLive {
		t.addKeyLive(j)
	}
	switch oldActive, active := old.HoldsKey(), j.HoldsKey(); {
	case oldActive && !active:
		removeFrom(t.keyActive, old.Key, old.ID)
	case active && !oldActive:
		addTo(t.keyActive, j.Key, j.ID)
	}
}

// keyLive reports whether j belongs in its key's keyLive set: it can block
// a later job of the key.
func keyLive(j *engine.Job) bool { return !j.Status.Terminal() || j.RollbackPending() }

func (t *jobTable) addKeyLive(j *engine.Job) {
	set := t.keyLive[j.Key]
	if set == nil {
		set = btree.NewG(16, lessSlot)
		t.keyLive[j.Key] = set
	}
	set.ReplaceOrInsert(slotOf(j))
}

// countHolding adds a load-holding job to its node's sums and its parent's
// count, or takes it off.
func (t *jobTable) countHolding(j *engine.Job, add bool) {
	t.countLoad(j, add)
	if j.ParentID == nil {
		return
	}
	if add {
		t.childrenHolding[*j.ParentID]++
	} else if t.childrenHolding[*j.ParentID]--; t.childrenHolding[*j.ParentID] <= 0 {
		delete(t.childrenHolding, *j.ParentID)
	}
}

// refreshHead moves the key's head to its first job of keyLive, and the
// ready sets with it.
func (t *jobTable) refreshHead(key string) {
	var head int64
	if live := t.keyLive[key]; live != nil {
		first, _ := live.Min()
		head = first.id
	}
	prev := t.heads[key]
	if head == prev {
		return
	}
	if head == 0 {
		delete(t.heads, key)
	} else {
		t.heads[key] = head
	}
	t.syncReady(prev)
	t.syncReady(head)
}

// syncReady puts job id into the queue of its status and type, or takes it
// out.
func (t *jobTable) syncReady(id int64) {
	if id == 0 {
		return
	}
	t.dequeue(id)
	j := t.byID[id]
	if j != nil && j.Status.Dispatchable() && (j.Key == "" || t.heads[j.Key] == id) {
		t.enqueue(j)
	}
}

// keyRivals returns the jobs of j's key that engine.DispatchHold needs to
// judge j: every job holding the key, and the first other job of keyLive.
// Those decide the rule (a blocker is an active job, or an earlier one of
// keyLive, and the first such is earlier if any is), so
// the judgement is the one all jobs of the key would give, at the cost of
// the few active jobs.
func (t *jobTable) keyRivals(j *engine.Job) []*engine.Job {
	if j.Key == "" {
		return nil
	}
	var out []*engine.Job
	if active := t.keyActive[j.Key]; active != nil {
		active.Ascend(func(id int64) bool {
			out = append(out, t.byID[id])
			return true
		})
	}
	if live := t.keyLive[j.Key]; live != nil {
		live.Ascend(func(slot keySlot) bool {
			if slot.id == j.ID {
				return true
			}
			out = append(out, t.byID[slot.id])
			return false
		})
	}
	return out
}

// countLoad adds a load-holding job to its node's sums, or takes it off.
// A node with none left sums to exactly 0, whatever rounding the adding
// and taking off of fractional loads left.
func (t *jobTable) countLoad(j *engine.Job, add bool) {
	sum := t.nodeLoads[j.Node]
	if sum == nil {
		sum = &engine.NodeLoad{}
		t.nodeLoads[j.Node] = sum
	}
	if add {
		sum.Load += j.Load
		sum.Running++
		return
	}
	sum.Load -= j.Load
	if sum.Running--; sum.Running <= 0 {
		delete(t.nodeLoads, j.Node)
	}
}
