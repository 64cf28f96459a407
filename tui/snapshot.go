package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
)

// DefaultPageSize is how many jobs one refresh reads for the jobs pane: more
// than a screen holds, few enough that a refresh of a busy cluster stays
// quick.
const DefaultPageSize = 200

// endedPage bounds the ended jobs one refresh reads. Those are the bulk of
// a long-lived table, and for one node they are found only by reading the
// newest jobs until enough are its own, so fewer of them cost less.
const endedPage = 50

// DefaultCountsEvery is how often a Source recounts the jobs per state.
// Counting reads the whole jobs table, which a busy cluster's history makes
// the dearest part of a refresh by far; the other refreshes show the last
// counts.
const DefaultCountsEvery = 5 * time.Second

// Query is what the jobs pane asks for: one node's jobs or the cluster's,
// narrowed by the filter.
type Query struct {
	Node     string // "" for every node
	Statuses []engine.Status
	Types    []string
	// Recount asks for the jobs to be counted now, however recent the last
	// counts: an action has just changed them.
	Recount bool
}

// ParseFilter reads the filter line: each word is a job state (any case) or
// else a job type, as 'jobctl list --state' and '--type' take them.
func ParseFilter(s string) (statuses []engine.Status, types []string) {
	for w := range strings.FieldsSeq(strings.ReplaceAll(s, ",", " ")) {
		if st, err := engine.ParseStatus(w); err == nil {
			if !slices.Contains(statuses, st) {
				statuses = append(statuses, st)
			}
			continue
		}
		if !slices.Contains(types, w) {
			types = append(types, w)
		}
	}
	return statuses, types
}

// Snapshot is the cluster as one refresh read it.
type Snapshot struct {
	At       time.Time // the clock's time of the refresh
	Database string    // where the data comes from, without credentials
	Lease    engine.Lease
	Nodes    []*engine.Node
	// Counts are the jobs per state of the whole cluster, as counted at
	// CountsAt (at most a Source's CountsEvery ago).
	Counts   map[engine.Status]int
	CountsAt time.Time
	// Jobs is one page of the jobs Query selects: those on a node first,
	// then those waiting for one, then the most recently ended.
	Jobs  []*engine.Job
	Query Query
	// Matching is how many jobs the query selects in all, or -1 where that
	// would need a count of its own (one node's jobs, a type filter).
	Matching int
	// LoadsOff are the job types whose declared load is far from what
	// their latest runs used (engine.TypeUsage.Note is set), as measured
	// at CountsAt.
	LoadsOff []engine.TypeUsage
}

// loadOff is the measured use of jobType when its declared load is far
// from it.
func (s *Snapshot) loadOff(jobType string) (engine.TypeUsage, bool) {
	if s == nil {
		return engine.TypeUsage{}, false
	}
	for _, u := range s.LoadsOff {
		if u.Type == jobType {
			return u, true
		}
	}
	return engine.TypeUsage{}, false
}

// runKey names one attempt of one job.
type runKey struct {
	job     int64
	attempt int
}

// live is what the nodes last reported of the runs they run, by job and
// attempt (a node may still report a run it has just lost).
func (s *Snapshot) live() map[runKey]engine.LiveUsage {
	out := map[runKey]engine.LiveUsage{}
	if s == nil {
		return out
	}
	for _, n := range s.Nodes {
		for _, u := range n.RunningUsage {
			out[runKey{u.JobID, u.Attempt}] = u
		}
	}
	return out
}

// dequeued is how many jobs have left the queue in the cluster's history as
// the counts show it: every job not waiting to be dispatched. Its growth
// between two snapshots is the dispatch rate.
func (s *Snapshot) dequeued() int {
	n := 0
	for st, c := range s.Counts {
		if !slices.Contains(engine.QueuedLikeStatuses, st) {
			n += c
		}
	}
	return n
}

// DispatchRate is how many jobs per second left the queue between the
// counts of two snapshots; ok is false when it cannot be told (no earlier
// snapshot, or both show the same counts). Jobs purged in between count
// against it, so a negative figure is shown as 0.
func DispatchRate(prev, cur *Snapshot) (rate float64, ok bool) {
	if prev == nil || cur == nil {
		return 0, false
	}
	dt := cur.CountsAt.Sub(prev.CountsAt).Seconds()
	if dt <= 0 {
		return 0, false
	}
	return max(0, float64(cur.dequeued()-prev.dequeued())/dt), true
}

// FetchFunc reads one snapshot for the query. It is called from a command,
// never from Update or View.
type FetchFunc func(ctx context.Context, q Query) (*Snapshot, error)

// SourceStore is what a Source reads: the cluster and its jobs as Explain
// reads them, and the lease, the logs and the events.
type SourceStore interface {
	dispatch.ExplainStore
	LeaseGet(ctx context.Context) (engine.Lease, error)
	JobLogList(ctx context.Context, p engine.JobLogListParams) ([]engine.LogChunk, error)
	EventList(ctx context.Context, p engine.EventListParams) ([]engine.Event, error)
}

