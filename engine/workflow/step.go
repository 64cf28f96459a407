package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Operations of the workflow's own jobs.
const (
	OperationStart = "start" // the root step: the workflow itself
	OperationNext  = "next"  // a later step
)

// StepTimeout bounds one step: a few statements in one transaction.
const StepTimeout = 5 * time.Minute

// A step that fails for a reason that may pass (the database did not
// answer) is tried again, StepAttempts times in all, StepBackoff apart
// at first, doubling: about 15s in all. A failure that cannot pass ends
// it at once (Final).
const (
	StepAttempts = 5
	StepBackoff  = time.Second
)

// rootPayload is the root job's payload: the spec every step follows.
type rootPayload struct {
	Spec *Spec `json:"spec"`
}

// stepPayload is a later step's payload: whose step it is and which.
type stepPayload struct {
	Workflow int64 `json:"workflow"`
	Step     int   `json:"step"`
}

// Start creates the workflow's root step job, whose id is the workflow's
// id; the first operation is created when a node runs it. creator is
// recorded on every job of the workflow.
func Start(ctx context.Context, store engine.TxStore, spec *Spec, creator string) (*engine.Job, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(rootPayload{Spec: spec})
	if err != nil {
		return nil, err
	}
	return store.JobInsert(ctx, engine.JobInsertParams{
		Type: engine.TypeWorkflow, Operation: OperationStart, Payload: payload, Status: engine.StatusQueued,
		Priority: spec.Priority, MaxAttempts: StepAttempts, Backoff: StepBackoff, Timeout: StepTimeout, Creator: creator,
	})
}

// operationParams is the job of one operation of workflow root. nodes
// give the defaults of its type's service, as 'jobctl submit' takes them.
func operationParams(op Operation, root int64, nodes []*engine.Node) engine.JobInsertParams {
	p := engine.JobInsertParams{
		Type: op.Type, Operation: op.Name, Args: op.Args, Payload: op.Payload, Priority: op.Priority,
		Status: engine.StatusQueued, Key: engine.WorkflowKey(root), ParentID: engine.Ptr(root),
		MaxAttempts: max(op.MaxAttempts, 1),
	}
	var timeout *time.Duration // an operation without one leaves it to the service
	if op.Timeout > 0 {
		timeout = engine.Ptr(time.Duration(op.Timeout))
	}
	svc, _ := engine.ServiceDefaults(nodes, op.Type)
	p.Load, p.Timeout, p.MemoryLimit = svc.Settings(op.Load, timeout, op.Memory)
	return p
}

// StepResult is what one step did.
type StepResult struct {
	Workflow int64
	Step     int
	// Created are the ids of the operation and step jobs the step
	// created; none when the workflow ends here or a run of this step
	// created them before.
	Created []int64
	// Log lines say what the step judged and did.
	Log []string
	// Warning, when set, makes the step end WARNING: an operation failed
	// and the workflow went on past it.
	Warning string
}

// StopError is a step ending the workflow: the operation it judged did
// not succeed and says on_failure: stop.
type StopError struct {
	Index  int // from 1
	Name   string
	Status engine.Status
}

func (e *StopError) Error() string {
	return fmt.Sprintf("operation %d '%s' ended %s; the workflow stops", e.Index, e.Name, e.Status)
}

// ErrMovedOn is a step run whose job is no longer this attempt running:
// it was cancelled or restarted elsewhere, and must change nothing.
var ErrMovedOn = errors.New("the step job has moved on")

// ErrBroken is a workflow whose jobs are not as its steps left them: a
// payload that names no workflow, an operation's job that is gone.
var ErrBroken = errors.New("broken workflow")

// Final reports whether a step that failed with err would fail the same
// way again: the workflow stopped, is broken, the step moved on, or a job
// it would create is invalid. Any other error, such as the database not
// answering, may pass, and the step is worth another attempt: running it
// again changes nothing it did before.
func Final(err error) bool {
	var stop *StopError
	return errors.As(err, &stop) || errors.Is(err, ErrBroken) || errors.Is(err, ErrMovedOn) ||
		errors.Is(err, engine.ErrInvalid) || errors.Is(err, engine.ErrNotFound)
}

// StepStore is what RunStep needs: the node rows that give service
// defaults and the transaction the step runs in.
type StepStore interface {
	engine.Transactor
	NodeList(ctx context.Context) ([]*engine.Node, error)
}

