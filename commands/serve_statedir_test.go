package commands

import (
	"path/filepath"
	"testing"
)

// A node's state directory follows XDG_STATE_HOME when it is absolute, else
// the home directory, and is one directory per node name whatever the name.
func TestDefaultStateDir(t *testing.T) {
	t.Setenv("HOME", "/home/op")
	t.Setenv("XDG_STATE_HOME", "/state")
	for name, want := range map[string]string{
		"node1.example.com": "/state/jobctl/nodes/node1.example.com",
		"a/b":               "/state/jobctl/nodes/a%2Fb",
		"..":                "/state/jobctl/nodes/%2E%2E",
	} {
		if got := defaultStateDir(name); got != want {
			t.Errorf("node %q: %q, want %q", name, got, want)
		}
	}
	t.Setenv("XDG_STATE_HOME", "relative")
	if got, want := defaultStateDir("n1"), filepath.Join("/home/op", ".local", "state", "jobctl", "nodes", "n1"); got != want {
		t.Errorf("with a relative XDG_STATE_HOME: %q, want %q: it is ignored", got, want)
	}
}
