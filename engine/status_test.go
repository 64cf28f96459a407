package engine

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestParseStatus(t *testing.T) {
	t.Parallel()
	for _, s := range AllStatuses {
		for _, spelled := range []string{string(s), " " + string(s) + " ", lower(string(s))} {
			if got, err := ParseStatus(spelled); err != nil || got != s {
				t.Errorf("ParseStatus(%q) = %q, %v", spelled, got, err)
			}
		}
	}
	for _, bad := range []string{"", "DONE", "RUNNINGX", "queued,running"} {
		if _, err := ParseStatus(bad); err == nil {
			t.Errorf("ParseStatus(%q) accepted", bad)
		}
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func TestStatusClasses(t *testing.T) {
	t.Parallel()
	terminal := []Status{StatusFinished, StatusWarning, StatusFailed, StatusCancelled, StatusDeleted}
	for _, s := range AllStatuses {
		if got, want := s.Terminal(), slices.Contains(terminal, s); got != want {
			t.Errorf("%s.Terminal() = %v", s, got)
		}
		if got, want := s.Dispatchable(), s == StatusQueued || s == StatusRestart; got != want {
			t.Errorf("%s.Dispatchable() = %v", s, got)
		}
		if s.Succeeded() && s != StatusFinished && s != StatusWarning {
			t.Errorf("%s counts as success", s)
		}
	}
}

func TestStateMachine(t *testing.T) {
	t.Parallel()
	for _, from := range AllStatuses {
		for _, to := range AllStatuses {
			ok := CanTransition(from, to)
			switch {
			case from == StatusDeleted && ok:
				t.Errorf("%s → %s: a deleted job changed", from, to)
			case from.Terminal() && ok && to != StatusRestart && to != StatusDeleted:
				t.Errorf("%s → %s: an ended job may only be requeued or deleted", from, to)
			case to == StatusRunning && ok && from != StatusPaused && from != StatusWaiting && !from.Dispatchable():
				// From QUEUED or RESTART only by a node that accepted an
				// offer straight from the queue (QueuedStartUpdate).
				t.Errorf("%s → %s: a job runs only after a node accepted it", from, to)
			case from == StatusCancelling && ok && to != StatusCancelled:
				t.Errorf("%s → %s: a cancelling job can only end cancelled", from, to)
			}
		}
	}
	// Every state but DELETED has a way on, and every non-terminal state can be cancelled.
	for _, s := range AllStatuses {
		if s != StatusDeleted && len(allowedTransitions[s]) == 0 {
			t.Errorf("%s is a dead end", s)
		}
		if !s.Terminal() && s != StatusCancelling && !CanTransition(s, StatusCancelled) && !CanTransition(s, StatusCancelling) {
			t.Errorf("%s cannot be cancelled", s)
		}
	}
	err := JobUpdate{ID: 7, From: StatusFinished, To: StatusRunning}.Validate()
	var te *TransitionError
	if !errors.As(err, &te) || !errors.Is(err, ErrInvalidTransition) || te.Error() != "job 7 is FINISHED and cannot become RUNNING" {
		t.Errorf("Validate of a forbidden transition = %v", err)
	}
	if err := (JobUpdate{From: StatusQueued, To: StatusRunning}).Validate(); err != nil {
		t.Errorf("Validate of an allowed transition = %v", err)
	}
}

func TestJobHoldsLoad(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		status Status
		node   string
		want   bool
	}{
		{StatusRunning, "a", true}, {StatusCancelling, "a", true},
		{StatusPaused, "a", true}, {StatusPaused, "", false}, {StatusWaiting, "a", false},
		{StatusQueued, "", false}, {StatusFinished, "a", false},
	} {
		j := &Job{Status: tt.status, Node: tt.node}
		if got := j.HoldsLoad(); got != tt.want {
			t.Errorf("%s on %q holds load = %v, want %v", tt.status, tt.node, got, tt.want)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Duration(90 * time.Minute))
	if err != nil || string(b) != `"1h30m0s"` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var d Duration
	for in, want := range map[string]time.Duration{`"1h30m"`: 90 * time.Minute, `1000`: time.Microsecond} {
		if err := json.Unmarshal([]byte(in), &d); err != nil || time.Duration(d) != want {
			t.Errorf("Unmarshal(%s) = %v, %v", in, time.Duration(d), err)
		}
	}
	if err := json.Unmarshal([]byte(`"soon"`), &d); err == nil {
		t.Error("Unmarshal of a bad duration succeeded")
	}
}

func TestLeaseValidity(t *testing.T) {
	t.Parallel()
	now := time.Unix(100, 0)
	held := Lease{Owner: "a", ExpiresAt: now.Add(2 * time.Second), Now: now}
	if !held.Valid() || held.Remaining() != 2*time.Second {
		t.Errorf("held lease: valid %v remaining %v", held.Valid(), held.Remaining())
	}
	for _, l := range []Lease{{Owner: "", ExpiresAt: now.Add(time.Second), Now: now}, {Owner: "a", ExpiresAt: now, Now: now}} {
		if l.Valid() || l.Remaining() != 0 {
			t.Errorf("lease %+v counts as held", l)
		}
	}
}

// TestWakingStatuses: every transition that makes work dispatchable or frees
// a node's load or a key enters a waking state, so a JobChangeNotifier that
// reports entries into WakingStatuses misses none of them. The one way out
// of a load-holding state that does not wake is into PAUSED, which keeps the
// load and the key.
func TestWakingStatuses(t *testing.T) {
	t.Parallel()
	holdsLoad := func(s Status) bool { return slices.Contains(LoadHoldingStatuses, s) }
	for _, from := range AllStatuses {
		for _, to := range allowedTransitions[from] {
			switch {
			case to.Dispatchable() && !to.Wakes():
				t.Errorf("%s → %s makes a job dispatchable without waking the dispatcher", from, to)
			case holdsLoad(from) && !holdsLoad(to) && !to.Wakes():
				t.Errorf("%s → %s frees load without waking the dispatcher", from, to)
			case to.Terminal() && !to.Wakes():
				t.Errorf("%s → %s may free a key without waking the dispatcher", from, to)
			}
		}
	}
	if StatusPaused.Wakes() {
		t.Error("PAUSED wakes the dispatcher, yet a paused job keeps its load and its key")
	}
}
