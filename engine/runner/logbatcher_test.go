package runner

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// logStore is a fake flush target that records every write and can fail.
type logStore struct {
	mu      sync.Mutex
	writes  []string
	streams []engine.LogStream // of each write
	fails   int                // the next fails writes return an error
	calls   chan struct{}
}

func newLogStore() *logStore { return &logStore{calls: make(chan struct{}, 100)} }

func (s *logStore) write(_ context.Context, stream engine.LogStream, data []byte) error {
	defer func() { s.calls <- struct{}{} }()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fails > 0 {
		s.fails--
		return errors.New("database unavailable")
	}
	s.writes = append(s.writes, string(data))
	s.streams = append(s.streams, stream)
	return nil
}

func (s *logStore) storedStreams() []engine.LogStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.streams)
}

func (s *logStore) failNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails = n
}

func (s *logStore) stored() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.writes)
}

// waitCalls waits for n more write calls.
func (s *logStore) waitCalls(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-s.calls:
		case <-time.After(hangGuard):
			t.Fatal("the batcher did not write")
		}
	}
}

// newTestBatcher returns a batcher whose ticks the test sends by hand.
func newTestBatcher(t *testing.T, store *logStore, opts LogBatcherOptions) (*LogBatcher, chan time.Time) {
	t.Helper()
	tick := make(chan time.Time)
	opts.Tick = tick
	b := NewLogBatcher(store.write, opts)
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return b, tick
}

func TestLogBatcherFlushesOnTick(t *testing.T) {
	t.Parallel()
	store := newLogStore()
	b, tick := newTestBatcher(t, store, LogBatcherOptions{})
	b.Log(engine.LogOutput, []byte("one\n"))
	b.Log(engine.LogOutput, []byte("two\n"))
	tick <- time.Now()
	store.waitCalls(t, 1)
	if got := store.stored(); !slices.Equal(got, []string{"one\ntwo\n"}) {
		t.Errorf("stored = %q, want one batch", got)
	}
	tick <- time.Now() // nothing buffered: no write
	b.Log(engine.LogOutput, []byte("three\n"))
	tick <- time.Now()
	store.waitCalls(t, 1)
	if got := store.stored(); !slices.Equal(got, []string{"one\ntwo\n", "three\n"}) {
		t.Errorf("stored = %q", got)
	}
}

func TestLogBatcherFlushesEarlyWhenFull(t *testing.T) {
	t.Parallel()
	store := newLogStore()
	b, _ := newTestBatcher(t, store, LogBatcherOptions{FlushBytes: 8})
	b.Log(engine.LogOutput, []byte("0123"))
	b.Log(engine.LogOutput, []byte("456789ab")) // 12 bytes waiting: flush without a tick, in chunks of 8
	store.waitCalls(t, 2)
	if got := store.stored(); !slices.Equal(got, []string{"01234567", "89ab"}) {
		t.Errorf("stored = %q, want chunks of at most 8 bytes", got)
	}
}

func TestLogBatcherCapsTheLog(t *testing.T) {
	t.Parallel()
	store := newLogStore()
	b, _ := newTestBatcher(t, store, LogBatcherOptions{MaxBytes: 10})
	b.Log(engine.LogOutput, []byte("01234"))
	b.Log(engine.LogOutput, []byte("56789abc"))
	b.Log(engine.LogOutput, []byte("dropped\n"))
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The job's bytes are kept as written, up to the cap; the cut is a
	// note of its own.
	want := []string{"0123456789", "log truncated at 10 bytes\n"}
	if got := store.stored(); !slices.Equal(got, want) {
		t.Errorf("stored = %q, want %q", got, want)
	}
	if got := store.storedStreams(); !slices.Equal(got, []engine.LogStream{engine.LogOutput, engine.LogNote}) {
		t.Errorf("streams %q; want output, then the note", got)
	}
}

