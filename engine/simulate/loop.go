package simulate

import (
	"errors"
	"fmt"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
)

// loop runs rounds the way a node's dispatch loop does — one every
// interval, the next at once after one that placed work — with the jobs
// arriving and ending in between. A round that placed nothing on a cluster
// that has not changed since would place nothing again, so the clock jumps
// from there to the first round after the next arrival or ending. The jobs
// of a run never fail, so no retry's run_after needs waking for.
// It returns the statistics of the last round.
func (s *sim) loop(d *dispatch.Dispatcher) (dispatch.RoundStats, error) {
	trusted := func() bool { return true }
	var (
		last      dispatch.RoundStats
		nextRound time.Duration
		changed   = true // since the last round
		declined  int    // offers declined in the last round
		lastTick  = time.Now()
	)
	for i := 0; ; i++ {
		if i%1024 == 0 {
			if err := s.ctx.Err(); err != nil {
				return last, err
			}
			if s.cfg.Progress != nil && time.Since(lastTick) > 200*time.Millisecond {
				lastTick = time.Now()
				s.cfg.Progress(Progress{Selector: s.cfg.Selector, Submitted: s.arrived, Done: len(s.placements),
					Total: len(s.cfg.Jobs), At: s.now})
			}
		}
		event, pending := s.nextEvent()
		if pending && event <= nextRound {
			if err := s.advance(event); err != nil {
				return last, err
			}
			changed = true
			continue
		}
		if !changed {
			if !pending {
				return last, nil
			}
			// Skip the rounds that would find nothing new. Each would make
			// the last round's offers again (a first child queueing ahead
			// is offered to full nodes), and be declined as often.
			ticks := (event - nextRound + s.cfg.Interval - 1) / s.cfg.Interval
			nextRound += ticks * s.cfg.Interval
			s.declines += int(ticks) * declined
			continue
		}
		s.now = nextRound
		s.clock.Set(s.zero.Add(s.now))
		before := s.declines
		stats, err := d.Round(s.ctx, trusted)
		declined = s.declines - before
		s.rounds++
		if err == nil {
			err = s.err
		}
		if err != nil {
			return last, fmt.Errorf("dispatch round at %s: %w", s.now, err)
		}
		last = stats
		// A job refused for good or taken back changes the store as much
		// as a placement (it may unblock its key), but only a placement
		// brings the next round forward, as on a node.
		changed = stats.Dispatched+stats.Failed > 0
		nextRound += dispatch.NextRound(stats, s.cfg.Interval)
	}
}

// nextEvent is the time of the next arrival or ending.
func (s *sim) nextEvent() (time.Duration, bool) {
	at, ok := s.endings.next()
	if s.arrived < len(s.order) {
		arrival := time.Duration(s.cfg.Jobs[s.order[s.arrived]].SubmitAt)
		if !ok || arrival < at {
			at, ok = arrival, true
		}
	}
	return at, ok
}

// advance moves the clock to t and applies everything due then: endings
// first, then arrivals.
func (s *sim) advance(t time.Duration) error {
	s.now = t
	s.clock.Set(s.zero.Add(t))
	for len(s.endings) > 0 && s.endings[0].at <= t {
		if err := s.end(s.endings.pop()); err != nil {
			return err
		}
	}
	for s.arrived < len(s.order) && time.Duration(s.cfg.Jobs[s.order[s.arrived]].SubmitAt) <= t {
		if _, err := s.submit(s.order[s.arrived]); err != nil {
			return err
		}
		s.arrived++
	}
	return nil
}

// submit creates job i the way `jobctl submit` does.
func (s *sim) submit(i int) (*engine.Job, error) {
	spec := &s.cfg.Jobs[i]
	req := engine.SubmitRequest{Type: spec.Type, Load: spec.Load, Priority: spec.Priority, Key: spec.Key, Creator: "simulate"}
	if spec.Parent != 0 {
		req.ParentID = &s.storeID[s.index[spec.Parent]]
	}
	sub, err := engine.Submit(s.ctx, s.store, s.rows, req)
	if err != nil && req.ParentID != nil && (errors.Is(err, engine.ErrInvalid) || errors.Is(err, engine.ErrNotFound)) {
		// The parent has ended already in this run (and may have been
		// pruned); a real parent submits its children while it runs, so
		// the child goes in on its own.
		req.ParentID = nil
		sub, err = engine.Submit(s.ctx, s.store, s.rows, req)
	}
	if err != nil {
		return nil, &InputError{Source: fmt.Sprintf("job %d", spec.ID), Err: err}
	}
	s.storeID[i] = sub.Job.ID
	if id := int(sub.Job.ID); id >= len(s.byStore) {
		s.byStore = append(s.byStore, make([]int32, id+1-len(s.byStore))...)
	}
	s.byStore[sub.Job.ID] = int32(i)
	return sub.Job, nil
}

// started records a job a node accepted and schedules its end.
func (s *sim) started(n *simNode, run *engine.Job) {
	i := s.byStore[run.ID]
	spec := &s.cfg.Jobs[i]
	n.changed(s.now, s.cfg.Timeline)
	s.maxFactor = max(s.maxFactor, n.load/n.spec.MaxLoad)
	p := Placement{Job: spec.ID, Node: n.spec.Name, StartS: seconds(s.now)}
	if spec.Duration > 0 {
		end := s.now + time.Duration(spec.Duration)
		p.EndS = engine.Ptr(seconds(end))
		s.seq++
		s.endings.push(ending{at: end, seq: s.seq, job: i, run: run, node: n})
	}
	if spec.runningOn != "" {
		return // the cluster placed it, not the run
	}
	s.placements = append(s.placements, p)
	s.waits = append(s.waits, s.now-time.Duration(spec.SubmitAt))
}

// end finishes a run with the engine's outcome transition and frees its load.
func (s *sim) end(e ending) error {
	u := engine.OutcomeUpdate(e.run, engine.RunResult{ExitCode: 0, Outcome: engine.RunSucceeded}, false, s.rng.Float64)
	if _, err := s.store.JobUpdate(s.ctx, u); err != nil {
		return fmt.Errorf("ending job %d: %w", s.cfg.Jobs[e.job].ID, err)
	}
	e.node.books.Release(e.run.ID)
	e.node.changed(s.now, s.cfg.Timeline)
	if s.ended++; s.ended >= pruneEvery {
		// As a cluster's retention does: an ended job's run is recorded
		// in the placements, and the store keeps only what is live, so a
		// run of a million jobs holds no more than its busiest moment.
		// Every id is in the range 1 and up; a range is read in id order,
		// which the store's index of each status already is, where the
		// order of the ends would cost a sort by end time of every ended
		// job. Without a limit the order changes nothing removed.
		s.ended = 0
		if _, err := engine.PurgeJobs(s.ctx, s.store, engine.JobPurgeParams{MinID: 1}); err != nil {
			return fmt.Errorf("pruning ended jobs: %w", err)
		}
	}
	return nil
}

// pruneEvery is how many jobs end between two prunes of the store.
const pruneEvery = 10_000
