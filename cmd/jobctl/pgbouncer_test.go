package main_test

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pgBouncer is a PgBouncer process of a test's own.
type pgBouncer struct {
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
}

// startPgBouncer runs a PgBouncer of the test's own, in transaction mode,
// on a free loopback port in front of the cluster's PostgreSQL server, and
// returns the DSN of the cluster's database through it, with
// pooler=transaction. Its server connections to that database are at most
// poolSize. It needs Debian's pgbouncer package (.ci/run installs it); a
// machine without it fails the test, which must run for real.
func startPgBouncer(t *testing.T, c *cluster, poolSize int) string {
	t.Helper()
	exe, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/pgbouncer"); serr != nil {
			t.Fatalf("pgbouncer is required for this test (apt-get install pgbouncer): %v", err)
		}
		exe = "/usr/sbin/pgbouncer"
	}
	u, err := url.Parse(c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	user := u.User.Username()
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "5432"
	}
	// PgBouncer refuses to run as root: as root the test runs it as
	// nobody, who must be able to read its files.
	asRoot := os.Geteuid() == 0
	dir, err := os.MkdirTemp("", "jobctl-pgbouncer")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	mode := os.FileMode(0o600)
	if asRoot {
		mode = 0o644
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	listen := freePort(t)
	files := map[string]string{
		"users.txt": fmt.Sprintf("%q \"\"\n", user),
		"pgbouncer.ini": fmt.Sprintf(`[databases]
%s = host=%s port=%s dbname=%s user=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %s
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 2000
`, name, host, port, name, user, listen, filepath.Join(dir, "users.txt"), poolSize),
	}
	for file, body := range files {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if asRoot {
		args = append([]string{"-u", "nobody"}, args...)
	}
	b := &pgBouncer{cmd: exec.Command(exe, args...), log: &syncBuffer{}, done: make(chan struct{})}
	b.cmd.Stdout, b.cmd.Stderr = b.log, b.log
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("start pgbouncer: %v", err)
	}
	go func() { _ = b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() {
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.done:
		case <-time.After(10 * time.Second):
			_ = b.cmd.Process.Kill()
			<-b.done
		}
		if t.Failed() {
			t.Logf("pgbouncer log:\n%s", b.log.String())
		}
	})

	through := *u
	through.Host = "127.0.0.1:" + listen
	q := through.Query()
	q.Set("sslmode", "disable")
	through.RawQuery = q.Encode()
	c.eventually(30*time.Second, "pgbouncer to answer", func() bool {
		select {
		case <-b.done:
			t.Fatalf("pgbouncer exited:\n%s", b.log.String())
		default:
		}
		db, err := sql.Open("postgres", through.String())
		if err != nil {
			return false
		}
		defer db.Close()
		return db.Ping() == nil
	})
	q.Set("pooler", "transaction")
	through.RawQuery = q.Encode()
	return through.String()
}