// RunStep runs step job id, attempt attempt, against store, in one
// transaction: it judges the operation before it and, unless that ends the
// workflow, creates the next operation's job and the next step's job.
// Running it again changes nothing more. attempt 0 skips the check that
// the job is that attempt running (for tests and tools).
func RunStep(ctx context.Context, store StepStore, id int64, attempt int) (StepResult, error) {
	// Service defaults come from the node rows, which are no part of
	// the transaction; they only fill in defaults.
	nodes, err := store.NodeList(ctx)
	if err != nil {
		return StepResult{}, err
	}
	var res StepResult
	err = store.Tx(ctx, func(tx engine.TxStore) error {
		res = StepResult{}
		return runStep(ctx, tx, nodes, id, attempt, &res)
	})
	return res, err
}

func runStep(ctx context.Context, tx engine.TxStore, nodes []*engine.Node, id int64, attempt int, res *StepResult) error {
	job, err := tx.JobGet(ctx, id)
	if err != nil {
		return err
	}
	if attempt > 0 && (job.Status != engine.StatusRunning || job.Attempt != attempt) {
		return fmt.Errorf("%w: job %d is %s at attempt %d", ErrMovedOn, id, job.Status, job.Attempt)
	}
	w, err := Load(ctx, tx, job)
	if err != nil {
		return err
	}
	step := w.stepOf(job)
	res.Workflow, res.Step = w.Root.ID, step
	ops := w.Spec.Operations
	if step > 0 {
		op := ops[step-1]
		j := w.Jobs[step-1]
		switch {
		case j == nil:
			return fmt.Errorf("%w: operation %d '%s' has no job; it was removed", ErrBroken, step, op.Name)
		case !j.Status.Terminal():
			return fmt.Errorf("operation %d '%s' (job %d) has not ended: it is %s", step, op.Name, j.ID, j.Status)
		case j.Status.Succeeded():
			res.Log = append(res.Log, fmt.Sprintf("operation %d '%s' (job %d) ended %s", step, op.Name, j.ID, j.Status))
		case op.Stops():
			return &StopError{Index: step, Name: op.Name, Status: j.Status}
		default:
			res.Log = append(res.Log, fmt.Sprintf("operation %d '%s' (job %d) ended %s; on_failure is continue, so the workflow goes on",
				step, op.Name, j.ID, j.Status))
		}
	}
	if step == len(ops) {
		if failed := w.continuedPast(); len(failed) > 0 {
			res.Warning = "the workflow went on past " + joinAnd(failed)
		}
		res.Log = append(res.Log, fmt.Sprintf("workflow %d '%s': all %d operations judged", w.Root.ID, w.Spec.Name, len(ops)))
		return nil
	}
	if j := w.Jobs[step]; j != nil {
		res.Log = append(res.Log, fmt.Sprintf("operation %d '%s' is job %d already", step+1, ops[step].Name, j.ID))
		return nil
	}
	op, err := tx.JobInsert(ctx, ofRoot(operationParams(ops[step], w.Root.ID, nodes), w.Root))
	if err != nil {
		return fmt.Errorf("creating operation %d '%s': %w", step+1, ops[step].Name, err)
	}
	payload, err := json.Marshal(stepPayload{Workflow: w.Root.ID, Step: step + 1})
	if err != nil {
		return err
	}
	next, err := tx.JobInsert(ctx, ofRoot(engine.JobInsertParams{
		Type: engine.TypeWorkflow, Operation: OperationNext, Payload: payload, Status: engine.StatusQueued,
		Key: engine.WorkflowKey(w.Root.ID), ParentID: engine.Ptr(w.Root.ID), MaxAttempts: StepAttempts, Backoff: StepBackoff, Timeout: StepTimeout,
	}, w.Root))
	if err != nil {
		return fmt.Errorf("creating step %d: %w", step+1, err)
	}
	res.Created = []int64{op.ID, next.ID}
	res.Log = append(res.Log, fmt.Sprintf("created operation %d '%s' as job %d, and step %d as job %d",
		step+1, ops[step].Name, op.ID, step+1, next.ID))
	return nil
}

// ofRoot gives a job of the workflow whose root step is root the root's
// creator, and its priority unless the job has its own.
func ofRoot(p engine.JobInsertParams, root *engine.Job) engine.JobInsertParams {
	p.Creator = root.Creator
	if p.Priority == 0 {
		p.Priority = root.Priority
	}
	return p
}
