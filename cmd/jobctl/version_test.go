package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionFromTheBuild builds jobctl the two ways it is released and
// installed: with the linker flags the Makefile and the release pass, and
// with a plain go build in a git checkout, which must report that
// checkout's commit. The checkout is a fresh repository holding the
// module's files, so the test knows its commit and does not depend on how
// the tree under test was checked out (Go stamps no VCS data in a git
// worktree).
func TestVersionFromTheBuild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	checkout := copyModule(t, filepath.Join(dir, "src"))
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=jobctl test", "-c", "user.email=test@invalid"}, args...)...)
		cmd.Dir = checkout
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "snapshot")
	head := git("rev-parse", "HEAD")

	build := func(name string, flags ...string) string {
		t.Helper()
		bin := filepath.Join(dir, name)
		// -trimpath keeps the copy's compiled packages those of the tree.
		args := append([]string{"build", "-trimpath", "-o", bin}, flags...)
		cmd := exec.Command("go", append(args, "./cmd/jobctl")...)
		cmd.Dir = checkout
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return bin
	}
	version := func(bin string) []string {
		t.Helper()
		out, err := exec.Command(bin, "version").Output()
		if err != nil {
			t.Fatalf("%s version: %v", bin, err)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}

	linked := version(build("linked", "-ldflags", "-X main.version=9.8.7 -X main.commit=abc1234"))
	if linked[0] != "jobctl version 9.8.7" || linked[1] != "commit abc1234" {
		t.Errorf("with linker flags, version printed %q", linked)
	}

	// The environment may turn VCS stamping off (GOFLAGS=-buildvcs=false);
	// the flag on the command line wins.
	stamped := version(build("stamped", "-buildvcs=true"))
	// An untagged commit gets the pseudo-version the toolchain derives.
	if !strings.HasPrefix(stamped[0], "jobctl version v0.0.0-") || !strings.HasSuffix(stamped[0], "-"+head[:12]) || stamped[1] != "commit "+head {
		t.Errorf("plain go build printed %q; want a pseudo-version and commit %s", stamped, head)
	}

	// Uncommitted changes are owned up to.
	if err := os.WriteFile(filepath.Join(checkout, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirty := version(build("dirty", "-buildvcs=true"))
	if !strings.HasSuffix(dirty[0], "-"+head[:12]+"+dirty") || dirty[1] != "commit "+head+" (modified)" {
		t.Errorf("build of a changed checkout printed %q", dirty)
	}
}

// copyModule copies the module's tracked files, as they are in the working
// tree, into dst and returns dst.
func copyModule(t *testing.T, dst string) string {
	t.Helper()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse --show-toplevel: %v", err)
	}
	src := strings.TrimSpace(string(root))
	list, err := exec.Command("git", "-C", src, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(src, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
