package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Service types run the operator's command with the job's arguments appended
// as separate words: nothing passes through a shell built from job input.
func TestServicesFromFlagsAndConfigRunWithTheJobsArguments(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	config := filepath.Join(t.TempDir(), "services.yaml")
	if err := os.WriteFile(config, []byte(`services:
  shout:
    command: ["sh", "-c", "echo shouting: \"$@\"", "shout"]
    load: 0.5
    timeout: 1m
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c.serve("svc", "--service", `greet=echo hello`, "--config", config)

	id := c.submit("--type", "greet", "--", "world; rm -rf /tmp/x", "$HOME")
	c.ok("wait", id, "--timeout", "30s")
	if logs := c.ok("logs", id); logs != "hello world; rm -rf /tmp/x $HOME\n" {
		t.Errorf("greet log = %q: the arguments must arrive as words, unexpanded", logs)
	}

	id = c.submit("--type", "shout", "--", "a b", "c")
	c.ok("wait", id, "--timeout", "30s")
	j := c.show(id)
	if j.Load != 0.5 {
		t.Errorf("a job of a service with load 0.5 got load %v", j.Load)
	}
	if logs := c.ok("logs", id); logs != "shouting: a b c\n" {
		t.Errorf("shout log = %q", logs)
	}

	start := time.Now()
	r := c.run("submit", "--wait", "--type", "sleep", "--payload", `{"duration":"1s"}`)
	if r.code != 0 || time.Since(start) < time.Second {
		t.Errorf("a sleep job of 1s: exit %d after %s (stderr %q)", r.code, time.Since(start), r.stderr)
	}
	// exec is off on this node: such a job waits and says why.
	r = c.run("submit", "--", "true")
	if r.code != 0 || !strings.Contains(r.stderr, "no registered node offers type \"exec\"") {
		t.Errorf("exec job without an --exec node: exit %d, stderr %q; want a warning", r.code, r.stderr)
	}
}

// --prefer sends a type's jobs to the named nodes first.
func TestPreferredNodesGetTheirTypeFirst(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	// Equal nodes: by load factor the tie goes to the first name, "alpha".
	c.serve("alpha", "--prefer", "noop=beta", "--dispatch-interval", "0")
	c.serve("beta", "--prefer", "noop=beta")
	id := c.submit("--type", "noop")
	c.ok("wait", id, "--timeout", "30s")
	if j := c.show(id); j.Node != "beta" {
		t.Fatalf("a noop job ran on %q, want the preferred beta", j.Node)
	}
	id = c.submit("--type", "sleep", "--payload", `"0s"`)
	c.ok("wait", id, "--timeout", "30s")
	if j := c.show(id); j.Node != "alpha" {
		t.Fatalf("a sleep job ran on %q, want alpha: the preference is for noop only", j.Node)
	}
}
