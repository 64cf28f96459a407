package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Workflow is a workflow as the store holds it: its root step job, the
// spec, and the jobs made for it so far.
type Workflow struct {
	Root *engine.Job
	Spec *Spec
	// Jobs holds operation i's job at index i-1, nil while not created.
	Jobs []*engine.Job
	// Steps holds step i's job at index i (the root at 0), nil while not
	// created.
	Steps []*engine.Job
	// Others are children of the root that are neither, such as a job
	// submitted by hand with --parent.
	Others []*engine.Job
}

// IsRoot reports whether j is a workflow's root step job.
func IsRoot(j *engine.Job) bool {
	return j.Type == engine.TypeWorkflow && j.Operation == OperationStart && j.ParentID == nil
}

// notAWorkflow is the error for an id that names no workflow.
func notAWorkflow(id int64) error {
	return &engine.NotFoundError{What: "workflow", ID: strconv.FormatInt(id, 10)}
}

// Reader reads a workflow's jobs, in a transaction or not; every
// engine.TxStore is one.
type Reader interface {
	JobGet(ctx context.Context, id int64) (*engine.Job, error)
	JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error)
}

// Get reads workflow id: its root job and every job made for it. An id
// that names no workflow's root is a *engine.NotFoundError.
func Get(ctx context.Context, store Reader, id int64) (*Workflow, error) {
	root, err := store.JobGet(ctx, id)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return nil, notAWorkflow(id)
		}
		return nil, err
	}
	if !IsRoot(root) {
		return nil, fmt.Errorf("job %d is a %s job, not a workflow (%w)", id, root.Type, notAWorkflow(id))
	}
	return Load(ctx, store, root)
}

// Load reads the workflow job j belongs to: j is its root or one of its
// steps.
func Load(ctx context.Context, store Reader, j *engine.Job) (*Workflow, error) {
	root := j
	if !IsRoot(j) {
		var p stepPayload
		if j.Type != engine.TypeWorkflow || json.Unmarshal(j.Payload, &p) != nil || p.Workflow <= 0 || p.Step <= 0 {
			return nil, fmt.Errorf("%w: job %d is no step of a workflow: its payload names none", ErrBroken, j.ID)
		}
		var err error
		if root, err = store.JobGet(ctx, p.Workflow); err != nil {
			return nil, fmt.Errorf("workflow %d of step job %d: %w", p.Workflow, j.ID, err)
		}
	}
	var rp rootPayload
	if err := json.Unmarshal(root.Payload, &rp); err != nil || rp.Spec == nil {
		return nil, fmt.Errorf("%w: workflow %d: its root job's payload holds no workflow", ErrBroken, root.ID)
	}
	n := len(rp.Spec.Operations)
	w := &Workflow{Root: root, Spec: rp.Spec, Jobs: make([]*engine.Job, n), Steps: make([]*engine.Job, n+1)}
	w.Steps[0] = root
	children, err := store.JobList(ctx, engine.JobListParams{ParentID: engine.Ptr(root.ID)})
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, op := range rp.Spec.Operations {
		index[op.Name] = i
	}
	for _, c := range children { // ordered by id: the first of a name wins
		if c.Type == engine.TypeWorkflow && c.Operation == OperationNext {
			var p stepPayload
			if json.Unmarshal(c.Payload, &p) == nil && p.Workflow == root.ID && p.Step > 0 && p.Step <= n && w.Steps[p.Step] == nil {
				w.Steps[p.Step] = c
				continue
			}
		}
		if i, ok := index[c.Operation]; ok && c.Type != engine.TypeWorkflow && c.Key == engine.WorkflowKey(root.ID) && w.Jobs[i] == nil {
			w.Jobs[i] = c
			continue
		}
		w.Others = append(w.Others, c)
	}
	return w, nil
}

// stepOf is the step job j runs: 0 for the root.
func (w *Workflow) stepOf(j *engine.Job) int {
	if j.ID == w.Root.ID {
		return 0
	}
	var p stepPayload
	_ = json.Unmarshal(j.Payload, &p) // Load checked it
	return p.Step
}

// continuedPast names each operation that did not succeed and whose
// on_failure let the workflow go on.
func (w *Workflow) continuedPast() []string {
	var out []string
	for i, op := range w.Spec.Operations {
		if j := w.Jobs[i]; j != nil && j.Status.Terminal() && !j.Status.Succeeded() && !op.Stops() {
			out = append(out, fmt.Sprintf("operation %d '%s' (%s)", i+1, op.Name, j.Status))
		}
	}
	return out
}

// all is every job of the workflow, oldest first.
func (w *Workflow) all() []*engine.Job {
	var out []*engine.Job
	for _, group := range [][]*engine.Job{w.Steps, w.Jobs, w.Others} {
		for _, j := range group {
			if j != nil {
				out = append(out, j)
			}
		}
	}
	slices.SortFunc(out, func(a, b *engine.Job) int { return int(a.ID - b.ID) })
	return out
}

