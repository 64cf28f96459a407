package commands

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/waitfor"
)

func TestTopParsesItsFlags(t *testing.T) {
	cases := []struct {
		args []string
		want time.Duration
	}{
		{nil, time.Second},
		{[]string{"--interval", "5s"}, 5 * time.Second},
		{[]string{"--interval", "250ms"}, 250 * time.Millisecond},
	}
	for _, c := range cases {
		ios, _, _ := TestIO("")
		ios.OutIsTerminal = true
		f := NewFactory(ios)
		var got *TopOptions
		cmd := NewCmdTop(f, func(_ context.Context, o *TopOptions) error { got = o; return nil })
		if err := execParse(cmd, c.args...); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got.Interval != c.want {
			t.Errorf("%v: interval %s, want %s", c.args, got.Interval, c.want)
		}
	}
}

func TestTopRefusesBadUsage(t *testing.T) {
	cases := []struct {
		args     []string
		terminal bool
		want     string
	}{
		{[]string{"--interval", "0s"}, true, "invalid --interval 0s: must be positive"},
		{[]string{"--interval", "-1s"}, true, "invalid --interval -1s"},
		{[]string{"--interval", "soon"}, true, "invalid argument"},
		{[]string{"extra"}, true, "too many arguments"},
		{nil, false, "jobctl top needs a terminal; to follow jobs from a script use 'jobctl list -w'"},
	}
	for _, c := range cases {
		ios, _, _ := TestIO("")
		ios.OutIsTerminal = c.terminal
		f := NewFactory(ios)
		ran := false
		cmd := NewCmdTop(f, func(context.Context, *TopOptions) error { ran = true; return nil })
		err := execParse(cmd, c.args...)
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v (terminal %v): %v, want a usage error with %q", c.args, c.terminal, err, c.want)
		}
		if ran {
			t.Errorf("%v: ran despite the error", c.args)
		}
	}
}

// lockedBuffer is a buffer the program writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startTop runs `jobctl top` on the environment's database with a terminal
// that is a pipe in and a buffer out, and waits until it shows want.
func startTop(t *testing.T, ctx context.Context, e *testEnv, want string) (keys io.Writer, out *lockedBuffer, done chan error) {
	t.Helper()
	in, keysW := io.Pipe()
	t.Cleanup(func() { _ = keysW.Close() })
	out = &lockedBuffer{}
	ios := &IOStreams{In: in, Out: out, ErrOut: io.Discard, OutIsTerminal: true, NoColor: true}
	opts := &TopOptions{IO: ios, Store: e.f.Store, Clock: e.f.Clock, Interval: 50 * time.Millisecond}
	done = make(chan error, 1)
	go func() { done <- topRun(ctx, opts) }()
	if !waitfor.Within(20*time.Second, func() bool {
		select {
		case err := <-done:
			t.Fatalf("top ended early: %v\n%s", err, out.String())
		default:
		}
		return strings.Contains(out.String(), want)
	}) {
		t.Fatalf("top never showed %q:\n%q", want, out.String())
	}
	return keysW, out, done
}

func waitDone(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("top did not end")
	}
	return nil
}

func TestTopShowsTheClusterAndQuitsOnQ(t *testing.T) {
	e := newTestEnv(t)
	e.node(t, "worker-1", 4, nil)
	j := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep})
	keys, out, done := startTop(t, context.Background(), e, "worker-1")
	if _, err := keys.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	if err := waitDone(t, done); err != nil {
		t.Fatalf("q: %v", err)
	}
	// The stream holds what changed between frames, so a figure that
	// changed after the first frame ("Nodes (0)" to "(1)") may appear only
	// in part; the words drawn once are there whole.
	s := out.String()
	for _, want := range []string{"sqlite:", "QUEUED", "Nodes", "worker-1"} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	if !strings.Contains(s, "sleep") || j.Status != engine.StatusQueued {
		t.Errorf("job not shown")
	}
}

func TestTopEndsWhenInterrupted(t *testing.T) {
	e := newTestEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, _, done := startTop(t, ctx, e, "Nodes (0)")
	cancel()
	if err := waitDone(t, done); !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted top returned %v, want context.Canceled", err)
	}
}
