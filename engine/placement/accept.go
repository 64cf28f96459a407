package placement

import "fmt"

// Decline reasons a node answers an offer with (the `reason` of a 503).
const (
	ReasonBusy              = "busy"               // would exceed max load or max jobs now
	ReasonOversizedDeclined = "oversized-declined" // job load above max load, accept-exceeding off
)

// AcceptInput is what a node knows when a job is offered to it.
type AcceptInput struct {
	MaxLoad         float64
	Load            float64 // the node's load-holding jobs now, without the offered one
	Running         int     // the node's load-holding jobs now
	MaxJobs         int     // 0 means no limit
	JobLoad         float64
	AcceptExceeding bool // take a job whose load alone exceeds MaxLoad
}

// Decision is a node's answer to an offer.
type Decision struct {
	Accept bool
	// Reason is ReasonBusy or ReasonOversizedDeclined when declined.
	Reason string
	// Detail is the operator-readable sentence behind Reason.
	Detail string
	// Warning is set when an oversized job is accepted: it will overload
	// the node while it runs.
	Warning string
}

// Accept decides whether a node takes an offered job now (the original
// isReadyToAccept). A job whose load alone exceeds the node's max
// load is declined unless AcceptExceeding; when accepted it runs alone, so
// the node must be idle, and it carries a warning. Any other job is accepted
// when it fits beside the running ones and the node is under MaxJobs.
//
// The idle rule for oversized jobs matches Filter, which offers them only to
// idle nodes; checking it here too keeps two racing dispatches from stacking
// work next to an oversized job.
func Accept(in AcceptInput) Decision {
	oversized := exceedsMaxLoad(in.JobLoad, in.MaxLoad)
	if oversized && !in.AcceptExceeding {
		return Decision{
			Reason: ReasonOversizedDeclined,
			Detail: fmt.Sprintf("job load %s exceeds this node's max load %s", num(in.JobLoad), num(in.MaxLoad)),
		}
	}
	if c := roomCause(in.Load, in.JobLoad, in.MaxLoad, in.Running, in.MaxJobs); c != CauseNone {
		return Decision{Reason: ReasonBusy, Detail: roomReason(c, in.Load, in.JobLoad, in.MaxLoad, in.MaxJobs)}
	}
	d := Decision{Accept: true}
	if oversized {
		d.Warning = fmt.Sprintf("job load %s exceeds this node's max load %s; running it alone (accept-exceeding is on)",
			num(in.JobLoad), num(in.MaxLoad))
	}
	return d
}
