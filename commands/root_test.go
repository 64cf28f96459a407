package commands

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestEveryCommandHasHelp(t *testing.T) {
	ios, _, _ := TestIO("")
	root := NewRootCmd(NewFactory(ios), "test")
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			visit(sub)
		}
		// cobra's own help and completion commands bring their own help.
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || (c.HasParent() && c.Parent().Name() == "completion") {
			return
		}
		if c.Short == "" {
			t.Errorf("%s has no Short", c.CommandPath())
		}
		if c.Short != "" && strings.ToUpper(c.Short[:1]) != c.Short[:1] {
			t.Errorf("%s: Short %q should start with a capital", c.CommandPath(), c.Short)
		}
		// A help topic is only text: cobra never prints its Example.
		if c.Example == "" && !c.IsAdditionalHelpTopicCommand() {
			t.Errorf("%s has no Example", c.CommandPath())
		}
		for _, line := range strings.Split(c.Example, "\n") {
			if line != "" && !strings.HasPrefix(line, "  ") {
				t.Errorf("%s: example line %q is not indented", c.CommandPath(), line)
			}
		}
	}
	visit(root)
}

func TestRootUsageErrors(t *testing.T) {
	e := newTestEnv(t)
	cases := map[string][]string{
		"unknown command":     {"nosuch"},
		"typo":                {"lsit"},
		"unknown flag":        {"list", "--nosuch"},
		"unknown db command":  {"db", "nosuch"},
		"unknown lease verb":  {"lease", "grab"},
		"missing id":          {"cancel"},
		"flag needs argument": {"list", "--state"},
	}
	for name, args := range cases {
		err := e.run(t, args...)
		if !errors.As(err, new(*UsageError)) {
			t.Errorf("%s %v: %v; want a UsageError", name, args, err)
		}
	}
	err := e.run(t, "lsit")
	if want := `unknown command "lsit" for "jobctl"; did you mean "list"? (see 'jobctl --help')`; err == nil || err.Error() != want {
		t.Errorf("typo error %q; want %q", err, want)
	}
}

func TestRootHelp(t *testing.T) {
	e := newTestEnv(t)
	if err := e.run(t); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Job commands:", "submit", "Cluster commands:", "nodes", "Exit codes:"} {
		if !strings.Contains(e.stdout.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, e.stdout.String())
		}
	}
}

func TestVersion(t *testing.T) {
	e := newTestEnv(t)
	if err := e.run(t, "version"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(e.stdout.String(), "\n")
	if lines[0] != "jobctl version 1.2.3" || !strings.HasPrefix(lines[1], "commit ") || !strings.HasPrefix(lines[2], "go1.") {
		t.Errorf("version printed %q", e.stdout.String())
	}
	if err := e.run(t, "version", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var v versionInfo
	if err := json.Unmarshal(e.stdout.Bytes(), &v); err != nil || v.Version != "1.2.3" || !strings.HasPrefix(v.Go, "go1.") {
		t.Errorf("version -o json = %s (%v)", e.stdout.String(), err)
	}
	if err := e.run(t, "--version"); err != nil || e.stdout.String() != "jobctl version 1.2.3\n" {
		t.Errorf("--version printed %q (%v)", e.stdout.String(), err)
	}
}

func TestCompletion(t *testing.T) {
	e := newTestEnv(t)
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if err := e.run(t, "completion", shell); err != nil {
			t.Fatalf("completion %s: %v", shell, err)
		}
		if !strings.Contains(e.stdout.String(), "jobctl") {
			t.Errorf("completion %s does not mention jobctl", shell)
		}
	}
}
