package dispatch

import (
	"errors"
	"log/slog"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/placement"
)

// place offers one job to its candidates in order until one accepts, and
// counts why it waits when none does.
func (r *round) place(job *engine.Job) error {
	r.stats.Considered++
	_, kept := r.keptBy[job.ID]
	if !kept && r.full(job) {
		r.stats.wait(string(placement.CauseBusy))
		r.stats.Skipped++
		return nil
	}
	if _, err := r.candidates(r.ctx, &r.p, job, false); err != nil {
		return err
	}
	if len(r.p.Eligible) == 0 {
		if r.p.NeverRunnable() {
			r.stats.wait(WaitNeverRunnable)
		} else {
			r.stats.wait(string(r.p.WaitCause()))
		}
		return r.keep(job)
	}
	now := r.clock.Now()
	order := r.firstChoice(job, now)
	origin, offered := job.Status, false
	for i := 0; ; i++ {
		if i == len(order) && i < len(r.p.Eligible) {
			// The first choice did not take it: the others, in order.
			order = append(order, r.selector.(placement.Picker).Rest(job, r.p.Eligible, order[0], now)...)
		}
		if i == len(order) {
			break
		}
		n := order[i]
		if r.unreachable[n.Name] {
			continue
		}
		if !r.trusted() {
			return r.putBack(job, origin, ErrUntrusted)
		}
		marked, err := r.Dispatcher.store.JobUpdate(r.ctx, engine.DispatchUpdate(job, n.Name))
		if errors.Is(err, engine.ErrConflict) || errors.Is(err, engine.ErrNotFound) {
			return nil // changed meanwhile (cancelled, paused): nothing to place
		}
		if err != nil {
			return err
		}
		job = marked
		res := r.offerer.OfferBatch(r.ctx, n, []engine.DispatchOffer{{
			JobID: job.ID, Attempt: job.Attempt, Version: job.Version, Type: job.Type, Load: job.Load,
		}})[0]
		if r.log.Enabled(r.ctx, slog.LevelDebug) {
			r.log.Debug("offered job", "job", job.ID, "target", n.Name, "verdict", res.Verdict, "reason", res.Reason)
		}
		switch res.Verdict {
		case engine.OfferAccepted:
			return r.accepted(job, n)
		case engine.OfferRefused:
			if _, err := r.Dispatcher.store.JobUpdate(r.ctx, engine.RefuseUpdate(job, n.Name, res.Reason)); err != nil && !errors.Is(err, engine.ErrConflict) {
				return err
			}
			r.stats.Failed++
			return r.unkeep(job.ID)
		case engine.OfferGone, engine.OfferUnknownJob:
			return nil
		case engine.OfferError:
			r.unreachable[n.Name] = true
			r.log.Warn("node did not answer an offer", "target", n.Name, "job", job.ID, "err", res.Reason)
		default:
			offered = true // declined: the next candidate
		}
	}
	if offered {
		r.stats.wait(WaitDeclined)
	} else {
		r.stats.wait(WaitUnreachable)
	}
	if err := r.keep(job); err != nil {
		return err
	}
	return r.putBack(job, origin, nil)
}

// firstChoice is the start of the order the job is offered in: the first
// node alone when the selector can pick it without ordering the rest
// (placement.Picker), else the whole order.
func (r *round) firstChoice(job *engine.Job, now time.Time) []*engine.Node {
	if p, ok := r.selector.(placement.Picker); ok {
		r.best[0] = p.Pick(job, r.p.Eligible, now)
		return r.best[:1:1] // a decline appends the rest to a new array
	}
	return r.selector.Order(job, r.p.Eligible, now)
}

// accepted books a job a node took.
func (r *round) accepted(job *engine.Job, n *engine.Node) error {
	n.Load += job.Load
	n.Running++
	r.room.changed()
	if job.ParentID != nil {
		r.siblingsRunning[*job.ParentID] = true
	}
	r.stats.Dispatched++
	return r.unkeep(job.ID)
}

// putBack returns a job no node took to the state it was dispatched from.
func (r *round) putBack(job *engine.Job, origin engine.Status, cause error) error {
	if job.Status != engine.StatusDispatching {
		return cause
	}
	if _, err := r.Dispatcher.store.JobUpdate(r.ctx, engine.PutBackUpdate(job, origin)); err != nil && !errors.Is(err, engine.ErrConflict) {
		return err
	}
	return cause
}
