package watchdog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/waitfor"
)

// fakeClock moves only when a test says so. Advance hands each timer that
// falls due to the loop and returns once the loop has taken it, so what
// the test sends next reaches the loop after it has acted on the time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c    chan time.Time
	at   time.Time
	stop chan struct{}
	once sync.Once
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }
func (t *fakeTimer) Stop()               { t.once.Do(func() { close(t.stop) }) }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: make(chan time.Time), at: c.now.Add(d), stop: make(chan struct{})}
	c.timers = append(c.timers, t)
	return t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	var due, rest []*fakeTimer
	for _, t := range c.timers {
		if t.at.After(now) {
			rest = append(rest, t)
		} else {
			due = append(due, t)
		}
	}
	c.timers = rest
	c.mu.Unlock()
	for _, t := range due {
		select {
		case t.c <- now:
		case <-t.stop:
		}
	}
}

// watchdogUnderTest is Run on pipes and a fake clock.
type watchdogUnderTest struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	clock *fakeClock
	done  chan error
}

func startWatchdog(t *testing.T) *watchdogUnderTest {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w := &watchdogUnderTest{t: t, in: inW, lines: make(chan string, 100),
		clock: &fakeClock{now: time.Unix(1000, 0)}, done: make(chan error, 1)}
	go func() {
		err := Run(inR, outW, w.clock)
		outW.Close()
		w.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
		close(w.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	w.expect("watchdog 1")
	return w
}

func (w *watchdogUnderTest) send(format string, args ...any) {
	w.t.Helper()
	if _, err := fmt.Fprintf(w.in, format+"\n", args...); err != nil {
		w.t.Fatal(err)
	}
}

// expect reads the watchdog's next line.
func (w *watchdogUnderTest) expect(format string, args ...any) {
	w.t.Helper()
	want := fmt.Sprintf(format, args...)
	select {
	case got, ok := <-w.lines:
		if !ok {
			w.t.Fatalf("the watchdog's output ended; want %q", want)
		}
		if got != want {
			w.t.Fatalf("watchdog said %q, want %q", got, want)
		}
	case <-time.After(30 * time.Second):
		w.t.Fatalf("the watchdog said nothing; want %q", want)
	}
}

// group is a job-like process tree in its own process group: a shell and
// the sleep it forked, which a parent-death signal would not reach.
type group struct {
	pgid, grandchild int
	exited           chan struct{}
}

func startGroup(t *testing.T) group {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep 600 & echo $!; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := group{pgid: cmd.Process.Pid, exited: make(chan struct{})}
	t.Cleanup(func() { _ = syscall.Kill(-g.pgid, syscall.SIGKILL) })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if g.grandchild, err = strconv.Atoi(strings.TrimSpace(line)); err != nil {
		t.Fatalf("the group's shell said %q: %v", line, err)
	}
	go func() { _ = cmd.Wait(); close(g.exited) }()
	return g
}

// dead reports whether both processes of the group are gone.
func (g group) dead() bool {
	select {
	case <-g.exited:
		return !alive(g.grandchild)
	default:
		return false
	}
}

func (g group) waitDead(t *testing.T) {
	t.Helper()
	waitfor.Until(t, 30*time.Second, fmt.Sprintf("process group %d (grandchild %d) to die", g.pgid, g.grandchild), g.dead)
}

func (g group) requireAlive(t *testing.T) {
	t.Helper()
	if g.dead() || !alive(g.grandchild) {
		t.Fatalf("process group %d was killed", g.pgid)
	}
}

// alive reports whether pid exists and is not a zombie (an orphan no one
// reaps stays one).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func TestEndOfInputKillsEveryWatchedGroup(t *testing.T) {
	t.Parallel()
	w := startWatchdog(t)
	a, b, spared := startGroup(t), startGroup(t), startGroup(t)
	w.send("watch %d", a.pgid)
	w.send("watch %d", b.pgid)
	w.send("watch %d", spared.pgid)
	w.send("forget %d", spared.pgid)
	w.expect("watching %d", a.pgid)
	w.expect("watching %d", b.pgid)
	w.expect("watching %d", spared.pgid)
	w.expect("forgot %d", spared.pgid)
	a.requireAlive(t)

	w.in.Close()
	if err := <-w.done; err != nil {
		t.Fatalf("Run = %v at end of input, want nil", err)
	}
	a.waitDead(t)
	b.waitDead(t)
	spared.requireAlive(t)
}

func TestPassedDeadlineFencesAndKills(t *testing.T) {
	t.Parallel()
	w := startWatchdog(t)
	g := startGroup(t)
	w.send("watch %d", g.pgid)
	w.send("until 1000")
	w.expect("watching %d", g.pgid)
	w.expect("until 1000")
	w.clock.Advance(999 * time.Millisecond)
	w.send("forget 99999999") // a reply after the loop has seen the time
	w.expect("forgot 99999999")
	g.requireAlive(t)

	w.clock.Advance(time.Millisecond)
	w.expect("fenced 1")
	g.waitDead(t)
	w.send("forget %d", g.pgid)
	w.expect("forgot %d killed", g.pgid)
}

func TestRenewalInTimeKillsNothing(t *testing.T) {
	t.Parallel()
	w := startWatchdog(t)
	g := startGroup(t)
	w.send("watch %d", g.pgid)
	w.send("until 1000")
	w.expect("watching %d", g.pgid)
	w.expect("until 1000")
	w.clock.Advance(600 * time.Millisecond)
	w.send("until 1000")
	w.expect("until 1000")
	w.clock.Advance(600 * time.Millisecond) // past the first deadline, not the second
	w.send("forget %d", g.pgid)
	w.expect("forgot %d", g.pgid)
	g.requireAlive(t)

	// The renewed deadline holds: with nothing watched it fences nothing.
	w.clock.Advance(400 * time.Millisecond)
	w.expect("fenced 0")
	g.requireAlive(t)
}

func TestGroupWatchedWhileFencedDiesAtOnce(t *testing.T) {
	t.Parallel()
	w := startWatchdog(t)
	w.send("until 10")
	w.expect("until 10")
	w.clock.Advance(10 * time.Millisecond)
	w.expect("fenced 0")

	late := startGroup(t)
	w.send("watch %d", late.pgid)
	w.expect("killed %d", late.pgid)
	late.waitDead(t)

	// A new until ends the fence.
	w.send("until 1000")
	w.expect("until 1000")
	g := startGroup(t)
	w.send("watch %d", g.pgid)
	w.expect("watching %d", g.pgid)
	w.send("forget %d", g.pgid)
	w.expect("forgot %d", g.pgid)
	g.requireAlive(t)
}

func TestNoTimeAtAllFencesAtOnce(t *testing.T) {
	t.Parallel()
	w := startWatchdog(t)
	g := startGroup(t)
	w.send("watch %d", g.pgid)
	w.send("until 0")
	w.expect("watching %d", g.pgid)
	w.expect("fenced 1")
	w.expect("until 0")
	g.waitDead(t)
}

func TestBadLinesChangeNothing(t *testing.T) {
	t.Parallel()
	w := startWatchdog(t)
	g := startGroup(t)
	w.send("watch %d", g.pgid)
	w.expect("watching %d", g.pgid)
	for _, line := range []string{"watch 1", "watch 0", "watch -5", "watch " + strconv.Itoa(syscall.Getpgrp()), "forget x", "until", "kill 5"} {
		w.send("%s", line)
		select {
		case got := <-w.lines:
			if !strings.HasPrefix(got, "error ") {
				t.Errorf("%q: watchdog said %q, want an error", line, got)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%q: no answer", line)
		}
	}
	w.send("")
	w.send("forget %d", g.pgid)
	w.expect("forgot %d", g.pgid)
	g.requireAlive(t)
}
