package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// feedInterval is how often a run of a fixed duration tops up its jobs.
const feedInterval = 50 * time.Millisecond

// lookSpacing bounds what the run's own counting costs the database: a
// look waits at least this many times as long as the last one took. A look
// counts the run's jobs that have not ended, so with a queue of a million
// it takes a second or more, and once a second it would take a core of
// the machine the engine is measured on; the figures come from the jobs'
// own timestamps, so how often the run looks does not change them.
const lookSpacing = 20

// summaryPage is how many ids one read of the run's jobs spans when the
// figures are summed up, so a run of a million jobs never holds them all.
const summaryPage = 10000

// runStore is what a run reads and writes itself, beside the nodes it
// starts on Config.Store: the progress of its jobs, its nodes and the
// cleanup of both.
type runStore interface {
	engine.NodeRemover
	Dialect() string
	NodeList(ctx context.Context) ([]*engine.Node, error)
	JobList(ctx context.Context, p engine.JobListParams) ([]*engine.Job, error)
	JobCountByStatus(ctx context.Context, p engine.JobListParams) (map[engine.Status]int, error)
	JobTimes(ctx context.Context, p engine.JobListParams) ([]engine.JobTimes, error)
	JobUpdateMany(ctx context.Context, us []engine.JobUpdate) ([]engine.JobUpdateResult, error)
	JobPurge(ctx context.Context, p engine.JobPurgeParams) (engine.JobPurgeResult, error)
}

// run is the state of one benchmark run.
type run struct {
	cfg      *Config
	store    runStore
	feeder   *feeder
	fleet    *fleet // nil with --cluster
	capacity int    // jobs the working nodes run at once

	// Of the last look at the counts.
	done     int
	active   int // not ended
	counted  int // jobs inserted when it looked
	lastDone time.Time
	lastLook time.Time
	lookGap  time.Duration // between the last two looks
	// How long the last look took, and when it ended, on this machine's
	// own clock (the configured one may stand still in a test).
	lookTook  time.Duration
	lookEnded time.Time
	rate      float64 // jobs ended per second between the last two looks
	started   time.Time

	settled    bool
	removed    int // jobs the clean-up removed so far
	cleanupErr error
}

