package placement

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Cause classifies why a node cannot take a job, for code that must act on
// the reason rather than print it.
type Cause string

// Causes, in the order Filter checks them.
const (
	CauseNone              Cause = ""                   // eligible
	CauseState             Cause = "state"              // not ONLINE
	CauseType              Cause = "type"               // does not offer the job's type
	CauseTooSmall          Cause = "too-small"          // max load below the job's load while a larger node exists
	CauseDeclinesOversized Cause = "declines-oversized" // largest node, but accept-exceeding is off
	CauseSilent            Cause = "silent"             // not heard from for longer than its node lease
	CauseLowMemory         Cause = "low-memory"         // free memory under its reserve
	CauseReserved          Cause = "reserved"           // kept for another, oversized job
	CauseBusy              Cause = "busy"               // no headroom now
	CauseMaxJobs           Cause = "max-jobs"           // runs its maximum number of jobs
	// CauseOverloaded: load average above its limit while a node under its
	// limit can take the job; it gives way when none can (Placement.Spilled).
	CauseOverloaded Cause = "overloaded"
)

// causeOrder lists the causes in check order; a Placement counts the nodes
// each kept out at these indexes, so counting costs no map per job.
var causeOrder = [...]Cause{CauseNone, CauseState, CauseType, CauseTooSmall, CauseDeclinesOversized,
	CauseSilent, CauseLowMemory, CauseReserved, CauseBusy, CauseMaxJobs, CauseOverloaded}

// index is c's place in causeOrder. A switch finds it by the string's
// length first, where a walk of causeOrder compared up to every cause; a
// round counts a cause for every node and job it judges.
func (c Cause) index() int {
	switch c {
	case CauseState:
		return 1
	case CauseType:
		return 2
	case CauseTooSmall:
		return 3
	case CauseDeclinesOversized:
		return 4
	case CauseSilent:
		return 5
	case CauseLowMemory:
		return 6
	case CauseReserved:
		return 7
	case CauseBusy:
		return 8
	case CauseMaxJobs:
		return 9
	case CauseOverloaded:
		return 10
	}
	return 0 // CauseNone
}

// Permanent reports whether the cause holds however the load of the cluster
// changes: only the cluster itself changing (a node coming online, leaving
// maintenance, or configured otherwise) lifts it.
func (c Cause) Permanent() bool {
	switch c {
	case CauseState, CauseType, CauseTooSmall, CauseDeclinesOversized:
		return true
	}
	return false
}

// Terms say on what terms an eligible node takes a job.
type Terms string

// The terms of an eligible node.
const (
	TermsRoom       Terms = "room"        // the job fits beside what runs
	TermsFirstChild Terms = "first-child" // may queue ahead without headroom
	TermsAlone      Terms = "alone"       // idle: runs the oversized job alone
)

// Verdict is one node's answer for one job, as `jobctl explain` shows it.
// It keeps the figures the answer was made from rather than a sentence, so
// the dispatcher's hot path formats nothing; Reason words it on demand.
type Verdict struct {
	Node     string `json:"node"`
	Eligible bool   `json:"eligible"`
	Cause    Cause  `json:"cause,omitempty"`
	Terms    Terms  `json:"terms,omitempty"`

	State   engine.NodeState `json:"state"`
	Load    float64          `json:"load"`
	MaxLoad float64          `json:"max_load"`
	Running int              `json:"running"`
	MaxJobs int              `json:"max_jobs"`
	// KeptFor is the oversized job the node is kept for, 0 when none.
	KeptFor int64 `json:"kept_for,omitempty"`
	// Silent is how long the node has not been heard from when that is
	// past its node lease (CauseSilent), and NodeLease that lease.
	Silent    engine.Duration `json:"silent,omitempty"`
	NodeLease engine.Duration `json:"-"`
	// Overload is the node's own figures when it is overloaded or short
	// of memory: "load average 9.1 above 4"; on an eligible node, the
	// load average it was taken above (Placement.Spilled).
	Overload string `json:"overload,omitempty"`
	// spillTerms are the terms an overloaded node takes the job on when
	// the gate gives way.
	spillTerms Terms

	// The job's side of the figures.
	JobType        string  `json:"-"`
	JobLoad        float64 `json:"-"`
	LargestMaxLoad float64 `json:"-"`
	Oversized      bool    `json:"-"`
}

// Reason is an operator-readable sentence fragment: why the node is out,
// or on what terms it is in.
func (v Verdict) Reason() string {
	switch v.Cause {
	case CauseNone:
		return v.termsReason()
	case CauseState:
		return stateReason(v.State)
	case CauseType:
		return fmt.Sprintf("does not offer type %q", v.JobType)
	case CauseTooSmall:
		if v.Oversized {
			return fmt.Sprintf("max load %s below job load %s; only the largest nodes (max load %s) take it",
				num(v.MaxLoad), num(v.JobLoad), num(v.LargestMaxLoad))
		}
		return fmt.Sprintf("max load %s below job load %s", num(v.MaxLoad), num(v.JobLoad))
	case CauseDeclinesOversized:
		return fmt.Sprintf("declines jobs above its max load %s (accept-exceeding is off)", num(v.MaxLoad))
	case CauseSilent:
		return fmt.Sprintf("silent for %s, past its node lease %s: it has stopped its runs and takes none until it is heard from",
			time.Duration(v.Silent).Round(100*time.Millisecond), time.Duration(v.NodeLease))
	case CauseOverloaded:
		return "overloaded: " + v.Overload + "; it gets work only when no node under its limit can take it"
	case CauseLowMemory:
		return v.Overload
	case CauseReserved:
		return fmt.Sprintf("kept for oversized job %d", v.KeptFor)
	case CauseBusy, CauseMaxJobs:
		return roomReason(v.Cause, v.Load, v.JobLoad, v.MaxLoad, v.MaxJobs)
	}
	return string(v.Cause)
}

func (v Verdict) termsReason() string {
	var s string
	switch v.Terms {
	case TermsAlone:
		s = fmt.Sprintf("idle: runs the oversized job (load %s above max %s) alone", num(v.JobLoad), num(v.MaxLoad))
	case TermsFirstChild:
		s = fmt.Sprintf("first child: may queue ahead (load %s, max %s)", num(v.Load), num(v.MaxLoad))
	default:
		s = fmt.Sprintf("has room: load %s + %s within max %s", num(v.Load), num(v.JobLoad), num(v.MaxLoad))
	}
	if v.KeptFor != 0 {
		s += "; kept for this job"
	}
	if v.Overload != "" {
		s += "; " + v.Overload + ", but no node under its limit can take it"
	}
	return s
}

// MarshalJSON adds the reason to the figures.
func (v Verdict) MarshalJSON() ([]byte, error) {
	type plain Verdict // without this method
	return json.Marshal(struct {
		plain
		Reason string `json:"reason"`
	}{plain(v), v.Reason()})
}