// TestLogBatcherKeepsStreamsApart: pieces of one stream travel together,
// a change of stream starts another chunk, and the order is kept.
func TestLogBatcherKeepsStreamsApart(t *testing.T) {
	t.Parallel()
	store := newLogStore()
	b, _ := newTestBatcher(t, store, LogBatcherOptions{})
	b.Log(engine.LogOutput, []byte("one "))
	b.Log(engine.LogOutput, []byte("two\n"))
	b.Log(engine.LogProtocol, []byte("jobctl:progress 5\n"))
	b.Log(engine.LogOutput, []byte("three\n"))
	b.Log(engine.LogNote, []byte("paused\n"))
	b.Log(engine.LogNote, []byte("resumed\n"))
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"one two\n", "jobctl:progress 5\n", "three\n", "paused\nresumed\n"}
	streams := []engine.LogStream{engine.LogOutput, engine.LogProtocol, engine.LogOutput, engine.LogNote}
	if got := store.stored(); !slices.Equal(got, want) {
		t.Errorf("stored = %q, want %q", got, want)
	}
	if got := store.storedStreams(); !slices.Equal(got, streams) {
		t.Errorf("streams = %q, want %q", got, streams)
	}
}

func TestLogBatcherCapAtLineEnd(t *testing.T) {
	t.Parallel()
	store := newLogStore()
	b, _ := newTestBatcher(t, store, LogBatcherOptions{MaxBytes: 6})
	b.Log(engine.LogOutput, []byte("hello\n"))
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Log(engine.LogOutput, []byte("more"))
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"hello\n", "log truncated at 6 bytes\n"}
	if got := store.stored(); !slices.Equal(got, want) {
		t.Errorf("stored = %q, want %q", got, want)
	}
}

func TestLogBatcherRetriesFailedWrites(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	store := newLogStore()
	b, tick := newTestBatcher(t, store, LogBatcherOptions{Logger: logger})

	store.failNext(2)
	b.Log(engine.LogOutput, []byte("first\n"))
	if err := b.Flush(context.Background()); err == nil {
		t.Fatal("Flush hid the write error")
	}
	b.Log(engine.LogOutput, []byte("second\n"))
	tick <- time.Now() // fails again in the background
	store.waitCalls(t, 2)
	b.Log(engine.LogOutput, []byte("third\n"))
	if err := b.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got, want := store.stored(), []string{"first\nsecond\nthird\n"}; !slices.Equal(got, want) {
		t.Errorf("stored = %q, want %q: nothing may be lost", got, want)
	}
	if n := bytes.Count(logged.Bytes(), []byte("storing job log failed")); n != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", n, logged.String())
	}
	if !bytes.Contains(logged.Bytes(), []byte("storing job log works again")) {
		t.Errorf("the recovery was not logged:\n%s", logged.String())
	}
}

func TestLogBatcherClose(t *testing.T) {
	t.Parallel()
	store := newLogStore()
	b, _ := newTestBatcher(t, store, LogBatcherOptions{})
	b.Log(engine.LogOutput, []byte("last words\n"))
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Log(engine.LogOutput, []byte("after close\n"))
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := store.stored(); !slices.Equal(got, []string{"last words\n"}) {
		t.Errorf("stored = %q, want only what came before Close", got)
	}
}

func TestLogBatcherCloseReturnsTheError(t *testing.T) {
	t.Parallel()
	store := newLogStore()
	b, _ := newTestBatcher(t, store, LogBatcherOptions{Logger: slog.New(slog.DiscardHandler)})
	b.Log(engine.LogOutput, []byte("kept\n"))
	store.failNext(1)
	if err := b.Close(context.Background()); err == nil {
		t.Fatal("Close hid the write error")
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if got := store.stored(); !slices.Equal(got, []string{"kept\n"}) {
		t.Errorf("stored = %q, want the retried data", got)
	}
}

func TestLogBatcherWithRealTicker(t *testing.T) {
	t.Parallel()
	store := newLogStore()
	b := NewLogBatcher(store.write, LogBatcherOptions{Interval: 10 * time.Millisecond})
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	b.Log(engine.LogOutput, []byte("tick\n"))
	store.waitCalls(t, 1)
	if got := store.stored(); !slices.Equal(got, []string{"tick\n"}) {
		t.Errorf("stored = %q", got)
	}
}
