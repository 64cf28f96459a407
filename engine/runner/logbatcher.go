package runner

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// Defaults of LogBatcherOptions.
const (
	DefaultLogInterval   = 250 * time.Millisecond
	DefaultLogFlushBytes = 64 << 10
	DefaultLogMaxBytes   = 10 << 20
)

// logFlushTimeout bounds one background flush, so a hung database cannot
// stall the batcher forever; the data stays buffered for the next try.
const logFlushTimeout = 30 * time.Second

// LogBatcherOptions tune a LogBatcher; zero fields take the defaults.
type LogBatcherOptions struct {
	// Interval between background flushes (DefaultLogInterval).
	Interval time.Duration
	// FlushBytes flushes early once this much is buffered, and is the
	// largest chunk written at once (DefaultLogFlushBytes).
	FlushBytes int
	// MaxBytes caps a job's log; the rest is dropped after one marker line
	// (DefaultLogMaxBytes).
	MaxBytes int64
	// Tick, if set, replaces the Interval ticker (tests drive it by hand).
	Tick <-chan time.Time
	// Logger reports failing writes (slog.Default()).
	Logger *slog.Logger
}

// LogBatcher collects a job's log and writes it through write in batches:
// every Interval, or sooner once FlushBytes are waiting. Each write is of
// one stream: consecutive pieces of a stream travel together, and a change
// of stream starts another chunk, so the streams stay apart in the order
// they came. A failed write keeps its data for the next flush; the failure
// is logged once until a write succeeds again. Log never blocks on the
// write. Methods are safe for concurrent use.
type LogBatcher struct {
	write  func(ctx context.Context, stream engine.LogStream, data []byte) error
	opts   LogBatcherOptions
	logger *slog.Logger

	mu        sync.Mutex
	buf       []logPiece // waiting to be written, in order
	buffered  int        // bytes in buf
	kept      int64      // bytes accepted so far, the truncation note excluded
	truncated bool
	closed    bool
	failing   bool // the last write failed and was reported

	// flushMu allows one flush at a time, so the head of buf being written
	// is not moved underneath it (Log only appends).
	flushMu sync.Mutex

	full      chan struct{} // FlushBytes are waiting
	stop      chan struct{}
	loopDone  chan struct{}
	closeOnce sync.Once
}

// logPiece is buffered log of one stream.
type logPiece struct {
	stream engine.LogStream
	data   []byte
}

// NewLogBatcher starts a batcher that hands data to write, which must not
// keep data after returning. Call Close when the job has ended.
func NewLogBatcher(write func(ctx context.Context, stream engine.LogStream, data []byte) error, opts LogBatcherOptions) *LogBatcher {
	if opts.Interval <= 0 {
		opts.Interval = DefaultLogInterval
	}
	if opts.FlushBytes <= 0 {
		opts.FlushBytes = DefaultLogFlushBytes
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultLogMaxBytes
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	b := &LogBatcher{
		write:    write,
		opts:     opts,
		logger:   logger,
		full:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		loopDone: make(chan struct{}),
	}
	tick := opts.Tick
	var ticker *time.Ticker
	if tick == nil {
		ticker = time.NewTicker(opts.Interval)
		tick = ticker.C
	}
	go func() {
		defer close(b.loopDone)
		if ticker != nil {
			defer ticker.Stop()
		}
		b.loop(tick)
	}()
	return b
}

// Log buffers p of stream. Past MaxBytes, whatever the stream, it adds one
// "log truncated at N bytes" note and drops everything after; after Close
// it drops p.
func (b *LogBatcher) Log(stream engine.LogStream, p []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.truncated {
		return
	}
	if room := b.opts.MaxBytes - b.kept; int64(len(p)) > room {
		p, b.truncated = p[:room], true
	}
	if len(p) > 0 {
		b.add(stream, p)
		b.kept += int64(len(p))
	}
	if b.truncated {
		b.add(engine.LogNote, fmt.Appendf(nil, "log truncated at %d bytes\n", b.opts.MaxBytes))
	}
	if b.buffered >= b.opts.FlushBytes {
		select {
		case b.full <- struct{}{}:
		default: // a flush is already due
		}
	}
}

// add appends p to the last piece when it is of the same stream, else as
// a piece of its own.
func (b *LogBatcher) add(stream engine.LogStream, p []byte) {
	if n := len(b.buf); n > 0 && b.buf[n-1].stream == stream {
		b.buf[n-1].data = append(b.buf[n-1].data, p...)
	} else {
		b.buf = append(b.buf, logPiece{stream: stream, data: bytes.Clone(p)})
	}
	b.buffered += len(p)
}

// Flush writes everything buffered, a stream's run at a time in chunks of
// at most FlushBytes, and returns the first error; what was not written
// stays for the next flush.
func (b *LogBatcher) Flush(ctx context.Context) error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	for {
		b.mu.Lock()
		if len(b.buf) == 0 {
			b.mu.Unlock()
			return nil
		}
		head := b.buf[0]
		n := min(len(head.data), b.opts.FlushBytes)
		chunk := bytes.Clone(head.data[:n])
		b.mu.Unlock()
		err := b.write(ctx, head.stream, chunk)
		b.mu.Lock()
		if err == nil {
			// Log appends to the last piece only, which may be this one:
			// cut what was written from it as it is now.
			b.buf[0].data = b.buf[0].data[n:]
			if len(b.buf[0].data) == 0 {
				b.buf = b.buf[1:]
			}
			b.buffered -= n
		}
		wasFailing := b.failing
		b.failing = err != nil
		b.mu.Unlock()
		switch {
		case err != nil && !wasFailing:
			b.logger.Warn("storing job log failed; keeping it for the next try", "err", err)
		case err == nil && wasFailing:
			b.logger.Info("storing job log works again")
		}
		if err != nil {
			return err
		}
	}
}

// Close stops the background flushes and writes what is left; Log drops
// anything after. If that last write fails Close returns the error, and
// calling Close again tries again.
func (b *LogBatcher) Close(ctx context.Context) error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		close(b.stop)
		<-b.loopDone
	})
	return b.Flush(ctx)
}

// loop flushes on every tick, and early when the buffer fills up, except
// while writes fail: then only the ticks retry, so a full buffer does not
// hammer a struggling database.
func (b *LogBatcher) loop(tick <-chan time.Time) {
	for {
		select {
		case <-b.stop:
			return
		case <-tick:
			b.flushInBackground()
		case <-b.full:
			b.mu.Lock()
			failing := b.failing
			b.mu.Unlock()
			if !failing {
				b.flushInBackground()
			}
		}
	}
}

func (b *LogBatcher) flushInBackground() {
	ctx, cancel := context.WithTimeout(context.Background(), logFlushTimeout)
	defer cancel()
	_ = b.Flush(ctx) // a failure is logged by Flush and retried at the next tick
}
