package commands

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

func TestJQFiltersJSONOutput(t *testing.T) {
	e := newTestEnv(t)
	a := e.insert(t, engine.JobInsertParams{Operation: "ping"})
	b := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep})
	cases := []struct {
		args []string
		want string
	}{
		// Strings print raw, one a line.
		{[]string{"show", fmt.Sprint(a.ID), "--jq", ".status"}, "QUEUED\n"},
		{[]string{"list", "--jq", ".[] | .type"}, "noop\nsleep\n"},
		// Numbers and other values print as JSON, one a line when piped.
		{[]string{"list", "--jq", "map(.id)"}, fmt.Sprintf("[%d,%d]\n", a.ID, b.ID)},
		{[]string{"list", "--jq", ".[] | {id, operation}"}, fmt.Sprintf("{\"id\":%d,\"operation\":\"ping\"}\n{\"id\":%d,\"operation\":\"\"}\n", a.ID, b.ID)},
		{[]string{"list", "--jq", "length"}, "2\n"},
		// -o json says the same as --jq alone.
		{[]string{"list", "-o", "json", "--jq", ".[0].id"}, fmt.Sprintf("%d\n", a.ID)},
		{[]string{"lease", "--jq", ".valid"}, "false\n"},
		{[]string{"list", "--state", "failed", "--jq", ".[]"}, ""},
	}
	for _, c := range cases {
		if err := e.run(t, c.args...); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got := e.stdout.String(); got != c.want {
			t.Errorf("%v printed %q; want %q", c.args, got, c.want)
		}
		if e.stderr.Len() != 0 {
			t.Errorf("%v wrote %q on stderr", c.args, e.stderr.String())
		}
	}

	// The next command without --jq prints its JSON whole again.
	if err := e.run(t, "show", fmt.Sprint(a.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.stdout.String(), "{\n  \"id\": ") {
		t.Errorf("show -o json after a --jq run printed %q; want the indented job", e.stdout.String())
	}
}

func TestJQIndentsOnATerminal(t *testing.T) {
	e := newTestEnv(t)
	a := e.insert(t, engine.JobInsertParams{Operation: "ping"})
	e.f.IO.OutIsTerminal = true
	if err := e.run(t, "show", fmt.Sprint(a.ID), "--jq", "{id, operation}"); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("{\n  \"id\": %d,\n  \"operation\": \"ping\"\n}\n", a.ID); e.stdout.String() != want {
		t.Errorf("terminal --jq printed %q; want %q", e.stdout.String(), want)
	}
}

func TestJQUsageErrors(t *testing.T) {
	e := newTestEnv(t)
	a := e.insert(t, engine.JobInsertParams{})
	for _, args := range [][]string{
		{"list", "--jq", ".[] |"},
		{"list", "--jq", "nosuchfunction"},
		{"list", "--jq", ".id", "-o", "table"},
		{"list", "-o", "wide", "--jq", ".id"},
		{"list", "-q", "--jq", ".[]"},
		{"show", fmt.Sprint(a.ID), "--jq", ".status", "-q"},
	} {
		err := e.run(t, args...)
		if !errors.As(err, new(*UsageError)) {
			t.Errorf("%v: %v; want a usage error (exit 2)", args, err)
		}
		if e.stdout.Len() != 0 {
			t.Errorf("%v printed %q on a usage error", args, e.stdout.String())
		}
	}
}

func TestJQRuntimeErrorIsNoUsageError(t *testing.T) {
	e := newTestEnv(t)
	a := e.insert(t, engine.JobInsertParams{})
	err := e.run(t, "show", fmt.Sprint(a.ID), "--jq", ".status | tonumber")
	var jqErr *JQError
	if !errors.As(err, &jqErr) || errors.As(err, new(*UsageError)) {
		t.Fatalf("a failing expression: %v; want a *JQError, exit 1", err)
	}
	if !strings.HasPrefix(err.Error(), "jq: ") {
		t.Errorf("error %q; want it to start with jq:", err)
	}
}

// TestEveryJSONCommandTakesJQ walks the command tree: whatever offers
// -o json offers --jq too.
func TestEveryJSONCommandTakesJQ(t *testing.T) {
	ios, _, _ := TestIO("")
	root := NewRootCmd(NewFactory(ios), "1.2.3")
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("output") != nil {
			n++
			if c.Flags().Lookup("jq") == nil {
				t.Errorf("%s has -o but no --jq", c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n < 10 {
		t.Errorf("only %d commands have -o; the walk missed the tree", n)
	}
}
