package jobuser

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tempBase is a fresh base directory for TempDirs in the machine's /tmp,
// which everyone may pass through (t.TempDir's parents are private).
func tempBase(t *testing.T) string {
	t.Helper()
	parent, err := os.MkdirTemp("", "jobuser-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(parent, "jobs")
}

func TestTempDirsBase(t *testing.T) {
	t.Parallel()
	base := tempBase(t)
	d, err := OpenTempDirs(base)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(d.Base())
	if err != nil || fi.Mode().Perm() != 0o711 {
		t.Fatalf("base %s: %v, %v; want mode 0711", d.Base(), fi.Mode(), err)
	}
	if _, err := OpenTempDirs("relative/jobs"); err == nil {
		t.Error("a relative base was taken")
	}
	private := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenTempDirs(filepath.Join(private, "jobs")); err == nil || !strings.Contains(err.Error(), "cannot pass through") {
		t.Errorf("a base others cannot reach: %v, want refused", err)
	}
	link := filepath.Join(filepath.Dir(base), "link")
	if err := os.Symlink(base, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenTempDirs(link); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a symbolic link as base: %v, want refused", err)
	}
}

// asUser runs a shell script as u, with args as $1, $2, ...
func asUser(t *testing.T, u *User, script string, args ...string) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.Credential()}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as %s: %s: %v\n%s", u.Name, script, err, out)
	}
}

// A directory made for a job is empty, 0700 and the job user's; removing it
// takes whatever the job left, however it locked it, and never follows a
// link out of it. What an earlier process left is removed at the next open.
func TestTempDirsMakeAndRemove(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes directories for the user nobody")
	}
	u, err := Lookup("nobody")
	if err != nil {
		t.Skipf("this machine has no user nobody: %v", err)
	}
	base := tempBase(t)
	d, err := OpenTempDirs(base)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := d.Make(u, 42, 3)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode().Perm() != 0o700 || st.Uid != u.UID || st.Gid != u.GID || !strings.HasPrefix(filepath.Base(dir), "42-3-") {
		t.Fatalf("%s: mode %04o, owner %d:%d; want 0700, %d:%d, named after the job and attempt", dir, fi.Mode().Perm(), st.Uid, st.Gid, u.UID, u.GID)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("%s is not empty: %v", dir, entries)
	}
	outside := filepath.Join(filepath.Dir(base), "outside")
	if err := os.Mkdir(outside, 0o777); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(outside, "keep")
	if err := os.WriteFile(keep, []byte("keep"), 0o666); err != nil {
		t.Fatal(err)
	}
	fill := `set -e; cd "$1"
mkdir -p locked/deep sticky; echo x > locked/deep/f; chmod 0 locked/deep/f locked/deep locked
chmod 1700 sticky; echo y > sticky/f; chmod 0 sticky/f
ln -s "$2" out; ln -s "$2/keep" sticky/keep; ln -s / root
chmod 0 "$1"`
	asUser(t, u, fill, dir, outside)
	if err := d.Remove(dir); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", dir, err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "keep" {
		t.Errorf("the removal reached %s through a link: %q, %v", keep, b, err)
	}
	if err := d.Remove(filepath.Join(outside, "keep")); err == nil {
		t.Error("Remove took a path outside the base")
	}

	left, err := d.Make(u, 43, 1)
	if err != nil {
		t.Fatal(err)
	}
	asUser(t, u, fill, left, outside)
	if _, err := OpenTempDirs(base); err != nil {
		t.Fatalf("opening again: %v", err)
	}
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("opening again left %s (%v)", left, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("opening again reached %s: %v", keep, err)
	}
}
