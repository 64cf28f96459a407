//go:build linux

package main_test

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	osuser "os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The boundary between a job and its node, tried as an attacker inside a
// job would: the node's environment, memory and files. These tests create
// system users and run nodes and jobs as them, so they need root.

// Users the tests create once (and leave, for the next run): one a node
// runs as, one its jobs run as.
const (
	nodeUserName = "jobctl-e2e-node"
	jobUserName  = "jobctl-e2e-job"
)

var userMu sync.Mutex

// testUser returns the system user name, creating it (with a home under
// /home) the first time.
func testUser(t *testing.T, name string) *osuser.User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root: creates the user %s and runs processes as it", name)
	}
	userMu.Lock()
	defer userMu.Unlock()
	if u, err := osuser.Lookup(name); err == nil {
		return u
	}
	out, err := exec.Command("useradd", "--system", "--user-group", "--create-home", "--home-dir", "/home/"+name,
		"--shell", "/bin/sh", "--comment", "jobctl test user", name).CombinedOutput()
	if err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	u, err := osuser.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func ids(t *testing.T, u *osuser.User) (uid, gid uint32) {
	t.Helper()
	a, err1 := strconv.ParseUint(u.Uid, 10, 32)
	b, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		t.Fatalf("user %s: uid %q gid %q", u.Username, u.Uid, u.Gid)
	}
	return uint32(a), uint32(b)
}

// Capabilities, as numbered by Linux.
const (
	capChown  = 0
	capKill   = 5
	capSetgid = 6
	capSetuid = 7
)

// asUser runs a node as u with these capabilities as ambient ones, as
// systemd's AmbientCapabilities= does: the packaged unit's way.
func asUser(t *testing.T, u *osuser.User, env []string, caps ...uintptr) func(*exec.Cmd) {
	uid, gid := ids(t, u)
	// The node must be able to run the binary the tests built.
	if err := os.Chmod(filepath.Dir(binary), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := openDir(t, u)
	return func(cmd *exec.Cmd) {
		cmd.Env = append(os.Environ(), "HOME="+u.HomeDir, "USER="+u.Username, "LOGNAME="+u.Username, "TMPDIR="+tmp)
		cmd.Env = append(cmd.Env, env...)
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Credential:  &syscall.Credential{Uid: uid, Gid: gid},
			AmbientCaps: caps,
		}
	}
}

// unitCaps are the capabilities the packaged unit gives the node
// (AmbientCapabilities=, CapabilityBoundingSet=).
const unitCaps = "setuid,setgid,chown,kill"

// asUnit runs a node as the packaged unit does: as u, with the unit's
// capabilities ambient and nothing else in its bounding set, and no new
// privileges for anything it starts (NoNewPrivileges=yes), through setpriv.
func asUnit(t *testing.T, u *osuser.User, env []string) func(*exec.Cmd) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv (util-linux) to start the node as the packaged unit does")
	}
	base := asUser(t, u, env)
	return func(cmd *exec.Cmd) {
		base(cmd)
		cmd.SysProcAttr = nil
		caps := "+" + strings.ReplaceAll(unitCaps, ",", ",+")
		// cmd.Args[0] is the binary: setpriv runs it.
		cmd.Args = append([]string{setpriv, "--reuid=" + u.Uid, "--regid=" + u.Gid, "--init-groups",
			"--inh-caps=" + caps, "--ambient-caps=" + caps, "--bounding-set=-all," + caps, "--nnp", "--"}, cmd.Args...)
		cmd.Path = setpriv
	}
}

// nodeSecrets is what a node is started with that no job may learn: a
// database password in JOBCTL_DB, PGPASSWORD, and a secret of another
// program in its environment.
type nodeSecrets struct {
	dsn      string // the database address, with a password in it
	password string
	pgpass   string
	aws      string
}

func newNodeSecrets(t *testing.T, dsn string) nodeSecrets {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	s := nodeSecrets{password: "pw-" + randomSuffix(), pgpass: "pgpw-" + randomSuffix(), aws: "aws-" + randomSuffix()}
	// The server trusts its clients: the password is never checked, but
	// the node holds it.
	u.User = url.UserPassword(u.User.Username(), s.password)
	s.dsn = u.String()
	return s
}

