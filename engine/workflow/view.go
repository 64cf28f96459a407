package workflow

import (
	"time"

	"github.com/jobctl/jobctl/engine"
)

// View is a workflow as 'jobctl workflow show -o json' prints it; field
// names are a stable contract.
type View struct {
	ID         int64         `json:"id"`
	Name       string        `json:"name"`
	State      engine.Status `json:"state"`
	Reason     string        `json:"reason"`
	Current    int           `json:"current"` // the operation running or next, from 1; 0 once ended
	Done       int           `json:"done"`    // operations ended
	Total      int           `json:"total"`
	Creator    string        `json:"creator"`
	CreatedAt  time.Time     `json:"created_at"`
	FinishedAt *time.Time    `json:"finished_at"`
	Operations []OpView      `json:"operations"`
	Steps      []StepView    `json:"steps"`
	// Others are the root's children that are neither operations nor
	// steps (submitted with --parent), by id.
	Others []int64 `json:"others,omitempty"`
}

// OpView is one operation and its job; JobID is null and Status empty
// while the job is not created.
type OpView struct {
	Index      int           `json:"index"` // from 1
	Name       string        `json:"name"`
	Type       string        `json:"type"`
	OnFailure  string        `json:"on_failure"`
	JobID      *int64        `json:"job_id"`
	Status     engine.Status `json:"status"`
	Node       string        `json:"node"`
	Attempt    int           `json:"attempt"`
	ExitCode   *int          `json:"exit_code"`
	Message    string        `json:"message"`
	CreatedAt  *time.Time    `json:"created_at"`
	StartedAt  *time.Time    `json:"started_at"`
	FinishedAt *time.Time    `json:"finished_at"`
}

// StepView is one step job; step 0 is the root.
type StepView struct {
	Step       int           `json:"step"`
	JobID      int64         `json:"job_id"`
	Status     engine.Status `json:"status"`
	Node       string        `json:"node"`
	Message    string        `json:"message"`
	CreatedAt  time.Time     `json:"created_at"`
	StartedAt  *time.Time    `json:"started_at"`
	FinishedAt *time.Time    `json:"finished_at"`
}

// View builds the workflow's view with its derived state.
func (w *Workflow) View() View {
	st := w.Derive()
	v := View{
		ID: w.Root.ID, Name: w.Spec.Name, State: st.Status, Reason: st.Reason, Current: st.Current,
		Done: st.Done, Total: len(w.Spec.Operations), Creator: w.Root.Creator, CreatedAt: w.Root.CreatedAt,
		FinishedAt: st.FinishedAt, Operations: []OpView{}, Steps: []StepView{},
	}
	for i, op := range w.Spec.Operations {
		ov := OpView{Index: i + 1, Name: op.Name, Type: op.Type, OnFailure: op.OnFailure}
		if j := w.Jobs[i]; j != nil {
			ov.JobID, ov.Status, ov.Node, ov.Attempt, ov.ExitCode, ov.Message = engine.Ptr(j.ID), j.Status, j.Node, j.Attempt, j.ExitCode, j.Message
			ov.CreatedAt, ov.StartedAt, ov.FinishedAt = engine.Ptr(j.CreatedAt), j.StartedAt, j.FinishedAt
		}
		v.Operations = append(v.Operations, ov)
	}
	for i, s := range w.Steps {
		if s != nil {
			v.Steps = append(v.Steps, StepView{Step: i, JobID: s.ID, Status: s.Status, Node: s.Node, Message: s.Message,
				CreatedAt: s.CreatedAt, StartedAt: s.StartedAt, FinishedAt: s.FinishedAt})
		}
	}
	for _, o := range w.Others {
		v.Others = append(v.Others, o.ID)
	}
	return v
}
