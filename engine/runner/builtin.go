package runner

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Builtin is an in-process handler such as noop or sleep. It must return
// soon after ctx is done, and wait while its Gate is closed. An error
// wrapped by Final fails the run for good: the job is not tried again.
type Builtin func(ctx context.Context, s Spec, gate *Gate, out Output) error

// StartBuiltin runs b in its own goroutine and returns at once. Pause and
// Resume close and open its Gate; Cancel and the timeout cancel its context.
// A nil error ends the run Succeeded (exit code 0), an error Failed (exit
// code 1, the error as Reason); a panic is recovered and fails the run
// rather than the node.
func StartBuiltin(s Spec, b Builtin, out Output) (*Run, error) {
	r, err := PrepareBuiltin(s, b, out)
	if err != nil {
		return nil, err
	}
	go r.Execute()
	return r, nil
}

// PrepareBuiltin is StartBuiltin without the goroutine: the run is armed
// (its timeout runs, and Pause, Cancel and Kill act on it) but b is called
// only by Execute, in a goroutine the caller already has. A node that waits
// for each run in a goroutine of its own runs a builtin right there, and
// starts one goroutine fewer for each of thousands of short jobs a second.
func PrepareBuiltin(s Spec, b Builtin, out Output) (*Run, error) {
	if b == nil {
		return nil, errors.New("runner: no builtin handler")
	}
	r := newRun(s, out)
	ctx, cancel := context.WithCancel(context.Background())
	r.start(&builtinControl{handler: b, ctx: ctx, cancel: cancel, out: r.out})
	return r, nil
}

// Execute calls the handler of a run of PrepareBuiltin and returns once the
// run has ended and its Result is set. A run stopped before Execute, by
// Cancel, Kill or its timeout, ends so without calling the handler. Execute
// does nothing for a run of a process, or when called again.
func (r *Run) Execute() {
	bc, ok := r.ctl.(*builtinControl)
	if !ok || !bc.executing.CompareAndSwap(false, true) {
		return
	}
	err := bc.ctx.Err()
	if err == nil {
		err = callBuiltin(bc.ctx, bc.handler, r.spec, &bc.gate, r.out)
	}
	bc.cancel()
	r.finish(builtinEnding(err))
}

func callBuiltin(ctx context.Context, b Builtin, s Spec, gate *Gate, out Output) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return b(ctx, s, gate, out)
}

func builtinEnding(err error) ending {
	switch {
	case err == nil:
		return ending{exitCode: 0, ok: true, reason: "finished"}
	case errors.Is(err, context.Canceled):
		return ending{exitCode: -1, reason: "stopped"}
	default:
		var f *finalError
		return ending{exitCode: 1, reason: err.Error(), final: errors.As(err, &f)}
	}
}

// Final marks a builtin's error as one another attempt cannot mend, such
// as a verdict the handler reached: the job ends FAILED with it at once,
// whatever attempts it has left.
func Final(err error) error { return &finalError{err} }

type finalError struct{ err error }

func (e *finalError) Error() string { return e.err.Error() }
func (e *finalError) Unwrap() error { return e.err }

// builtinControl pauses and stops a builtin through its Gate and context.
type builtinControl struct {
	handler   Builtin
	ctx       context.Context
	executing atomic.Bool // Execute was called
	gate      Gate
	cancel    context.CancelFunc
	out       *trackingOutput
}

func (b *builtinControl) pause() error  { b.gate.set(true); return nil }
func (b *builtinControl) resume() error { b.gate.set(false); return nil }

func (b *builtinControl) terminate(phrase string) {
	b.out.logf("%s, stopping", phrase)
	b.cancel()
	b.gate.set(false)
}

func (b *builtinControl) killNow(phrase string) { b.terminate(phrase) }

// endedOnItsOwn is never true: a builtin's end is its Run's end.
func (b *builtinControl) endedOnItsOwn() bool { return false }

// kill cannot force a goroutine; it only leaves a trace of the stuck handler.
func (b *builtinControl) kill(grace time.Duration) {
	b.out.logf("still running %s after being asked to stop; an in-process handler cannot be killed", grace)
}