// Unfinished is every job of the workflow that has not ended, oldest first.
func (w *Workflow) Unfinished() []*engine.Job {
	return slices.DeleteFunc(w.all(), func(j *engine.Job) bool { return j.Status.Terminal() })
}

// State is a workflow's state, derived from its jobs.
type State struct {
	// Status is RUNNING while any job of the workflow has not ended;
	// then FAILED when a step stopped it (an operation with on_failure
	// stop did not succeed) or a step itself failed; CANCELLED when it
	// was cancelled; FINISHED when the last step finished, or WARNING
	// when an operation with on_failure continue did not succeed.
	Status engine.Status
	// Reason says why, in one line.
	Reason string
	// Current is the operation running or next to run (from 1), 0 once
	// the workflow has ended.
	Current int
	// Done counts the operations whose jobs have ended.
	Done int
	// FinishedAt is when the last job ended, once the workflow has.
	FinishedAt *time.Time
}

// Derive works out the workflow's state from its jobs.
func (w *Workflow) Derive() State {
	var st State
	for i, j := range w.Jobs {
		if j != nil && j.Status.Terminal() {
			st.Done++
		}
		if j != nil && !j.Status.Terminal() && st.Current == 0 {
			st.Current = i + 1
		}
	}
	if pending := w.Unfinished(); len(pending) > 0 {
		st.Status = engine.StatusRunning
		// An operation not ended is what the workflow waits for; else
		// the latest step.
		j := pending[len(pending)-1]
		for _, p := range pending {
			if slices.Contains(w.Jobs, p) {
				j = p
				break
			}
		}
		switch i := slices.Index(w.Jobs, j); {
		case i >= 0:
			st.Reason = fmt.Sprintf("operation %d '%s' is %s (job %d)", i+1, w.Spec.Operations[i].Name, j.Status, j.ID)
		case j.Status == engine.StatusCancelling:
			st.Reason = fmt.Sprintf("job %d is being cancelled", j.ID)
		default:
			if st.Current == 0 {
				st.Current = min(w.stepOf(j)+1, len(w.Jobs))
			}
			st.Reason = fmt.Sprintf("step %d is %s (job %d)", w.stepOf(j), j.Status, j.ID)
		}
		return st
	}
	st.Current = 0
	for _, j := range w.all() {
		if j.FinishedAt != nil && (st.FinishedAt == nil || j.FinishedAt.After(*st.FinishedAt)) {
			st.FinishedAt = j.FinishedAt
		}
	}
	for i, s := range w.Steps {
		if s != nil && s.Status == engine.StatusFailed {
			st.Status, st.Reason = engine.StatusFailed, s.Message
			if st.Reason == "" {
				st.Reason = fmt.Sprintf("step %d (job %d) failed", i, s.ID)
			}
			return st
		}
	}
	for i, s := range w.Steps {
		switch {
		case s == nil:
		case s.Status == engine.StatusCancelled:
			st.Status, st.Reason = engine.StatusCancelled, fmt.Sprintf("cancelled at step %d (job %d)", i, s.ID)
			return st
		case s.Status == engine.StatusDeleted:
			st.Status, st.Reason = engine.StatusFailed, fmt.Sprintf("step %d (job %d) was deleted", i, s.ID)
			return st
		}
	}
	last := w.Steps[len(w.Steps)-1]
	if last == nil || !last.Status.Succeeded() {
		st.Status, st.Reason = engine.StatusFailed, "the workflow ended before its last step ran"
		return st
	}
	if failed := w.continuedPast(); len(failed) > 0 {
		st.Status, st.Reason = engine.StatusWarning, "went on past "+joinAnd(failed)
		return st
	}
	st.Status, st.Reason = engine.StatusFinished, fmt.Sprintf("all %d operations succeeded", len(w.Jobs))
	return st
}

func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	out := ""
	for i, s := range items {
		switch {
		case i == 0:
		case i == len(items)-1:
			out += " and "
		default:
			out += ", "
		}
		out += s
	}
	return out
}

// List reads the workflows, newest first, at most limit of them (0: all).
func List(ctx context.Context, store Reader, limit int) ([]*Workflow, error) {
	// A workflow is a root job of type workflow; its steps share the type
	// but have the root as their parent.
	jobs, err := store.JobList(ctx, engine.JobListParams{Types: []string{engine.TypeWorkflow}, Roots: true, Limit: limit})
	if err != nil {
		return nil, err
	}
	var out []*Workflow
	for i := len(jobs) - 1; i >= 0 && (limit == 0 || len(out) < limit); i-- {
		if !IsRoot(jobs[i]) {
			continue
		}
		w, err := Load(ctx, store, jobs[i])
		if err != nil {
			continue // a hand-made job of type workflow that holds no spec
		}
		out = append(out, w)
	}
	return out, nil
}
