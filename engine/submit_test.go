package engine

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func validJob() JobInsertParams {
	return JobInsertParams{Type: TypeNoop, Status: StatusQueued, Load: 1, MaxAttempts: 1}
}

func TestValidateJobInsert(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("k", MaxNameLength)
	if err := ValidateJobInsert(validJob()); err != nil {
		t.Fatalf("a plain job: %v", err)
	}
	ok := validJob()
	ok.Key, ok.Type, ok.Operation, ok.Creator = long, long, long, long
	ok.Key = strings.Repeat("é", MaxNameLength) // characters, not bytes
	ok.Payload = []byte(`{"a": [1, 2]}`)
	ok.Args = []string{"echo", "hello world"}
	if err := ValidateJobInsert(ok); err != nil {
		t.Fatalf("fields at their limits: %v", err)
	}
	huge := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, edit := range map[string]func(p *JobInsertParams){
		"empty type":         func(p *JobInsertParams) { p.Type = " " },
		"long key":           func(p *JobInsertParams) { p.Key = long + "k" },
		"long operation":     func(p *JobInsertParams) { p.Operation = long + "o" },
		"control characters": func(p *JobInsertParams) { p.Key = "a\nb" },
		"invalid UTF-8":      func(p *JobInsertParams) { p.Creator = "\xff" },
		"NaN load":           func(p *JobInsertParams) { p.Load = math.NaN() },
		"negative load":      func(p *JobInsertParams) { p.Load = -1 },
		"huge load":          func(p *JobInsertParams) { p.Load = 2 * MaxJobLoad },
		"status":             func(p *JobInsertParams) { p.Status = StatusRunning },
		"attempts":           func(p *JobInsertParams) { p.MaxAttempts = MaxAttemptsLimit + 1 },
		"negative backoff":   func(p *JobInsertParams) { p.Backoff = -time.Second },
		"timeout":            func(p *JobInsertParams) { p.Timeout = MaxJobTimeout + time.Hour },
		"parent":             func(p *JobInsertParams) { p.ParentID = Ptr(int64(0)) },
		"start time":         func(p *JobInsertParams) { p.RunAfter = &huge },
		"payload":            func(p *JobInsertParams) { p.Payload = []byte("{") },
		"big payload":        func(p *JobInsertParams) { p.Payload = []byte(`"` + strings.Repeat("x", MaxPayloadBytes) + `"`) },
		"NUL in payload":     func(p *JobInsertParams) { p.Payload = []byte(`"a\u0000"`) },
		"NUL in args":        func(p *JobInsertParams) { p.Args = []string{"a\x00"} },
		"big args":           func(p *JobInsertParams) { p.Args = []string{strings.Repeat("x", MaxArgsBytes)} },
		"big rollback":       func(p *JobInsertParams) { p.Rollback = strings.Repeat("x", MaxRollbackBytes+1) },
	} {
		p := validJob()
		edit(&p)
		err := ValidateJobInsert(p)
		var invalid *InvalidError
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &invalid) || len(invalid.Problems) != 1 {
			t.Errorf("%s: got %v, want one problem matching ErrInvalid", name, err)
		}
	}
}

func TestServiceDefaults(t *testing.T) {
	t.Parallel()
	offline := &Node{Name: "a", State: NodeOffline, Services: []NodeService{{Type: "enc", Load: 3}}}
	online := &Node{Name: "b", State: NodeOnline, Services: []NodeService{{Type: "enc", Load: 2, Timeout: Duration(time.Hour)}}}
	if svc, ok := ServiceDefaults([]*Node{offline, online}, "enc"); !ok || svc.Load != 2 {
		t.Errorf("an ONLINE node's settings win: got %+v, %v", svc, ok)
	}
	if svc, ok := ServiceDefaults([]*Node{offline}, "enc"); !ok || svc.Load != 3 {
		t.Errorf("else any node's: got %+v, %v", svc, ok)
	}
	if _, ok := ServiceDefaults([]*Node{online}, "other"); ok {
		t.Error("a type no node offers is offered")
	}
}
