package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func TestParseDefaults(t *testing.T) {
	spec := mustParse(t, `name: nightly
operations:
  - args: [pg_dump, -f, /tmp/x]
    load: 0.5
  - name: notify
    type: mail
    payload: {to: ops}
    on_failure: continue
    max_attempts: 3
    run_timeout: 10m
    memory: 512MiB
`)
	a, b := spec.Operations[0], spec.Operations[1]
	if a.Name != "op 1" || a.Type != engine.TypeExec || a.OnFailure != OnFailureStop || *a.Load != 0.5 {
		t.Fatalf("first %+v", a)
	}
	if b.Type != "mail" || string(b.Payload) != `{"to":"ops"}` || b.Stops() || b.MaxAttempts != 3 || time.Duration(b.Timeout) != 10*time.Minute {
		t.Fatalf("second %+v", b)
	}
	if p := operationParams(b, 7, nil); p.Key != "workflow:7" || *p.ParentID != 7 || p.Load != 1 || p.MaxAttempts != 3 ||
		p.MemoryLimit != 512<<20 {
		t.Fatalf("params %+v", p)
	}
	// Without its own, an operation takes its service's memory limit.
	nodes := []*engine.Node{{State: engine.NodeOnline, Services: []engine.NodeService{{Type: "exec", Memory: 1 << 30}}}}
	if p := operationParams(a, 7, nodes); p.MemoryLimit != 1<<30 {
		t.Fatalf("params of an operation without memory: %+v", p)
	}
	if len(spec.Deprecated) != 0 {
		t.Errorf("deprecated %q; want nothing said", spec.Deprecated)
	}
}

// "timeout", the run limit's old name, still sets it, and the spec says
// where it is used.
func TestParseOldTimeoutName(t *testing.T) {
	spec := mustParse(t, "operations:\n  - type: noop\n  - type: noop\n    timeout: 10m\n")
	if time.Duration(spec.Operations[1].Timeout) != 10*time.Minute {
		t.Errorf("run limit %s; want 10m", time.Duration(spec.Operations[1].Timeout))
	}
	if want := []string{`line 3: operation 2: "timeout" is deprecated; name the run limit "run_timeout"`}; fmt.Sprint(spec.Deprecated) != fmt.Sprint(want) {
		t.Errorf("deprecated %q; want %q", spec.Deprecated, want)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"empty", "", "the file is empty"},
		{"no operations", "name: x\n", "no operations"},
		{"empty list", "operations: []\n", "no operations"},
		{"unknown field", "name: x\noperations:\n  - type: noop\n    retries: 3\n", `line 4: unknown field retries`},
		{"unknown top field", "nmae: x\noperations: [{type: noop}]\n", "line 1: unknown field nmae"},
		{"on_failure", "operations:\n  - type: noop\n    on_failure: retry\n", `operation 1 "op 1": on_failure "retry" is neither stop nor continue`},
		{"type with blank", "operations: [{type: 'my type'}]\n", `type "my type" is not a job type name`},
		{"workflow type", "operations: [{type: workflow}]\n", "type workflow cannot be an operation"},
		{"no type", "operations: [{name: x}]\n", "no type"},
		{"negative load", "operations: [{type: noop, load: -1}]\n", "load -1 is not a number >= 0"},
		{"twice", "operations: [{name: a, type: noop}, {name: a, type: noop}]\n", "the name is taken by operation 1"},
		{"bad timeout", "operations: [{type: noop, timeout: soon}]\n", `line 1: operation 1: timeout "soon"`},
		{"bad run timeout", "operations: [{type: noop, run_timeout: 0s}]\n", `line 1: operation 1: run_timeout "0s" is not a positive duration`},
		{"both timeouts", "operations: [{type: noop, run_timeout: 1m, timeout: 1m}]\n", `"timeout" is the old name of "run_timeout"`},
		{"not UTF-8", "operations: [{args: [echo, \"caf\xe9\"]}]\n", "invalid"},
		{"bad memory", "operations: [{type: noop, memory: lots}]\n", `line 1: operation 1: memory: "lots" is not a size`},
		{"tiny memory", "operations: [{type: noop, memory: 1KiB}]\n", `memory: "1KiB" is not between 1MiB and 1PiB`},
		{"not a list", "operations: 3\n", "line 1: `3` is not a list of operations"},
		{"load text", "operations:\n  - type: noop\n    load: abc\n", "line 3: `abc` is not a number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.text))
			if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("err spans lines: %q", err)
			}
		})
	}
}

// A step's failure is final when another attempt would meet it again, and
// worth another attempt otherwise.
func TestFinal(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]bool{
		&StopError{Index: 2, Name: "b", Status: engine.StatusFailed}:      true,
		fmt.Errorf("%w: operation 1 'a' has no job", ErrBroken):           true,
		fmt.Errorf("%w: job 3 is CANCELLED", ErrMovedOn):                  true,
		&engine.InvalidError{What: "job", Problems: []string{"bad type"}}: true,
		&engine.NotFoundError{What: "job", ID: "9"}:                       true,
		errors.New("dial tcp 127.0.0.1:5432: connection refused"):         false,
		context.DeadlineExceeded:                                          false,
	} {
		if got := Final(err); got != want {
			t.Errorf("Final(%v) = %v, want %v", err, got, want)
		}
	}
}