// Run runs one benchmark and returns what it measured. Once the figures
// are known it hands them to cfg.Measured, before the clean-up: its jobs
// are removed afterwards (unless cfg.Keep), and its nodes, whether it
// ends, fails or ctx is cancelled (an interrupt: what is queued is
// cancelled, the nodes are stopped, and Run returns ctx's error once
// everything is removed). A clean-up that fails is Run's error, with the
// figures still returned.
func Run(ctx context.Context, config Config) (res *Result, err error) {
	if err := config.Validate(); err != nil {
		return nil, err
	}
	if config.Store == nil {
		return nil, errors.New("bench: no store")
	}
	cfg := config.withDefaults()
	r := &run{cfg: &cfg, store: cfg.Store, feeder: newFeeder(cfg.Store, cfg.Creator)}
	res = &Result{Mode: cfg.mode(), Dialect: cfg.Store.Dialect(), Nodes: cfg.Nodes}
	if err := r.survey(ctx, res); err != nil {
		return nil, err
	}
	measured := false
	defer func() {
		if cerr := r.cleanUp(); cerr != nil && err == nil {
			err = cerr
			if !measured {
				res = nil
			}
		}
	}()
	var s span
	if cfg.BurnDown > 0 {
		s, err = r.burnDown(ctx)
	} else {
		s, err = r.continuous(ctx)
	}
	r.settle()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err() // whatever the store made of it, the run was interrupted
		}
		return nil, err
	}
	if err := r.summarize(context.WithoutCancel(ctx), res, s, cfg.BurnDown > 0); err != nil {
		return nil, err
	}
	measured = true
	if cfg.Measured != nil {
		if err := cfg.Measured(res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// summarize reads the run's jobs a page of ids at a time and fills res
// with the figures of span s; a burn-down's span ends with its last job.
func (r *run) summarize(ctx context.Context, res *Result, s span, burnDown bool) error {
	if burnDown {
		s.to = time.Unix(1<<40, 0) // every end counts; the span is cut at the last below
	}
	var t tally
	ids := r.feeder.ids
	for from := ids.first; !ids.empty() && from <= ids.last; from += summaryPage {
		jobs, err := r.store.JobTimes(ctx, engine.JobListParams{Creator: r.cfg.Creator, MinID: from,
			MaxID: min(from+summaryPage-1, ids.last)})
		if err != nil {
			return err
		}
		t.add(jobs, s)
	}
	if burnDown {
		s.to = s.from // nothing ended: an empty span
		if t.lastEnd.After(s.from) {
			s.to = t.lastEnd
		}
	}
	t.fill(res, s)
	return nil
}

// survey reads the cluster before the run: with --cluster, the nodes that
// will do the work (refusing when none can); else the other nodes that will
// take part beside the benchmark's own.
func (r *run) survey(ctx context.Context, res *Result) error {
	nodes, err := r.store.NodeList(ctx)
	if err != nil {
		return err
	}
	workers, dispatchers := 0, 0
	for _, n := range nodes {
		if n.State != engine.NodeOnline || n.Maintenance {
			continue
		}
		if n.Candidate {
			dispatchers++
		}
		if n.Offers(engine.TypeNoop) {
			workers++
			r.capacity += n.MaxJobs
		}
	}
	if !r.cfg.Cluster {
		res.OtherNodes = workers
		r.capacity += r.cfg.Nodes * r.cfg.MaxJobs
		return nil
	}
	if workers == 0 || dispatchers == 0 {
		return ErrNoClusterNode
	}
	res.Nodes = workers
	return nil
}

// startWork starts the benchmark's own nodes, unless the cluster works.
func (r *run) startWork() error {
	if r.cfg.Cluster {
		return nil
	}
	f, err := startFleet(r.cfg)
	if err != nil {
		return err
	}
	r.fleet = f
	return nil
}

// nodeFailed delivers the error of one of our nodes that stopped by itself.
func (r *run) nodeFailed() <-chan error {
	if r.fleet == nil {
		return nil
	}
	return r.fleet.failed
}

// burnDown inserts all jobs, then starts the nodes and waits until every
// job has ended. The span starts just before the nodes do; Run ends it at
// the last job's end.
func (r *run) burnDown(ctx context.Context) (span, error) {
	r.started = r.cfg.Clock.Now()
	err := r.feeder.insert(ctx, r.cfg.BurnDown, func() { r.report(PhaseInserting) })
	if err != nil {
		return span{}, err
	}
	from, err := r.store.Now(ctx)
	if err != nil {
		return span{}, err
	}
	if err := r.startWork(); err != nil {
		return span{}, err
	}
	r.started, r.lastDone, r.lastLook = r.cfg.Clock.Now(), r.cfg.Clock.Now(), r.cfg.Clock.Now()
	tick := time.NewTicker(r.cfg.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return span{}, ctx.Err()
		case err := <-r.nodeFailed():
			return span{}, err
		case <-tick.C:
		}
		if !r.lookDue() {
			continue
		}
		if err := r.look(ctx); err != nil {
			return span{}, err
		}
		r.report(PhaseWorking)
		if r.done >= r.cfg.BurnDown {
			return span{from: from}, nil
		}
		if err := r.stalled(); err != nil {
			return span{}, err
		}
	}
}

// continuous starts the nodes and inserts while they work, for the
// configured duration: at the offered rate from the start, or keeping a
// bounded backlog, which is filled before the nodes start so that they find
// a full queue from their first round on.
func (r *run) continuous(ctx context.Context) (span, error) {
	r.started = r.cfg.Clock.Now()
	if r.cfg.Rate == 0 {
		if err := r.feeder.insert(ctx, backlogFor(r.capacity, 0, 0), func() { r.report(PhaseInserting) }); err != nil {
			return span{}, err
		}
	}
	from, err := r.store.Now(ctx)
	if err != nil {
		return span{}, err
	}
	if err := r.startWork(); err != nil {
		return span{}, err
	}
	r.started, r.lastDone, r.lastLook = r.cfg.Clock.Now(), r.cfg.Clock.Now(), r.cfg.Clock.Now()
	end := time.NewTimer(r.cfg.Duration)
	defer end.Stop()
	feed := time.NewTicker(feedInterval)
	defer feed.Stop()
	for {
		select {
		case <-ctx.Done():
			return span{}, ctx.Err()
		case err := <-r.nodeFailed():
			return span{}, err
		case <-end.C:
			to, err := r.store.Now(ctx)
			return span{from: from, to: to}, err
		case <-feed.C:
		}
		now := r.cfg.Clock.Now()
		if now.Sub(r.lastLook) >= r.cfg.PollInterval && r.lookDue() {
			if err := r.look(ctx); err != nil {
				return span{}, err
			}
			r.report(PhaseWorking)
			if err := r.stalled(); err != nil {
				return span{}, err
			}
		}
		n := 0
		if r.cfg.Rate > 0 {
			n = due(r.cfg.Rate, now.Sub(r.started)) - r.feeder.inserted
		} else {
			n = backlogFor(r.capacity, r.rate, r.lookGap) - r.waiting(now)
		}
		// One tick inserts a bounded amount, so the end of the run and an
		// interrupt are noticed on time even when inserts fall behind.
		if err := r.feeder.insert(ctx, min(n, 10*insertBatch), nil); err != nil {
			return span{}, err
		}
	}
}

// waiting is how many of the run's jobs have not ended by now, as far as
// the run can tell: those the last look counted, less those that ended
// since at the rate it measured. The run learns of ends only when it
// looks, and on a busy machine its looks are seconds apart (lookDue); a
// run that counted on the last look alone saw no job end until the next,
// and its queue ran empty in between, so that it measured how fast it fed
// the engine. Should the engine slow down, what it inserts too many meanwhile
// waits in the queue, and the next look corrects the count.
func (r *run) waiting(now time.Time) int {
	ended := int(r.rate * now.Sub(r.lastLook).Seconds())
	return max(0, r.feeder.inserted-r.done-ended)
}

// liveStatuses are the states of jobs that have not ended.
var liveStatuses = slices.DeleteFunc(slices.Clone(engine.AllStatuses), engine.Status.Terminal)

// look reads how many of the run's jobs have ended.
func (r *run) look(ctx context.Context) error {
	// Only the live jobs are counted, within the run's ids, through the
	// index of live jobs: the run inserted all of its jobs itself, and the
	// rest have ended. Counting the ended ones too read the whole table
	// every look, which on a table of a million ended jobs slowed the
	// engine being measured.
	began := time.Now()
	counts, err := r.store.JobCountByStatus(ctx, r.own(engine.JobListParams{Statuses: liveStatuses}))
	if err != nil {
		return err
	}
	r.lookEnded = time.Now()
	r.lookTook = r.lookEnded.Sub(began)
	active := 0
	for _, n := range counts {
		active += n
	}
	done, total := r.feeder.inserted-active, r.feeder.inserted
	now := r.cfg.Clock.Now()
	if dt := now.Sub(r.lastLook); dt > 0 && !r.lastLook.IsZero() {
		r.rate, r.lookGap = float64(done-r.done)/dt.Seconds(), dt
	}
	if done > r.done {
		r.lastDone = now
	}
	r.done, r.active, r.counted, r.lastLook = done, total-done, total, now
	return nil
}

// lookDue reports whether lookSpacing times as long as the last look took
// has passed since it ended; a quarter of the stall timeout at most, so a
// slow look never keeps the run from seeing progress in time. A burn-down
// also looks once its jobs should all have ended at the rate of the last
// two looks: its first looks count a long queue and are slow, and spaced by
// them it saw the end of a million jobs 8 s late, a wait before the figures
// that measured nothing. Near the end a look counts few jobs and is cheap.
func (r *run) lookDue() bool {
	wait := min(lookSpacing*r.lookTook, r.cfg.StallTimeout/4)
	if r.cfg.BurnDown > 0 && r.rate > 0 {
		wait = min(wait, time.Duration(float64(r.active)/r.rate*float64(time.Second)))
	}
	return time.Since(r.lookEnded) >= wait
}

// stalled fails a run in which jobs wait but none has ended for the stall
// timeout: nothing is working the queue.
func (r *run) stalled() error {
	if r.active == 0 {
		r.lastDone = r.cfg.Clock.Now()
		return nil
	}
	if quiet := r.cfg.Clock.Now().Sub(r.lastDone); quiet >= r.cfg.StallTimeout {
		return fmt.Errorf("no benchmark job ended for %s while %d waited; is a node of the cluster dispatching?",
			quiet.Round(time.Second), r.active)
	}
	return nil
}

func (r *run) report(phase string) {
	if r.cfg.Progress == nil {
		return
	}
	elapsed := r.cfg.Clock.Now().Sub(r.started)
	p := Progress{Phase: phase, Inserted: r.feeder.inserted, Done: r.done, Total: r.cfg.BurnDown, Removed: r.removed,
		Elapsed: elapsed}
	if phase == PhaseWorking && elapsed > 0 {
		p.Rate = float64(r.done) / elapsed.Seconds()
	}
	r.cfg.Progress(p)
}