func (s nodeSecrets) env() []string {
	return []string{"JOBCTL_DB=" + s.dsn, "PGPASSWORD=" + s.pgpass, "AWS_SECRET_ACCESS_KEY=" + s.aws}
}

// mustNotShow fails the test when text holds one of the secrets.
func (s nodeSecrets) mustNotShow(t *testing.T, what, text string) {
	t.Helper()
	for name, v := range map[string]string{"the database password": s.password, "PGPASSWORD": s.pgpass, "AWS_SECRET_ACCESS_KEY": s.aws} {
		if strings.Contains(text, v) {
			t.Errorf("%s shows %s:\n%s", what, name, text)
		}
	}
}

// attack is the job of the attacker: it reads what it can of its node
// ($PPID) and its watchdog ($1), then the files named after it, and says
// for each whether it got anything.
const attack = `node=$PPID; watchdog=$1; shift
echo "parent $node"
try() { what=$1; shift; if out=$("$@" 2>&1); then printf '%s: READ\n%s\n' "$what" "$out"; else printf '%s: denied (%s)\n' "$what" "$out"; fi; }
words() { tr '\0' '\n' <"$1"; }   # the attack: tr "\0" "\n" </proc/$PPID/environ
try "own environ" words /proc/self/environ
try "node environ" words /proc/$node/environ
opens() { exec 3<"$1"; }           # /proc/PID/mem is read at the addresses of maps; opening it is the test
try "node mem" opens /proc/$node/mem
try "node fd" ls /proc/$node/fd
try "node maps" cat /proc/$node/maps
try "watchdog environ" words /proc/$watchdog/environ
try "node cmdline" words /proc/$node/cmdline
for f in "$@"; do try "file $f" cat "$f"; done
try "capabilities" grep -E '^(Cap|NoNewPrivs)' /proc/self/status
`

// watchdogPid reads the pid of a node's watchdog from its log.
// The node is online in the database a moment before it has started its
// watchdog.
func watchdogPid(t *testing.T, c *cluster, n *node) string {
	t.Helper()
	var m []string
	c.eventually(20*time.Second, "the node to log its watchdog's pid", func() bool {
		m = regexp.MustCompile(`msg="watchdog started".* pid=(\d+)`).FindStringSubmatch(n.log.String())
		return m != nil
	})
	return m[1]
}

// runAttack runs the attack as a job on n and returns its log.
func runAttack(t *testing.T, c *cluster, n *node, files ...string) string {
	t.Helper()
	args := append([]string{"--", "sh", "-c", attack, "sh", watchdogPid(t, c, n)}, files...)
	id := c.submit(args...)
	j := c.waitStatus(id, "FINISHED", 60*time.Second)
	log := c.ok("logs", id)
	if want := fmt.Sprintf("parent %d\n", n.cmd.Process.Pid); !strings.Contains(log, want) {
		t.Fatalf("the job's parent is not the node (pid %d), so the test proves nothing:\n%s", n.cmd.Process.Pid, log)
	}
	if !strings.Contains(log, "own environ: READ\n") || !strings.Contains(log, "JOBCTL_JOB_ID="+strconv.FormatInt(j.ID, 10)) {
		t.Fatalf("the job could not read even its own environment, so the test proves nothing:\n%s", log)
	}
	return log
}

// denied checks that each of these reads of the attack was refused.
func denied(t *testing.T, log string, whats ...string) {
	t.Helper()
	for _, what := range whats {
		if !strings.Contains(log, what+": denied") {
			t.Errorf("the job's %q was not refused:\n%s", what, log)
		}
	}
}

// noCapabilities checks that the attack's job holds no capability at all.
func noCapabilities(t *testing.T, log string) {
	t.Helper()
	for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
		if !regexp.MustCompile(`(?m)^` + set + `:\s+0+$`).MatchString(log) {
			t.Errorf("the job holds capabilities (%s not empty):\n%s", set, log)
		}
	}
}

// privateFile writes a file only its owner u may read.
func privateFile(t *testing.T, path, content string, u *osuser.User) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	uid, gid := ids(t, u)
	if err := os.Chown(path, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
}

