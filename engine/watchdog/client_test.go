package watchdog

import (
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/waitfor"
)

// TestMain makes this test binary a watchdog when started as one, as
// `jobctl watchdog` is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "watchdog" {
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
		if err := Run(os.Stdin, os.Stdout, SystemClock{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func startClient(t *testing.T) (*Client, chan struct{}) {
	t.Helper()
	fenced := make(chan struct{}, 10)
	c, err := Start([]string{os.Args[0], "watchdog"}, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func() { fenced <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, fenced
}

func TestClientLearnsOfTheFenceAndWhatItKilled(t *testing.T) {
	t.Parallel()
	c, fenced := startClient(t)
	if pgid, err := syscall.Getpgid(c.Pid()); err != nil || pgid != c.Pid() {
		t.Errorf("the watchdog's process group is %d (%v), want its own, %d", pgid, err, c.Pid())
	}
	spared := startGroup(t)
	c.Until(time.Hour)
	c.Watch(spared.pgid)
	if c.Forget(spared.pgid) {
		t.Error("Forget says the watchdog killed a group before any deadline")
	}
	spared.requireAlive(t)

	g := startGroup(t)
	c.Watch(g.pgid)
	c.Until(time.Millisecond)
	select {
	case <-fenced:
	case <-time.After(30 * time.Second):
		t.Fatal("no fence reported")
	}
	g.waitDead(t)
	if !c.Forget(g.pgid) {
		t.Error("Forget does not say the watchdog killed the group")
	}
}

func TestClosingTheClientEndsTheWatchdog(t *testing.T) {
	t.Parallel()
	c, _ := startClient(t)
	g := startGroup(t)
	c.Watch(g.pgid)
	c.Close()
	g.waitDead(t)
	if err := syscall.Kill(c.Pid(), 0); err == nil {
		t.Errorf("the watchdog %d is still there after Close", c.Pid())
	}
}

func TestStartRefusesWhatIsNoWatchdog(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, argv := range [][]string{{"true"}, {"/nonexistent/jobctl", "watchdog"}, {"sh", "-c", "echo hello"}, nil} {
		if c, err := Start(argv, log, func() {}); err == nil {
			c.Close()
			t.Errorf("Start(%q) = nil error, want one", argv)
		}
	}
}

func TestAWatchdogThatDiesIsReplacedAndToldWhatTheLastKnew(t *testing.T) {
	t.Parallel()
	c, fenced := startClient(t)
	g, forgotten := startGroup(t), startGroup(t)
	c.Until(time.Hour)
	c.Watch(g.pgid)
	c.Watch(forgotten.pgid)
	c.Forget(forgotten.pgid)
	first := c.Pid()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 30*time.Second, "a watchdog to replace the one that was killed", func() bool { return c.Pid() != first })
	if c.Forget(99999999) {
		t.Fatal("the new watchdog says it killed a group it never watched")
	}
	select {
	case <-fenced:
		t.Fatal("the new watchdog fenced although the deadline is an hour away")
	default:
	}
	g.requireAlive(t)

	c.Close()
	g.waitDead(t)
	forgotten.requireAlive(t)
}