// Source reads snapshots from a store with bounded queries: the nodes, the
// lease, at most PageSize jobs in three indexed reads, and now and then the
// per-state counts. It is used by one dashboard at a time.
type Source struct {
	Store       SourceStore
	Clock       engine.Clock
	Database    string
	PageSize    int           // 0: DefaultPageSize
	CountsEvery time.Duration // 0: DefaultCountsEvery

	mu       sync.Mutex
	counts   map[engine.Status]int
	countsAt time.Time
	loadsOff []engine.TypeUsage
}

// jobCounts returns the counts per state, recounted when older than
// CountsEvery, and the types whose loads are far off, judged again with
// them from the latest runs of the types the nodes offer.
func (s *Source) jobCounts(ctx context.Context, now time.Time, recount bool, nodes []*engine.Node) (map[engine.Status]int, time.Time, []engine.TypeUsage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if recount {
		s.counts = nil
	}
	every := s.CountsEvery
	if every <= 0 {
		every = DefaultCountsEvery
	}
	if s.counts == nil || now.Sub(s.countsAt) >= every || now.Before(s.countsAt) {
		counts, err := s.Store.JobCountByStatus(ctx, engine.JobListParams{})
		if err != nil {
			return nil, time.Time{}, nil, err
		}
		off, err := loadsOff(ctx, s.Store, nodes)
		if err != nil {
			return nil, time.Time{}, nil, err
		}
		s.counts, s.countsAt, s.loadsOff = counts, now, off
	}
	return s.counts, s.countsAt, s.loadsOff, nil
}

// loadsOff judges the declared loads of the types the nodes offer by their
// latest measured runs, and returns those far off.
func loadsOff(ctx context.Context, store SourceStore, nodes []*engine.Node) ([]engine.TypeUsage, error) {
	var types []string
	for _, n := range nodes {
		for _, svc := range n.Services {
			if !slices.Contains(types, svc.Type) {
				types = append(types, svc.Type)
			}
		}
	}
	if len(types) == 0 {
		return nil, nil
	}
	attempts, err := store.JobAttemptUsageList(ctx, engine.JobAttemptUsageParams{Types: types, Runs: engine.DefaultUsageRuns})
	if err != nil {
		return nil, fmt.Errorf("read the measured runs: %w", err)
	}
	var off []engine.TypeUsage
	for _, u := range engine.SummarizeUsage(attempts) {
		if u.Note != "" {
			off = append(off, u)
		}
	}
	return off, nil
}

// The jobs pane's tiers, read in this order until the page is full: the
// jobs a node holds, the jobs waiting for a node, then the ended ones.
var (
	tierOnNode  = []engine.Status{engine.StatusRunning, engine.StatusPaused, engine.StatusCancelling, engine.StatusWaiting}
	tierWaiting = engine.QueuedLikeStatuses
	tierEnded   = []engine.Status{engine.StatusFinished, engine.StatusWarning, engine.StatusFailed, engine.StatusCancelled}
)

// Fetch reads one snapshot.
func (s *Source) Fetch(ctx context.Context, q Query) (*Snapshot, error) {
	page := s.PageSize
	if page <= 0 {
		page = DefaultPageSize
	}
	snap := &Snapshot{At: s.Clock.Now(), Database: s.Database, Query: q}
	var err error
	if snap.Lease, err = s.Store.LeaseGet(ctx); err != nil {
		return nil, fmt.Errorf("read the lease: %w", err)
	}
	if snap.Nodes, err = s.Store.NodeList(ctx); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	if snap.Counts, snap.CountsAt, snap.LoadsOff, err = s.jobCounts(ctx, snap.At, q.Recount, snap.Nodes); err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	params := engine.JobListParams{Node: q.Node, Types: q.Types}
	snap.Matching = -1
	if q.Node == "" && len(q.Types) == 0 {
		snap.Matching = q.count(snap.Counts)
	}
	ended := tierEnded
	if slices.Contains(q.Statuses, engine.StatusDeleted) {
		ended = append(slices.Clip(ended), engine.StatusDeleted)
	}
	for i, tier := range [][]engine.Status{tierOnNode, tierWaiting, ended} {
		if len(snap.Jobs) >= page || (snap.Matching >= 0 && len(snap.Jobs) >= snap.Matching) {
			break
		}
		if i == 1 && q.Node != "" {
			continue // a job waiting for a node is on none
		}
		statuses := tier
		if len(q.Statuses) > 0 {
			statuses = intersect(tier, q.Statuses)
			if len(statuses) == 0 {
				continue
			}
		}
		params.Statuses, params.Limit = statuses, page-len(snap.Jobs)
		if i == 2 {
			params.Limit = min(params.Limit, endedPage)
		}
		jobs, err := s.Store.JobList(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		slices.Reverse(jobs) // newest first within a tier
		snap.Jobs = append(snap.Jobs, jobs...)
	}
	return snap, nil
}

// count is how many of the counted jobs the query's states select. As in
// 'jobctl list', DELETED jobs are left out unless the filter names them.
func (q Query) count(counts map[engine.Status]int) int {
	n := 0
	for st, c := range counts {
		if slices.Contains(q.Statuses, st) || (len(q.Statuses) == 0 && st != engine.StatusDeleted) {
			n += c
		}
	}
	return n
}

func intersect(a, b []engine.Status) []engine.Status {
	var out []engine.Status
	for _, s := range a {
		if slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}
