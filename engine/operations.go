package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The operations: every state change of a job together with the steps that
// must follow it, in one transaction, so a crash or a lost connection
// between the steps can leave nothing half done. The rules of each step are
// the pure functions beside them (RecoverUpdate, OutcomeUpdate,
// CancelUpdate, …); the dispatcher, the nodes, the commands and the
// dashboard make every change that has follow-ups through these
// operations. A transition with none (an offer, a start, a wait for
// children, a result that ends its job) stays the one guarded store call
// it is, on the hot path above all:
//
//   - RecoverJobs: jobs taken from a node that is gone, with the children of
//     each attempt that goes back to the queue.
//   - RecordOutcome, RecordOutcomes: a run's result, with the children of an
//     attempt that goes back to the queue.
//   - ApplyVerb (admin.go) with VerbCancel: a job cancelled with its
//     descendants.
//   - RemoveNode: a gone node's jobs recovered (with their attempts'
//     children) and its row removed.
//   - DrainStop, DrainRequeue: a job stopped at a drain's deadline (with
//     its attempt's children) and put back in the queue once stopped.
//   - LateOutcome (late.go): the result of a run its node recorded too
//     late, taken when the job was only put back in the queue for it.
//
// RepairChildren ends what a store written by an older jobctl, or a
// cascade that met jobs that kept changing, may still have left behind.

// ErrChildrenLeft says that an operation's change was made but some of the
// jobs below it could not be cancelled (they kept changing): the lease
// holder's repair of children (RepairChildren) finishes them.
var ErrChildrenLeft = errors.New("some children were not cancelled")

// cancelsChildren reports whether update u of job, as read, takes a run back
// to the queue so that the children of its attempt must be cancelled: the
// next attempt runs from the start and submits its own children, and the
// old ones would run beside them for an attempt that is over. A workflow
// step is the exception: the jobs under a workflow belong to the whole
// workflow, and each is created once, so a step run again must find them
// as they are.
func cancelsChildren(job *Job, u JobUpdate) bool {
	return u.From.NodeOwned() && u.To == StatusRestart && job.Type != TypeWorkflow
}

// RecoverJobs takes jobs, as read, away from a node that is gone, each with
// RecoverUpdate(job, why), and cancels the unfinished descendants of every
// one whose attempt goes back to the queue, all in one transaction. With an
// actor (by.Who set) each recovered job and each cancelled descendant gets
// an event, as ev says; the engine's own recoveries record none. The
// results are in the order of jobs; a job that changed since it was read
// carries ErrConflict and is left alone. When some descendants could not be
// cancelled the results come with an error matching ErrChildrenLeft.
func RecoverJobs(ctx context.Context, store Transactor, jobs []*Job, why string, by Actor, ev VerbEvent) ([]JobUpdateResult, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	if err := validateOperator(by); err != nil {
		return nil, err
	}
	us := make([]JobUpdate, len(jobs))
	for i, j := range jobs {
		us[i] = RecoverUpdate(j, why)
	}
	var results []JobUpdateResult
	var left error
	err := store.Tx(ctx, func(tx TxStore) error {
		var err error
		results, left, err = updateWithFollowUps(ctx, tx, jobs, us, false, by, ev)
		return err
	})
	if err != nil {
		return nil, err
	}
	return results, left
}

// validateOperator refuses an operator whose events the store would
// refuse; the engine's own changes (no Who) record no event.
func validateOperator(by Actor) error {
	if by == (Actor{}) {
		return nil
	}
	return validateActor(by)
}

// OutcomeStore is what RecordOutcome and RecordOutcomes need of a store:
// the transitions, alone where no follow-up is due, else in a
// transaction.
type OutcomeStore interface {
	Transactor
	JobUpdate(ctx context.Context, u JobUpdate) (*Job, error)
	JobUpdateManyQuiet(ctx context.Context, us []JobUpdate) ([]JobUpdateResult, error)
}