// openDir makes a directory of u's that everyone may pass through and
// list (0755), removed after the test: what lies in it is protected by its
// own mode alone.
func openDir(t *testing.T, u *osuser.User) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "jobctl-e2e-open-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	uid, gid := ids(t, u)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// privateDir makes a directory of u's, in a place u can reach, removed
// after the test.
func privateDir(t *testing.T, u *osuser.User) string {
	t.Helper()
	dir := filepath.Join(u.HomeDir, "e2e-"+randomSuffix())
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	uid, gid := ids(t, u)
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// The attack of a job on a node that runs as an ordinary user, with its jobs
// as the same user: the node is closed to processes of its own user, so the
// job reads neither its environment (the database password, PGPASSWORD, any
// other secret) nor its memory nor its open files; its command line holds
// no secret; its watchdog is as closed.
func TestAJobCannotReadItsNodeOfTheSameUser(t *testing.T) {
	t.Parallel()
	nodeUser := testUser(t, nodeUserName)
	c := postgresCluster(t)
	s := newNodeSecrets(t, c.dsn)
	state := privateDir(t, nodeUser)
	n := c.serveWith("plain", asUser(t, nodeUser, s.env()), "--exec", "--state-dir", filepath.Join(state, "node"))
	log := runAttack(t, c, n)
	denied(t, log, "node environ", "node mem", "node fd", "node maps", "watchdog environ")
	if !strings.Contains(log, "node cmdline: READ") {
		t.Errorf("the node's command line could not be read; the test expected it to be, without secrets:\n%s", log)
	}
	s.mustNotShow(t, "the job's log", log)
	noCapabilities(t, log)
}

// The same attack on a node that runs as root and its jobs as --job-user:
// nothing of the node, its watchdog, its config file, its database file or
// the SQLite database it made, though they lie in a directory everyone may
// pass through.
func TestAJobAsJobUserCannotReadItsRootNode(t *testing.T) {
	t.Parallel()
	testUser(t, jobUserName)
	root := &osuser.User{Uid: "0", Gid: "0", Username: "root"}
	dir := openDir(t, root)
	c := &cluster{t: t, dsn: "sqlite:" + filepath.Join(dir, "jobctl.db")}
	// The environment names another database, with a password; --db-file
	// comes first, but the node holds both.
	s := newNodeSecrets(t, "postgres://jobctl@db.invalid/jobctl")
	config := filepath.Join(dir, "node.yaml")
	privateFile(t, config, "# "+s.password+"\nservices:\n  attack:\n    command: [sh, -c, 'exit 0']\n", root)
	dbFile := filepath.Join(dir, "db")
	privateFile(t, dbFile, c.dsn+"\n", root)
	n := c.serveWith("rooted", func(cmd *exec.Cmd) { cmd.Env = append(os.Environ(), append(s.env(), "TMPDIR="+dir)...) },
		"--exec", "--job-user", jobUserName, "--config", config, "--db-file", dbFile, "--state-dir", filepath.Join(t.TempDir(), "state"))
	db := strings.TrimPrefix(c.dsn, "sqlite:")
	log := runAttack(t, c, n, config, dbFile, db, db+"-wal")
	denied(t, log, "node environ", "node mem", "node fd", "node maps", "watchdog environ",
		"file "+config, "file "+dbFile, "file "+db, "file "+db+"-wal")
	s.mustNotShow(t, "the job's log", log)
	noCapabilities(t, log)
}

// The packaged way: the node runs as an ordinary user with the capabilities
// that running jobs as another user needs and no new privileges, its jobs as
// the job user. The job inherits none of those capabilities, and reaches
// nothing of the node.
func TestAJobAsJobUserCannotReadItsNodeWithCapabilities(t *testing.T) {
	t.Parallel()
	nodeUser := testUser(t, nodeUserName)
	testUser(t, jobUserName)
	c := postgresCluster(t)
	s := newNodeSecrets(t, c.dsn)
	dir := openDir(t, nodeUser)
	config := filepath.Join(dir, "node.yaml")
	privateFile(t, config, "# "+s.password+"\nservices:\n  attack:\n    command: [sh, -c, 'exit 0']\n", nodeUser)
	dbFile := filepath.Join(dir, "db")
	privateFile(t, dbFile, s.dsn+"\n", nodeUser)
	n := c.serveWith("capable", asUnit(t, nodeUser, s.env()),
		"--exec", "--job-user", jobUserName, "--config", config, "--db-file", dbFile,
		"--state-dir", filepath.Join(privateDir(t, nodeUser), "node"))
	log := runAttack(t, c, n, config, dbFile)
	denied(t, log, "node environ", "node mem", "node fd", "node maps", "watchdog environ",
		"file "+config, "file "+dbFile)
	s.mustNotShow(t, "the job's log", log)
	noCapabilities(t, log)
	if !regexp.MustCompile(`(?m)^NoNewPrivs:\s+1$`).MatchString(log) {
		t.Errorf("the node did not run with no new privileges, as the unit has it:\n%s", log)
	}
}

// tmpJob prints who it runs as and its TMPDIR, fills the TMPDIR with what a
// careless or hostile job leaves (a directory nobody may enter, a sticky
// one, links out of it), then waits for its gate.
func tmpJob(g gate) []string {
	return []string{"--", "sh", "-c", `set -e
echo "uid=$(id -u) gid=$(id -g) home=$HOME pwd=$(pwd) user=$USER"
echo "tmpdir=$TMPDIR mode=$(stat -c %a "$TMPDIR") owner=$(stat -c %u "$TMPDIR") entries=$(ls -A "$TMPDIR" | wc -l)"
if ls "$(dirname "$TMPDIR")" >/dev/null 2>&1; then echo "others: listed"; else echo "others: hidden"; fi
mkdir -p "$TMPDIR/locked/deep" "$TMPDIR/sticky"
echo x > "$TMPDIR/locked/deep/file"
chmod 000 "$TMPDIR/locked/deep" "$TMPDIR/locked"
chmod 1700 "$TMPDIR/sticky"; echo y > "$TMPDIR/sticky/file"; chmod 0 "$TMPDIR/sticky/file"
ln -s / "$TMPDIR/root"; ln -s /etc "$TMPDIR/sticky/etc"
echo filled
` + g.script(), "sh"}
}

type tmpReport struct {
	uid, gid, home, pwd, user string
	tmpdir, mode, owner       string
	entries                   string
	others                    string
}

var (
	whoLine    = regexp.MustCompile(`(?m)^uid=(\d+) gid=(\d+) home=(\S*) pwd=(\S*) user=(\S*)$`)
	tmpdirLine = regexp.MustCompile(`(?m)^tmpdir=(\S+) mode=(\d+) owner=(\d+) entries=\s*(\d+)$`)
	othersLine = regexp.MustCompile(`(?m)^others: (\w+)$`)
)

// readTmpReport waits until job id has filled its TMPDIR and reads what it
// said.
func readTmpReport(t *testing.T, c *cluster, id string) tmpReport {
	t.Helper()
	var log string
	c.eventually(60*time.Second, "job "+id+" to fill its TMPDIR", func() bool {
		log = c.ok("logs", id)
		return strings.Contains(log, "filled\n")
	})
	w, d, o := whoLine.FindStringSubmatch(log), tmpdirLine.FindStringSubmatch(log), othersLine.FindStringSubmatch(log)
	if w == nil || d == nil || o == nil {
		t.Fatalf("job %s said:\n%s", id, log)
	}
	return tmpReport{uid: w[1], gid: w[2], home: w[3], pwd: w[4], user: w[5], tmpdir: d[1], mode: d[2], owner: d[3], entries: d[4], others: o[1]}
}

func gone(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	return os.IsNotExist(err)
}

// Jobs of a node with --job-user run as that user, its groups, its home;
// each attempt has an empty TMPDIR of its own, 0700 and the user's, which
// no other job can list, and which is gone once the job has ended, whether
// it finished or was cancelled, whatever the job left in it; the directory
// that holds them goes when the node stops. The node runs as an ordinary
// user with capabilities, as packaged, so it removes what it may not even
// read.
func TestJobsRunAsTheJobUserWithAPrivateTmpdir(t *testing.T) {
	t.Parallel()
	nodeUser := testUser(t, nodeUserName)
	jobUser := testUser(t, jobUserName)
	c := postgresCluster(t)
	state := privateDir(t, nodeUser)
	n := c.serveWith("tmp", asUser(t, nodeUser, []string{"JOBCTL_DB=" + c.dsn}, capSetuid, capSetgid, capChown, capKill),
		"--exec", "--job-user", jobUserName, "--state-dir", filepath.Join(state, "node"))
	g := gate(filepath.Join(openDir(t, &osuser.User{Uid: "0", Gid: "0"}), "open")) // the job user must see it
	first, second := c.submit(tmpJob(g)...), c.submit(tmpJob(g)...)
	a, b := readTmpReport(t, c, first), readTmpReport(t, c, second)
	for _, r := range []tmpReport{a, b} {
		if r.uid != jobUser.Uid || r.gid != jobUser.Gid || r.user != jobUserName {
			t.Errorf("the job ran as uid %s gid %s (USER %s), want %s's %s and %s", r.uid, r.gid, r.user, jobUserName, jobUser.Uid, jobUser.Gid)
		}
		if r.home != jobUser.HomeDir || r.pwd != jobUser.HomeDir {
			t.Errorf("the job's HOME is %q and it ran in %q, want the job user's home %q", r.home, r.pwd, jobUser.HomeDir)
		}
		if r.mode != "700" || r.owner != jobUser.Uid || r.entries != "0" {
			t.Errorf("the job's TMPDIR %s had mode %s, owner %s and %s entries; want 700, the job user's, empty", r.tmpdir, r.mode, r.owner, r.entries)
		}
		if r.others != "hidden" {
			t.Errorf("the job could list the directory of the other jobs' TMPDIRs")
		}
	}
	if a.tmpdir == b.tmpdir {
		t.Fatalf("two jobs share the TMPDIR %s", a.tmpdir)
	}
	if gone(t, a.tmpdir) || gone(t, b.tmpdir) {
		t.Fatalf("a TMPDIR is gone while its job runs")
	}

	c.ok("cancel", second)
	c.waitStatus(second, "CANCELLED", 60*time.Second)
	if !gone(t, b.tmpdir) {
		t.Errorf("the cancelled job's TMPDIR %s is still there", b.tmpdir)
	}
	g.open(t)
	c.waitStatus(first, "FINISHED", 60*time.Second)
	if !gone(t, a.tmpdir) {
		t.Errorf("the finished job's TMPDIR %s is still there", a.tmpdir)
	}
	if gone(t, filepath.Dir(a.tmpdir)) {
		t.Errorf("the directory of the TMPDIRs went with them while the node runs")
	}
	n.stop(t, syscall.SIGTERM)
	if !gone(t, filepath.Dir(a.tmpdir)) {
		t.Errorf("the node stopped cleanly and left the directory of the TMPDIRs, %s", filepath.Dir(a.tmpdir))
	}
}

// A node killed with SIGKILL takes its jobs of another user with it (its
// watchdog, an ordinary user's process like the node, holds CAP_KILL); the
// node started again removes the TMPDIRs they left.
func TestAKilledNodesJobsOfTheJobUserDieAndTheirTmpdirGoes(t *testing.T) {
	t.Parallel()
	nodeUser := testUser(t, nodeUserName)
	testUser(t, jobUserName)
	c := postgresCluster(t)
	state := privateDir(t, nodeUser)
	prepare := asUser(t, nodeUser, []string{"JOBCTL_DB=" + c.dsn}, capSetuid, capSetgid, capChown, capKill) // one TMPDIR for both
	serve := func() *node {
		return c.serveWith("doomed", prepare,
			"--exec", "--job-user", jobUserName, "--state-dir", filepath.Join(state, "node"), "--node-lease", "2s")
	}
	n := serve()
	id := c.submit("--", "sh", "-c", `sleep 600 & echo "pids $$ $!"; echo "tmpdir=$TMPDIR"; wait`, "sh")
	var pids []int
	var tmpdir string
	c.eventually(60*time.Second, "the job to say its pids", func() bool {
		log := c.ok("logs", id)
		m := regexp.MustCompile(`pids (\d+) (\d+)\ntmpdir=(\S+)\n`).FindStringSubmatch(log)
		if m == nil {
			return false
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		pids, tmpdir = []int{a, b}, m[3]
		return true
	})
	killOnCleanup(t, pids)
	n.stop(t, syscall.SIGKILL)
	c.eventually(60*time.Second, "the job's shell and its grandchild to die with the node", func() bool {
		return !processAlive(pids[0]) && !processAlive(pids[1])
	})
	if gone(t, tmpdir) {
		t.Fatalf("the TMPDIR %s of the killed node's job is gone before the node starts again; the test proves nothing", tmpdir)
	}
	// It is online a moment before it has looked (right after it made the
	// name its own).
	serve()
	c.eventually(20*time.Second, "the node started again to remove the TMPDIR "+tmpdir+" of its earlier process's job",
		func() bool { return gone(t, tmpdir) })
}

// A node that may not switch users refuses --job-user at start, in one
// line, exit 2, as it refuses a user that does not exist.
func TestJobUserNeedsPrivilegesAndAUser(t *testing.T) {
	t.Parallel()
	nodeUser := testUser(t, nodeUserName)
	testUser(t, jobUserName)
	dsn := "sqlite:" + filepath.Join(privateDir(t, nodeUser), "jobctl.db")
	for _, tc := range []struct {
		name string
		args []string
		caps []uintptr
		want string
	}{
		{"no capabilities", []string{"--job-user", jobUserName}, nil, "lacks CAP_SETUID, CAP_SETGID, CAP_CHOWN, CAP_KILL"},
		{"no CAP_KILL", []string{"--job-user", jobUserName}, []uintptr{capSetuid, capSetgid, capChown}, "lacks CAP_KILL"},
		{"no such user", []string{"--job-user", "no-such-user-" + randomSuffix()}, []uintptr{capSetuid, capSetgid, capChown, capKill}, "--job-user: no user"},
		{"no such group", []string{"--job-user", jobUserName + ":no-such-group"}, []uintptr{capSetuid, capSetgid, capChown, capKill}, "no group"},
	} {
		cmd := exec.Command(binary, append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
		asUser(t, nodeUser, []string{"JOBCTL_DB=" + dsn}, tc.caps...)(cmd)
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.want) || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
			t.Errorf("%s: serve %v exited %v, said:\n%s\nwant exit 2 and one line with %q", tc.name, tc.args, err, out, tc.want)
		}
	}
	if _, err := os.Stat(strings.TrimPrefix(dsn, "sqlite:")); !os.IsNotExist(err) {
		t.Errorf("a refused serve created the database (%v)", err)
	}
}

// A file that names the database and that its group or others may read is
// refused, exit 2, before anything is created; a private one is used.
func TestDBFileMustBePrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "jobctl.db")
	file := filepath.Join(dir, "db")
	if err := os.WriteFile(file, []byte("# the cluster's database\nsqlite:"+db+"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--db-file", file, "serve"}, {"--db-file", file, "submit", "--", "true"}} {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "JOBCTL_DB=")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "mode 0640") {
			t.Errorf("jobctl %v with a group-readable --db-file: %v\n%s\nwant exit 2 naming its mode", args, err, out)
		}
	}
	cmd := exec.Command(binary, "submit", "--", "true")
	cmd.Env = append(os.Environ(), "JOBCTL_DB=", "JOBCTL_DB_FILE="+file)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "$JOBCTL_DB_FILE "+file) {
		t.Errorf("a group-readable JOBCTL_DB_FILE: %v\n%s", err, out)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("a refused command created the database (%v)", err)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(binary, "submit", "--hold", "--", "true")
	cmd.Env = append(os.Environ(), "JOBCTL_DB=", "JOBCTL_DB_FILE="+file)
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("submit with a private JOBCTL_DB_FILE: %v\n%s", err, out)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("the database the file names was not used: %v", err)
	}
}

// serve says at start where a secret of its lies open: a password on its
// command line, and a config file its jobs' user may read.
func TestServeWarnsOfSecretsInTheOpen(t *testing.T) {
	t.Parallel()
	testUser(t, jobUserName)
	c := postgresCluster(t)
	s := newNodeSecrets(t, c.dsn)
	config := filepath.Join(openDir(t, &osuser.User{Uid: "0", Gid: "0"}), "node.yaml")
	if err := os.WriteFile(config, []byte("db: "+s.dsn+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := c.serveWith("open", func(cmd *exec.Cmd) { cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Dir(config)) },
		"--db", s.dsn, "--job-user", jobUserName, "--config", config)
	log := n.log.String()
	for _, want := range []string{"--db holds a password, which every user of this machine can read in the process list",
		`msg="jobs can read this file, which may name the database and its password; make it private (chmod 600)" file=` + config + " job_user=" + jobUserName} {
		if !strings.Contains(log, want) {
			t.Errorf("the node did not warn %q:\n%s", want, log)
		}
	}
	s.mustNotShow(t, "the node's log", log)
}