// RecordOutcome applies u, the result of a run of job as read (see
// OutcomeUpdate), and its follow-ups: when the attempt goes back to the
// queue, its children are cancelled in the same transaction. A result with
// no follow-ups (the job ended) is the one guarded UPDATE it always was, so
// a job's end costs no transaction. Errors are JobUpdate's, or one matching
// ErrChildrenLeft with the job when it moved but some children did not.
func RecordOutcome(ctx context.Context, store OutcomeStore, job *Job, u JobUpdate) (*Job, error) {
	if !cancelsChildren(job, u) {
		return store.JobUpdate(ctx, u)
	}
	var out *Job
	var left error
	err := store.Tx(ctx, func(tx TxStore) error {
		j, err := tx.JobUpdate(ctx, u)
		if err != nil {
			return err
		}
		out = j
		left, err = cancelBelow(ctx, tx, []int64{j.ID}, Actor{}, VerbEvent{Verb: string(VerbCancel)})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, left
}

// RecordOutcomes is RecordOutcome for many runs at once (a node's batch of
// results), whose results carry no Job (JobUpdateManyQuiet). The results
// with no follow-ups go in one batch exactly as before, so a burst of jobs
// ending costs what it did; those that take an attempt back to the queue go
// in one transaction of their own together with their children's cancel.
// When that transaction fails after the batch was recorded, its results
// carry the error, and the call's error is nil: a caller tries those again
// alone, never the batch.
func RecordOutcomes(ctx context.Context, store OutcomeStore, jobs []*Job, us []JobUpdate) ([]JobUpdateResult, error) {
	var plain, restart []int
	for i, u := range us {
		if cancelsChildren(jobs[i], u) {
			restart = append(restart, i)
		} else {
			plain = append(plain, i)
		}
	}
	if len(restart) == 0 {
		return store.JobUpdateManyQuiet(ctx, us)
	}
	out := make([]JobUpdateResult, len(us))
	if len(plain) > 0 {
		res, err := store.JobUpdateManyQuiet(ctx, pick(us, plain))
		if err != nil {
			return nil, err
		}
		for k, i := range plain {
			out[i] = res[k]
		}
	}
	var res []JobUpdateResult
	var left error
	err := store.Tx(ctx, func(tx TxStore) error {
		var err error
		res, left, err = updateWithFollowUps(ctx, tx, pick(jobs, restart), pick(us, restart), true, Actor{}, VerbEvent{Verb: string(VerbCancel)})
		return err
	})
	for k, i := range restart {
		if err != nil {
			// The plain batch is recorded; these are not, and each
			// carries why, for the caller to record again on its own.
			out[i].Err = err
			continue
		}
		out[i] = res[k]
	}
	return out, left
}

// pick returns the elements of xs at the indexes idx.
func pick[T any](xs []T, idx []int) []T {
	out := make([]T, len(idx))
	for k, i := range idx {
		out[k] = xs[i]
	}
	return out
}

// updateWithFollowUps applies us (updates of jobs, as read) in tx, records
// each applied one's event for by, and cancels the descendants of every job
// whose attempt went back to the queue. It returns the results, and
// separately the descendants it could not cancel.
func updateWithFollowUps(ctx context.Context, tx TxStore, jobs []*Job, us []JobUpdate, quiet bool, by Actor, ev VerbEvent) (results []JobUpdateResult, left, err error) {
	if results, err = tx.JobUpdateMany(ctx, us); err != nil {
		return nil, nil, err
	}
	var parents []int64
	for i, r := range results {
		if r.Err != nil {
			continue
		}
		if err := recordTransition(ctx, tx, by, ev, us[i].From, r.Job); err != nil {
			return nil, nil, err
		}
		if cancelsChildren(jobs[i], us[i]) {
			parents = append(parents, us[i].ID)
		}
		if quiet {
			results[i].Job = nil
		}
	}
	left, err = cancelBelow(ctx, tx, parents, by, VerbEvent{Verb: ev.Verb})
	return results, left, err
}

// cancelBelow cancels, in tx, every unfinished job below the jobs roots:
// their children, the children of those (an ended child may still have
// running children of its own), and so on, a generation per read. With an
// actor each cancelled job gets an event noting the root it was cancelled
// with. A job that keeps changing under it is passed over, so one busy job
// does not shield the rest; those come back in left (matching
// ErrChildrenLeft) and the transaction keeps the others. err is the
// store's failure, which must end the transaction.
func cancelBelow(ctx context.Context, tx TxStore, roots []int64, by Actor, ev VerbEvent) (left, err error) {
	rootOf := make(map[int64]int64, len(roots)) // each job seen, to the root it is below
	for _, id := range roots {
		rootOf[id] = id
	}
	var stuck []error
	for gen := roots; len(gen) > 0; {
		children, err := tx.JobList(ctx, JobListParams{ParentIDs: gen})
		if err != nil {
			return nil, fmt.Errorf("listing the children of %d jobs: %w", len(gen), err)
		}
		gen = gen[:0:0]
		for _, c := range children {
			if _, seen := rootOf[c.ID]; seen {
				continue // a parent cycle
			}
			root := rootOf[*c.ParentID]
			rootOf[c.ID] = root
			gen = append(gen, c.ID)
			if !needsCancel(c) {
				continue
			}
			note := VerbEvent{Verb: ev.Verb, Note: fmt.Sprintf("with job %d", root)}
			if err := cancelInTx(ctx, tx, c, by, note); errors.Is(err, ErrConflict) {
				stuck = append(stuck, fmt.Errorf("job %d: %w", c.ID, err))
			} else if err != nil {
				return nil, err
			}
		}
	}
	if len(stuck) > 0 {
		return fmt.Errorf("%w: %w", ErrChildrenLeft, errors.Join(stuck...)), nil
	}
	return nil, nil
}

// needsCancel reports whether a job below a cancelled one is still to be
// cancelled: one that ended, or is being cancelled, needs nothing more.
func needsCancel(j *Job) bool {
	return !j.Status.Terminal() && j.Status != StatusCancelling
}

// cancelInTx cancels job j, as read, in tx, reading it again when it
// changed in between; ErrConflict when it kept changing.
func cancelInTx(ctx context.Context, tx TxStore, j *Job, by Actor, ev VerbEvent) error {
	for range verbAttempts {
		if !needsCancel(j) {
			return nil
		}
		u, err := CancelUpdate(j)
		if err != nil {
			return nil // nothing to cancel now
		}
		out, err := tx.JobUpdate(ctx, u)
		if err == nil {
			return recordTransition(ctx, tx, by, ev, j.Status, out)
		}
		if !errors.Is(err, ErrConflict) {
			return err
		}
		if j, err = tx.JobGet(ctx, j.ID); errors.Is(err, ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return fmt.Errorf("it kept changing while it was being cancelled: %w", ErrConflict)
}

// RemoveNodeParams name a node to remove and what becomes of its jobs.
type RemoveNodeParams struct {
	Name string
	// StaleAfter is how long a node that is not OFFLINE must have been
	// silent to count as gone (NodeGone).
	StaleAfter time.Duration
	// RecoverJobs takes the jobs the node still holds away from it first
	// (see RecoverJobs), with Why as their message: for a node that has
	// surely stopped its runs. Without it a node holding jobs stays.
	RecoverJobs bool
	Why         string
	// Event is the node's removal event (Verb, Node, Detail); the jobs'
	// events read as Verb and Why.
	Event EventAppendParams
}

// NodeRemover is what RemoveNode needs of a store.
type NodeRemover interface {
	Transactor
	Now(ctx context.Context) (time.Time, error)
	NodeGet(ctx context.Context, name string) (*Node, error)
}

// RemoveNode removes a gone node's row (NodeGone: a live node is an error
// matching ErrNodeOnline) and records its event for by, recovering its
// jobs first when p says so, each with the descendants of its attempt and
// an event, all in one transaction. A node that still holds jobs (its
// name and a status of RecoverableStatuses) stays, with an error matching
// ErrConflict: the dispatcher recovers a gone node's jobs through its row,
// so the node never goes while a job still names it, nor does a job go
// back to the queue while the children of its lost attempt run on. The
// row is removed only as it was judged (Store.NodeRemove's guard), so a
// node that spoke or registered since is judged again. It returns the jobs
// it recovered, as they were before; their errors are RecoverJobs'.
func RemoveNode(ctx context.Context, store NodeRemover, p RemoveNodeParams, by Actor) ([]*Job, error) {
	if err := validateActor(by); err != nil {
		return nil, err
	}
	var recovered []*Job
	var left error
	change := func(n *Node) func(tx TxStore) error {
		return func(tx TxStore) error {
			recovered, left = nil, nil
			if p.RecoverJobs {
				jobs, l, err := recoverNodeJobs(ctx, tx, p, by)
				if err != nil {
					return err
				}
				recovered, left = jobs, l
			}
			held, err := tx.JobList(ctx, JobListParams{Node: p.Name, Statuses: RecoverableStatuses, Brief: true})
			if err != nil {
				return err
			}
			if len(held) > 0 {
				return &nodeHoldsJobsError{node: p.Name, jobs: len(held)}
			}
			if err := tx.NodeRemove(ctx, NodeRemoveParams{Name: n.Name, Process: n.Process, LastSeen: n.LastSeen}); err != nil {
				return err
			}
			e := p.Event
			e.Node = p.Name
			return by.Record(ctx, tx, e)
		}
	}
	// A node that spoke since it was read, or a job that changed between
	// the read and its recovery (a late result of a run the node no longer
	// has), is read again, a few times.
	var err error
	for range verbAttempts {
		var n *Node
		if n, err = store.NodeGet(ctx, p.Name); err != nil {
			return nil, err
		}
		var now time.Time
		if now, err = store.Now(ctx); err != nil {
			return nil, err
		}
		if !NodeGone(n, now, p.StaleAfter) {
			return nil, NodeLiveError(n, now, p.StaleAfter)
		}
		if err = store.Tx(ctx, change(n)); !errors.Is(err, ErrConflict) || errors.As(err, new(*nodeHoldsJobsError)) && !p.RecoverJobs {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return recovered, left
}

// nodeHoldsJobsError refuses to remove a node that still holds jobs. It
// matches ErrConflict.
type nodeHoldsJobsError struct {
	node string
	jobs int
}

func (e *nodeHoldsJobsError) Error() string {
	return fmt.Sprintf("node %s still holds %d jobs; they return to the queue once the dispatcher recovers them from the node: %v",
		e.node, e.jobs, ErrConflict)
}

// Is lets errors.Is(err, ErrConflict) match.
func (e *nodeHoldsJobsError) Is(target error) bool { return target == ErrConflict }

// recoverNodeJobs recovers the jobs p's node holds, each with the
// descendants of its attempt and an event, in tx.
func recoverNodeJobs(ctx context.Context, tx TxStore, p RemoveNodeParams, by Actor) (jobs []*Job, left, err error) {
	jobs, err = tx.JobList(ctx, JobListParams{Node: p.Name, Statuses: RecoverableStatuses})
	if err != nil {
		return nil, nil, err
	}
	us := make([]JobUpdate, len(jobs))
	for i, j := range jobs {
		us[i] = RecoverUpdate(j, p.Why)
	}
	results, left, err := updateWithFollowUps(ctx, tx, jobs, us, true, by, VerbEvent{Verb: p.Event.Verb, Note: p.Why})
	if err != nil {
		return nil, nil, err
	}
	for i, r := range results {
		if r.Err != nil {
			// Read in this transaction, a job changes under it only
			// when a late run races the removal: try again later.
			return nil, nil, fmt.Errorf("recovering job %d from node %s: %w", jobs[i].ID, p.Name, r.Err)
		}
	}
	return jobs, left, nil
}

// RepairStore is what RepairChildren needs of a store.
type RepairStore interface {
	Transactor
	JobList(ctx context.Context, p JobListParams) ([]*Job, error)
}

// RepairChildrenParams name the range of job ids one repair looks at (see
// RepairChildren), both ends included.
type RepairChildrenParams struct {
	MinID, MaxID int64
}

// repairStatuses are those of a job below a cancelled parent, or of a lost
// attempt, that the operations would have cancelled.
var repairStatuses = []Status{StatusInstantiated, StatusQueued, StatusRestart,
	StatusRunning, StatusPaused, StatusWaiting}

// RepairChildren finds, among the jobs with ids in p's range, the children
// that the operations would have cancelled but that are still active, and
// cancels each with its descendants: those whose parent is cancelled or
// being cancelled (a cancel's cascade cut short), and those created during
// an attempt of their parent that went back to the queue; a workflow's
// jobs excepted, as in RecoverJobs. Such jobs are what a store written by an
// older jobctl, or a cascade that left jobs that kept changing
// (ErrChildrenLeft), may hold. A child an operator requeued since is
// theirs and left alone. Each child is judged again in the transaction
// that cancels it, so a repair run twice, or beside the operations,
// changes nothing more. It returns how many children it cancelled.
func RepairChildren(ctx context.Context, store RepairStore, p RepairChildrenParams) (int, error) {
	jobs, err := store.JobList(ctx, JobListParams{MinID: p.MinID, MaxID: p.MaxID, Statuses: repairStatuses})
	if err != nil {
		return 0, err
	}
	cancelled := 0
	var errs []error
	for _, j := range jobs {
		if j.ParentID == nil || requeuedByOperator(j) {
			continue
		}
		done, err := repairChild(ctx, store, j.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("job %d: %w", j.ID, err))
		}
		if done {
			cancelled++
		}
	}
	return cancelled, errors.Join(errs...)
}

// requeuedByOperator reports whether j was requeued at some time: its
// attempts were rebased, or it waits in the queue with the requeue's
// message.
func requeuedByOperator(j *Job) bool {
	return j.AttemptBase > 0 || j.Message == MessageRequeued
}

// repairChild cancels child id and its descendants, in one transaction,
// when it is still a child the operations would have cancelled.
func repairChild(ctx context.Context, store Transactor, id int64) (cancelled bool, err error) {
	err = store.Tx(ctx, func(tx TxStore) error {
		cancelled = false
		child, err := tx.JobGet(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if !needsCancel(child) || child.ParentID == nil || requeuedByOperator(child) {
			return nil
		}
		stale, err := orphaned(ctx, tx, child)
		if err != nil || !stale {
			return err
		}
		if err := cancelInTx(ctx, tx, child, Actor{}, VerbEvent{}); err != nil {
			return err
		}
		cancelled = true
		left, err := cancelBelow(ctx, tx, []int64{child.ID}, Actor{}, VerbEvent{Verb: string(VerbCancel)})
		if err == nil && left != nil {
			err = left // judged again at the next repair
		}
		return err
	})
	if err != nil {
		return false, err
	}
	return cancelled, nil
}

// orphaned reports whether job j, read in tx, is below a job the
// operations would have cancelled together with everything below it: a
// parent cancelled or being cancelled, or a child created during an
// attempt of its parent that went back to the queue; either may be j
// itself or any of its ancestors, since a cascade passes through a job
// that has ended to the jobs below it.
func orphaned(ctx context.Context, tx TxStore, j *Job) (bool, error) {
	seen := map[int64]bool{}
	for x := j; x.ParentID != nil && !seen[x.ID]; {
		seen[x.ID] = true
		parent, err := tx.JobGet(ctx, *x.ParentID)
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if lost, err := lostBy(ctx, tx, x, parent); err != nil || lost {
			return lost, err
		}
		x = parent
	}
	return false, nil
}

// lostBy reports whether child belongs to parent, both read in tx, as a
// job the operations would have cancelled: the parent is cancelled (or
// being cancelled) since the child was created, or the child was created
// during an attempt of the parent that went back to the queue.
func lostBy(ctx context.Context, tx TxStore, child, parent *Job) (bool, error) {
	if parent.Type == TypeWorkflow {
		// A workflow's jobs are the whole workflow's: only an operator's
		// cancel, one transaction, takes them, never a step's end.
		return false, nil
	}
	if parent.Status == StatusCancelling || parent.Status == StatusCancelled {
		return parent.FinishedAt == nil || !child.CreatedAt.After(*parent.FinishedAt), nil
	}
	attempts, err := tx.JobAttemptList(ctx, parent.ID)
	if err != nil {
		return false, err
	}
	for _, a := range attempts {
		if a.Ending == StatusRestart && during(child.CreatedAt, a) {
			return true, nil
		}
	}
	return false, nil
}

// during reports whether t falls within attempt a, both ends included.
func during(t time.Time, a Attempt) bool {
	if a.StartedAt != nil && t.Before(*a.StartedAt) {
		return false
	}
	return a.EndedAt != nil && !t.After(*a.EndedAt)
}

// DrainStop stops job id on node at a drain's deadline, so that it goes
// back to the queue once its node has stopped it (DrainRequeue): it is
// cancelled (CancelUpdate) with message, and the unfinished descendants
// of its attempt with it, as for any attempt that goes back to the queue
// (a workflow's excepted), all in one transaction with their events for
// by. It reads the job in that transaction, and again when it changed;
// stopped is false when there is nothing to stop: the job left the node,
// ended, or is being cancelled already.
func DrainStop(ctx context.Context, store Transactor, id int64, node, message string, by Actor, ev VerbEvent) (stopped bool, left, err error) {
	if err := validateOperator(by); err != nil {
		return false, nil, err
	}
	for range verbAttempts {
		err = store.Tx(ctx, func(tx TxStore) error {
			stopped, left = false, nil
			j, err := tx.JobGet(ctx, id)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if j.Node != node || !needsCancel(j) {
				return nil
			}
			u, err := CancelUpdate(j)
			if err != nil {
				return nil // nothing to stop, e.g. it went back to the queue meanwhile
			}
			u.Message = Ptr(message)
			out, err := tx.JobUpdate(ctx, u)
			if err != nil {
				return err
			}
			if err := recordTransition(ctx, tx, by, ev, j.Status, out); err != nil {
				return err
			}
			stopped = true
			if !onNode(j) || j.Type == TypeWorkflow {
				return nil
			}
			left, err = cancelBelow(ctx, tx, []int64{j.ID}, by, VerbEvent{Verb: ev.Verb})
			return err
		})
		if !errors.Is(err, ErrConflict) {
			break
		}
	}
	if err != nil {
		return false, nil, fmt.Errorf("stopping job %d on node %s: %w", id, node, err)
	}
	return stopped, left, nil
}

// DrainRequeue puts job id, stopped by DrainStop, back in the queue once
// its node has ended it CANCELLED, with message and its event for by.
// pending is true while the node is still stopping it, or when it changed
// under the requeue (judged again at the next call); false and no error
// when it is done or no longer the drain's (requeued or deleted by
// someone else, or gone).
func DrainRequeue(ctx context.Context, store Transactor, id int64, message string, by Actor, ev VerbEvent) (requeued, pending bool, err error) {
	if err := validateOperator(by); err != nil {
		return false, false, err
	}
	err = store.Tx(ctx, func(tx TxStore) error {
		requeued, pending = false, false
		j, err := tx.JobGet(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case j.Status == StatusCancelling:
			pending = true // the node is still stopping it
			return nil
		case j.Status != StatusCancelled:
			return nil
		}
		u, err := RequeueUpdate(j)
		if err != nil {
			return nil
		}
		u.Message = Ptr(message)
		out, err := tx.JobUpdate(ctx, u)
		if err != nil {
			return err
		}
		requeued = true
		return recordTransition(ctx, tx, by, ev, j.Status, out)
	})
	if errors.Is(err, ErrConflict) {
		return false, true, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("requeueing job %d: %w", id, err)
	}
	return requeued, pending, nil
}
