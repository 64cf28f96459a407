package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Store is the cluster's single source of truth. Methods read noun-then-verb
// and take a params struct where there is more than one argument. Every
// method is safe for concurrent use. Timestamps the store sets come from the
// database's clock.
//
// Implementations: the SQL store (engine/dbstore: SQLite, PostgreSQL,
// MariaDB/MySQL) and the in-memory store (engine/memstore) that the
// simulator and the fast tests use. The conformance suite (engine/storetest)
// holds them to the same behaviour.
type Store interface {
	TxStore

	// Dialect names the backend: "sqlite", "postgres", "mysql" or "memory".
	Dialect() string
	// Migrate applies pending migrations under a lock, so nodes starting
	// together do not race.
	Migrate(ctx context.Context) error
	// MigrationStatus lists every known migration and whether it is applied.
	MigrationStatus(ctx context.Context) ([]Migration, error)
	// SchemaCurrent reports, in one cheap read, whether every migration
	// this jobctl knows is applied (a newer jobctl's too): what a command
	// asks before it works on the database. False, or an error, for a
	// database without the schema or with an older one: MigrationStatus
	// then says more.
	SchemaCurrent(ctx context.Context) (bool, error)
	// JobSubmit creates one job as JobInsert does and records p.Event for
	// it, in one statement where the backend allows, else in one
	// transaction: what p leaves to the services (ServiceLoad,
	// ServiceTimeout, ServiceMemory) comes from the settings the
	// registered nodes give the job's type, picked as ServiceDefaults
	// picks them, and the result says what the nodes offer the type. It
	// returns the id; JobGet reads the job. Invalid fields or an invalid
	// event are an *InvalidError, a ParentID that names no job a
	// *NotFoundError, and nothing is written.
	JobSubmit(ctx context.Context, p JobSubmitParams) (JobSubmitted, error)
	Close() error

	// Tx runs fn in one transaction: every change fn makes through tx is
	// kept if fn returns nil and none is kept otherwise. fn must use only
	// tx, not the Store, until it returns; it may be run again when the
	// database aborts the transaction to break a deadlock, so it must have
	// no other side effects.
	Tx(ctx context.Context, fn func(tx TxStore) error) error
	// JobProgressSet records progress of a running attempt; ErrConflict when
	// the job has moved on (another attempt, another node, or ended).
	JobProgressSet(ctx context.Context, p JobProgressParams) error
	// JobUpdateManyQuiet is JobUpdateMany for a caller that needs only
	// whether each transition applied: the results carry no Job, which
	// spares reading every changed row back (a node recording results).
	JobUpdateManyQuiet(ctx context.Context, us []JobUpdate) ([]JobUpdateResult, error)
	// JobStartMany is JobUpdateMany for a node starting the jobs it took:
	// each result's Job is only what the node runs the job by
	// (Job.Started), which spares reading the rest of every row back.
	JobStartMany(ctx context.Context, us []JobUpdate) ([]JobUpdateResult, error)
	// JobCountByStatus counts the jobs matching p (Limit ignored) per
	// status; statuses with none are absent.
	JobCountByStatus(ctx context.Context, p JobListParams) (map[Status]int, error)
	// JobTimes returns the status and times of every job matching p, in
	// no order (Limit, Sort and Brief ignored): a summary of many jobs
	// that needs no other field.
	JobTimes(ctx context.Context, p JobListParams) ([]JobTimes, error)
	// JobPurge removes, in one transaction, the jobs p.Choose picks among
	// the ended jobs (terminal statuses only, enforced) matching p, with
	// their logs, attempts, events and reservations. With a Limit it reads
	// the Limit candidates that ended first (ties by id; within a range of
	// ids, MinID and MaxID, the lowest ids), after p.After when set, hands
	// them to Choose with those of them that have a child that is no
	// candidate (pinned), and returns how many it removed and where it
	// stopped, for the next batch; when Choose picks none of that window
	// it hands Choose every candidate instead, so a purge in batches always
	// moves on. Without a Limit it hands Choose every candidate. A picked
	// job that is no longer ended at the delete stays. With DryRun it
	// removes nothing and counts what Choose picked. Which jobs may go is
	// PurgeJobs' to judge (PurgeSelect).
	JobPurge(ctx context.Context, p JobPurgeParams) (JobPurgeResult, error)
	// JobListDispatchable returns one page of one queue: the jobs of type
	// Type with status Status (QUEUED or RESTART) whose run_after has
	// passed on the database clock and that their key does not block, in
	// dispatch order (QueuePlace: higher priority first, then lower id),
	// after the place After, at most Limit of them, and of those only the
	// ones whose load is in the range asked for (MaxLoad, LoadAbove) and,
	// with FirstChildren, only children whose parent has no child holding
	// load (Job.HoldsLoad). A job with a key is blocked while any other
	// job of that key is earlier in the key's order (Job.KeyBefore) and
	// not terminal or waiting for its rollback job (Job.RollbackPending),
	// or active whatever its place: RUNNING, CANCELLING or WAITING, or
	// PAUSED on a node. The second rule keeps a requeued old
	// job from running beside a later job of its key.
	//
	// A page costs what it returns and the jobs of the queue it passes
	// over that cannot start now, never the jobs outside the load range:
	// a dispatcher asks only for what can fit. Of each job only what
	// placement and a claim's guard need is read (Job.Queued); other
	// fields may be zero. The in-memory store returns its own jobs, not
	// copies: the caller must not change them. A claim or start returns
	// the full job.
	JobListDispatchable(ctx context.Context, p JobDispatchableParams) ([]*Job, error)
	// JobQueueLoads describes every non-empty queue (a dispatchable status
	// and a type) at a cost that does not grow with its length: the
	// lightest and heaviest load of its jobs and whether any has a parent.
	// Every job that JobListDispatchable could list is counted; a job that
	// cannot start now (its run_after, its key) may be counted too, so the
	// figures bound what a page finds without promising it. Ordered by
	// status (RESTART first) and type.
	JobQueueLoads(ctx context.Context) ([]QueueLoads, error)

	// JobAttemptUsageList returns, for each job type (p.Types, or every
	// type), the newest p.Runs ended attempts that were measured, with the
	// type and load of their job, newest first within a type; types in no
	// particular order. Named types cost one indexed read each; every type
	// reads the whole table of attempts.
	JobAttemptUsageList(ctx context.Context, p JobAttemptUsageParams) ([]AttemptUsage, error)

	// JobLogAppend stores one chunk of a job's log, of one stream; a
	// stream not of LogStreams is an *InvalidError.
	JobLogAppend(ctx context.Context, p JobLogAppendParams) error
	// JobLogList returns the chunks after AfterSeq, oldest first.
	JobLogList(ctx context.Context, p JobLogListParams) ([]LogChunk, error)

	// NodeClaim writes the row of p.Node.Name for a starting process: it
	// records the process (Node.Process, Node.Lease) and the node's
	// configuration, marks it ONLINE, clears a missed heartbeat and sets
	// StartedAt and LastSeen to the database's now. Without p.Former it
	// inserts a new row, without the maintenance flag, and an existing
	// row of the name is an error matching ErrConflict. With p.Former it
	// replaces the existing row, keeping its maintenance flag, in one
	// guarded write: only while the row still names p.Former.Process and,
	// with p.Former.SilentFor, was last seen longer than that ago on the
	// database clock; otherwise an error matching ErrConflict, and a
	// *NotFoundError when the name has no row. Whether a process may have
	// the name is RegisterNode's to judge.
	NodeClaim(ctx context.Context, p NodeClaimParams) (*Node, error)
	// NodeGet returns a *NotFoundError for an unknown name.
	NodeGet(ctx context.Context, name string) (*Node, error)
	// NodeList returns every node ordered by name, with live Load and Running filled in.
	NodeList(ctx context.Context) ([]*Node, error)
	// NodeTouch records that the node is alive, with its reported health;
	// with p.Process only while the row names that process. It returns
	// what the cluster says of the node, so a node learns it without
	// another read. A SQL store runs it on a connection of its own, never
	// behind the process's other work (a node's liveness must get
	// through however busy the node is).
	NodeTouch(ctx context.Context, p NodeTouchParams) (NodeTouched, error)
	// NodeSetState records a node's health: ONLINE, OFFLINE or ERROR only
	// (MAINTENANCE is an error: use NodeSetMaintenance). It never changes
	// the maintenance flag. *NotFoundError for an unknown name.
	NodeSetState(ctx context.Context, name string, state NodeState) error
	// NodeSetBeatMissed records that a dispatcher's heartbeat to the node
	// went unanswered (BeatMissedAt: the database's now at the first miss
	// in a row, kept by later ones), or, with missed false, that it was
	// answered. NodeSetState and NodeClaim clear it too. *NotFoundError
	// for an unknown name.
	NodeSetBeatMissed(ctx context.Context, name string, missed bool) error

	// LeaseAcquire acquires or renews the lease for owner for ttl, with one
	// conditional UPDATE judged on the database's clock: it takes the lease
	// when owner holds it already or it has expired. It returns the term
	// owner holds now, or the zero LeaseTerm when another holds the lease.
	// A renewal keeps the term; any other taking starts a new one.
	LeaseAcquire(ctx context.Context, owner string, ttl time.Duration) (LeaseTerm, error)
	// LeaseGet reads the lease with the database's clock.
	LeaseGet(ctx context.Context) (Lease, error)

	// ClusterToken returns the cluster's dispatch token, creating it once.
	ClusterToken(ctx context.Context) (string, error)

	// TypeLimitList returns every type limit, ordered by type (byte
	// order), each with the number of jobs of its type running now
	// (holding load on a node: Job.HoldsLoad), read in one statement, so
	// the dispatcher can afford it every round.
	TypeLimitList(ctx context.Context) ([]TypeLimit, error)

	// EventPurge removes the events naming no job (see EventPurgeParams)
	// recorded before p.Before, oldest first, at most p.Limit of them (0:
	// all), and returns how many it removed (with DryRun: would remove).
	// The events of a job go with the job (JobPurge).
	EventPurge(ctx context.Context, p EventPurgeParams) (int, error)
}

// Transactor is a store that runs changes in one transaction (Store.Tx):
// what an operation that does all its work in one needs.
type Transactor interface {
	Tx(ctx context.Context, fn func(tx TxStore) error) error
}

// JobChangeNotifier is a store that tells when work may have appeared (a
// job became QUEUED or RESTART) or capacity was freed (a job left a
// load-holding state), so the dispatcher can start a round at once instead
// of waiting for its interval. Notifications may be lost or spurious:
// polling stays the correct fallback.
type JobChangeNotifier interface {
	// JobChanges delivers a value (coalesced: the channel has room for one)
	// after such changes, until ctx ends. The channel is never closed: stop
	// reading when ctx ends. Only the changes committed after JobChanges
	// returns are sure to be reported.
	JobChanges(ctx context.Context) (<-chan struct{}, error)
}

// TxStore is the part of a Store that takes part in a transaction (see
// Store.Tx); the Store itself offers the same methods outside one.
type TxStore interface {
	// Now is the database's clock.
	Now(ctx context.Context) (time.Time, error)

	// JobInsert creates a job after ValidateJobInsert; Status must be
	// QUEUED or INSTANTIATED. A ParentID that names no job is a
	// *NotFoundError.
	JobInsert(ctx context.Context, p JobInsertParams) (*Job, error)
	// JobGet returns a *NotFoundError for an unknown id.
	JobGet(ctx context.Context, id int64) (*Job, error)
	// JobList returns matching jobs ordered by id; with Limit, the newest
	// Limit of them. With p.Sort.Field it returns them in the sort's order
	// instead (see JobSort), every matching job sorted before Limit
	// applies; an unknown field is an *InvalidError.
	JobList(ctx context.Context, p JobListParams) ([]*Job, error)
	// JobUpdate applies one guarded transition and returns the job as it is
	// now. It returns ErrConflict when the job no longer has the expected
	// status and version, and a *TransitionError for a transition the state
	// machine forbids.
	JobUpdate(ctx context.Context, u JobUpdate) (*Job, error)
	// JobUpdateMany applies many guarded transitions at once, each exactly
	// as JobUpdate would apply it on its own, in as few statements as the
	// backend allows: the batched steps of dispatch, start and finish,
	// and of the operations that recover many jobs at once. The
	// results are in the order of us. A transition that does not apply is
	// no error of the call: its result carries ErrConflict (the job is not
	// at the expected status and version, or no longer exists) or a
	// *TransitionError. The updates must name distinct jobs.
	JobUpdateMany(ctx context.Context, us []JobUpdate) ([]JobUpdateResult, error)
	// JobAttemptList returns the ended attempts of job jobID, oldest first,
	// as the store recorded them when each ended (see EndsAttempt); none
	// for an unknown job.
	JobAttemptList(ctx context.Context, jobID int64) ([]Attempt, error)

	// ReservationList returns every node kept free for an oversized job,
	// ordered by job id.
	ReservationList(ctx context.Context) ([]Reservation, error)
	// ReservationSet keeps node free for job JobID, replacing the job's
	// earlier reservation if any. It returns ErrConflict when the node is
	// kept for another job already.
	ReservationSet(ctx context.Context, r Reservation) error
	// ReservationDelete frees the node kept for a job; deleting a
	// reservation that does not exist is not an error.
	ReservationDelete(ctx context.Context, jobID int64) error

	// ScheduleAdd stores a new schedule after ValidateScheduleAdd; a name
	// already taken is an error matching ErrConflict.
	ScheduleAdd(ctx context.Context, p ScheduleAddParams) (*Schedule, error)
	// ScheduleList returns every schedule ordered by name.
	ScheduleList(ctx context.Context) ([]*Schedule, error)
	// ScheduleGet returns a *NotFoundError for an unknown name.
	ScheduleGet(ctx context.Context, name string) (*Schedule, error)
	// ScheduleSetPaused pauses or resumes a schedule and returns it as it
	// is now; *NotFoundError for an unknown name.
	ScheduleSetPaused(ctx context.Context, p ScheduleSetPausedParams) (*Schedule, error)
	// ScheduleDelete removes a schedule (its jobs stay); *NotFoundError
	// for an unknown name.
	ScheduleDelete(ctx context.Context, name string) error
	// ScheduleListDue returns the schedules that are not paused and whose
	// next fire time has come on the database clock, earliest first.
	ScheduleListDue(ctx context.Context, p ScheduleDueParams) ([]*Schedule, error)
	// ScheduleAdvance moves a schedule past the fire at p.From with one
	// guarded UPDATE and returns it as it is now. ErrConflict when the
	// schedule no longer fires at p.From (another fire took it), is
	// paused, or is gone: the caller's transaction, and the job it
	// created for that fire, must then be rolled back.
	ScheduleAdvance(ctx context.Context, p ScheduleAdvanceParams) (*Schedule, error)

	// JobListRollbackPending returns up to limit (0: all) jobs whose
	// rollback job is yet to be created (Job.RollbackPending), oldest
	// first.
	JobListRollbackPending(ctx context.Context, limit int) ([]*Job, error)
	// JobRollbackSet records the rollback job of a failed job, guarded: it
	// applies only while the job is FAILED at p.Version with no rollback
	// job yet, and bumps the version; ErrConflict otherwise (another
	// holder created it, or the job was requeued or deleted).
	JobRollbackSet(ctx context.Context, p JobRollbackSetParams) (*Job, error)

	// JobInsertMany creates many jobs in one transaction (all or none),
	// each checked by ValidateJobInsert first: an invalid one is an
	// *InvalidError naming its index, a ParentID that names no job a
	// *NotFoundError, and nothing is written. The ids are in input order.
	// It uses multi-row INSERTs (chunked), not one statement per job.
	JobInsertMany(ctx context.Context, ps []JobInsertParams) ([]int64, error)
	// NodeRemove deletes a node's row and the reservations kept on it, in
	// one guarded write: only while the row still names p.Process and was
	// last seen at p.LastSeen (no later), as the caller read it; otherwise
	// an error matching ErrConflict, and a *NotFoundError for an unknown
	// name. It leaves the jobs alone, whatever names the node: whether a
	// node may go is RemoveNode's to judge.
	NodeRemove(ctx context.Context, p NodeRemoveParams) error
	// NodeSetMaintenance sets or clears a node's maintenance flag, leaving
	// its health state alone; *NotFoundError for an unknown name.
	NodeSetMaintenance(ctx context.Context, name string, on bool) error
	// LeaseRelease gives the lease up if owner holds it; an empty owner
	// releases it whoever holds it (operator override). True iff it changed. Outside a transaction it
	// runs on a connection of its own, so a busy pool never delays it.
	LeaseRelease(ctx context.Context, owner string) (bool, error)
	// TypeLimitSet sets or replaces the cluster-wide cap on running jobs of
	// p.Type, after ValidateTypeLimitSet.
	TypeLimitSet(ctx context.Context, p TypeLimitSetParams) error
	// TypeLimitDelete removes the limit of a type; a *NotFoundError when
	// it has none.
	TypeLimitDelete(ctx context.Context, typ string) error

	// EventAppend records the events of one change (see EventAppendParams)
	// after ValidateEventAppend, at the database clock: an *InvalidError
	// or, for a job id that names no job, a *NotFoundError, and nothing is
	// written. Run it in the transaction that makes the change (Recorded).
	EventAppend(ctx context.Context, p EventAppendParams) error
	// EventList returns the matching events ordered by id (the order they
	// were recorded in); with Limit, the newest Limit of them.
	EventList(ctx context.Context, p EventListParams) ([]Event, error)
}

// JobRollbackSetParams name a failed job, the version read, and its new
// rollback job.
type JobRollbackSetParams struct {
	ID            int64
	Version       int64
	RollbackJobID int64
}

// JobUpdateResult is the outcome of one transition of JobUpdateMany: the
// job as the transition left it, or why it did not apply.
type JobUpdateResult struct {
	Job *Job
	Err error
}

// Reservation keeps a node free of other work for one oversized job, so the
// node drains and the job runs there as soon as it is idle instead of
// waiting forever behind smaller jobs. It lives in the store, so a new lease
// holder honours the reservations of the last.
type Reservation struct {
	JobID int64  `json:"job_id"`
	Node  string `json:"node"`
}

// Migration is one schema migration and when it was applied (nil if pending).
type Migration struct {
	Version   int        `json:"version"`
	Name      string     `json:"name"`
	AppliedAt *time.Time `json:"applied_at"`
}

// JobInsertParams are the fields of a new job.
type JobInsertParams struct {
	Type        string
	Operation   string
	Args        []string
	Payload     json.RawMessage // nil means {}
	Load        float64
	Priority    int    // MinPriority to MaxPriority; 0 means DefaultPriority
	Status      Status // QUEUED, or INSTANTIATED to hold it
	Key         string
	ParentID    *int64
	MaxAttempts int // at least 1
	Backoff     time.Duration
	Rollback    string
	RunAfter    *time.Time
	Timeout     time.Duration // 0 means DefaultJobTimeout
	Creator     string
	// RollbackType is the type the rollback job gets; "" is the job's own.
	RollbackType string
	// MemoryLimit is the job's memory limit in bytes; 0: none of its own.
	MemoryLimit int64
	// KeyPosition and RollbackOf are for a rollback job (RollbackInsert),
	// which JobInsert alone creates: JobInsertMany refuses them.
	KeyPosition *int64
	RollbackOf  *int64
}

// JobSubmitParams are a job for Store.JobSubmit: the fields of JobInsert,
// and what the store fills in itself.
type JobSubmitParams struct {
	JobInsertParams
	// ServiceLoad, ServiceTimeout and ServiceMemory take the load, the
	// timeout and the memory limit from the settings the registered nodes
	// give the job's type, where they give one; Load, Timeout and
	// MemoryLimit stand otherwise.
	ServiceLoad, ServiceTimeout, ServiceMemory bool
	// RunIn, when set, starts the job no earlier than this long from now
	// on the database clock (instead of RunAfter).
	RunIn *time.Duration
	// Event is the submit's event, recorded with the job: one event naming
	// the new job and carrying its type (the store fills in JobIDs and
	// Type). Who and Verb are required.
	Event EventAppendParams
}

// JobSubmitted is a job Store.JobSubmit created, with what the nodes
// offer its type as they were when it was inserted.
type JobSubmitted struct {
	ID int64
	// Load is the job's load as inserted: the service's, where it gave one.
	Load float64
	// Offered reports whether any registered node offers the job's type;
	// when none does, the job waits until one registers.
	Offered bool
	// OnlineOffered reports whether an ONLINE node offers the type, and
	// LargestMaxLoad is then the largest max load of those nodes: enough
	// to know a job that fits one of them can run (the rules of
	// dispatch.Feasible) without reading the nodes.
	OnlineOffered  bool
	LargestMaxLoad float64
}

// JobListParams filter a job listing; zero fields do not filter.
type JobListParams struct {
	Statuses []Status
	Types    []string
	Node     string
	Key      string
	ParentID *int64
	// ParentIDs keeps only the children of these jobs.
	ParentIDs []int64
	Creator   string // only jobs submitted by this creator
	// CreatedAfter and CreatedBefore bound the creation time, both ends
	// included: CreatedAt >= *CreatedAfter and CreatedAt <= *CreatedBefore.
	// nil leaves that end open.
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	// MinID and MaxID bound the ids, both ends included; 0 leaves that end
	// open. A caller that knows where its jobs are (a benchmark run) reads
	// them through the primary key, however many others the table holds.
	MinID, MaxID int64
	Limit        int
	// DoubleFault keeps only jobs whose rollback job ended FAILED.
	DoubleFault bool
	// Roots keeps only jobs without a parent.
	Roots bool
	// PriorityMin and PriorityMax bound the priority, both ends included;
	// 0 leaves that end open.
	PriorityMin, PriorityMax int
	// Brief reads only the fields of Job.Brief; the others are zero. A node
	// checking its running jobs twice a second needs no more.
	Brief bool
	// OOMKilled keeps only jobs whose last ended attempt had a process
	// killed at its memory limit (Job.Usage.OOMKilled).
	OOMKilled bool
	// Sort orders the listing before Limit applies; the zero JobSort keeps
	// the order by id (Desc applies only with a Field). JobCountByStatus
	// ignores it.
	Sort JobSort
}

// JobTimes is a job's status and when it was created, started and ended:
// all a benchmark's summary reads of each of its jobs (Store.JobTimes),
// where a listing would read every field.
type JobTimes struct {
	Status     Status
	CreatedAt  time.Time
	StartedAt  *time.Time // nil until the job first starts
	FinishedAt *time.Time // nil until it ends
}

// JobPurgeParams select ended jobs to remove; zero fields do not filter.
type JobPurgeParams struct {
	Creator        string
	Statuses       []Status   // subset of TerminalStatuses; empty: every terminal status
	FinishedBefore *time.Time // only jobs that ended before this (database clock); nil: any
	// MinID and MaxID bound the ids, both ends included; 0 leaves that end
	// open (see JobListParams).
	MinID, MaxID int64
	// After continues a purge in batches: only jobs after this place in
	// the order of their ends (JobPurgeResult.Next of the batch before).
	// Each batch then starts where the last stopped, never at the first
	// ended job, so a purge of a million jobs costs each batch its own
	// size. A job without an end time is after no place. It does not go
	// with MinID or MaxID, whose range is read in id order.
	After  *PurgePosition
	Limit  int
	DryRun bool // count what would go, remove nothing
	// Choose picks the ids to remove among candidates, in the order they
	// go, given pinned, the candidates with a child that is no candidate,
	// and the Limit; required. PurgeJobs sets it to PurgeSelect.
	Choose func(candidates []PurgeCandidate, pinned []int64, limit int) []int64
}

// PurgePosition is a place in the order a purge weighs jobs in: by the
// time they ended, then by id.
type PurgePosition struct {
	EndedAt time.Time
	ID      int64
}

// JobPurgeResult is what one JobPurge did.
type JobPurgeResult struct {
	Removed int // jobs removed; on a dry run, that would be
	// Next is the last candidate the batch weighed, for the next batch's
	// After; nil when it weighed every candidate left, or purged a range of ids.
	Next *PurgePosition
}

// NodeRemoveParams name a node row to delete, as the caller read it (see
// Store.NodeRemove).
type NodeRemoveParams struct {
	Name     string
	Process  NodeProcess
	LastSeen time.Time
}

// JobProgressParams report the progress of one attempt of a job on a node.
type JobProgressParams struct {
	ID       int64
	Attempt  int
	Node     string
	Progress int // 0-100
	Message  string
}

// JobDispatchableParams select one page of one queue.
type JobDispatchableParams struct {
	Status Status // QUEUED or RESTART
	Type   string // required
	// After is the place of the last job of the page before; the zero
	// QueuePlace starts at the head of the queue.
	After QueuePlace
	Limit int
	// MaxLoad keeps only the jobs whose load is at most *MaxLoad, and
	// LoadAbove only those whose load is above *LoadAbove; nil leaves that
	// end open.
	MaxLoad, LoadAbove *float64
	// FirstChildren keeps only children whose parent has no child holding
	// load on a node: the first child of such a parent may queue ahead.
	// Such a page starts at the head of the queue (After is zero).
	FirstChildren bool
	// Long is a hint: the caller expects more jobs than the page holds.
	// A SQL backend then reads the page in index order whatever its
	// statistics say, at the price of a few round trips; the page is the
	// same either way.
	Long bool
}

// QueueLoads describes one queue: a dispatchable status and a job type
// (Store.JobQueueLoads).
type QueueLoads struct {
	Status   Status  `json:"status"`
	Type     string  `json:"type"`
	Lightest float64 `json:"lightest"`
	Heaviest float64 `json:"heaviest"`
	// Children: some job of the queue has a parent.
	Children bool `json:"children"`
}

// JobLogAppendParams are one chunk of output of one attempt.
type JobLogAppendParams struct {
	JobID   int64
	Attempt int
	Stream  LogStream // whose the bytes are; "" is LogOutput
	Data    []byte
}

// JobLogListParams select log chunks of a job.
type JobLogListParams struct {
	JobID    int64
	AfterSeq int64
	Limit    int // 0: all
}

// LogChunk is one stored piece of a job's log, all of one stream.
type LogChunk struct {
	Seq       int64     `json:"seq"`
	JobID     int64     `json:"job_id"`
	Attempt   int       `json:"attempt"`
	Stream    LogStream `json:"stream"`
	Data      []byte    `json:"data"`
	CreatedAt time.Time `json:"created_at"`
}

// LogStream says whose the bytes of a log chunk are, so the job's own
// output stays apart from what jobctl read or wrote beside it.
type LogStream string

const (
	// LogOutput is what the job wrote to stdout and stderr, byte for
	// byte, less its protocol lines.
	LogOutput LogStream = "output"
	// LogProtocol is the job's stdout lines that spoke to jobctl and took
	// effect (jobctl:progress N, jobctl:warning), each whole, as written.
	LogProtocol LogStream = "protocol"
	// LogNote is jobctl's own lines about the run: paused, timed out and
	// stopped, the log cut at its cap; one line each, without a prefix.
	LogNote LogStream = "note"
)

// LogStreams are every stream, in the order above.
var LogStreams = []LogStream{LogOutput, LogProtocol, LogNote}

// ValidateLogStream refuses a stream not of LogStreams with an
// *InvalidError; "" is LogOutput.
func ValidateLogStream(s LogStream) (LogStream, error) {
	if s == "" {
		return LogOutput, nil
	}
	if !slices.Contains(LogStreams, s) {
		return "", &InvalidError{What: "log chunk", Problems: []string{fmt.Sprintf("stream %q is none of output, protocol, note", s)}}
	}
	return s, nil
}

// NodeRegisterParams describe a starting node (RegisterNode);
// Node.State, Maintenance, StartedAt and LastSeen are set by the store.
type NodeRegisterParams struct {
	Node Node
	// ProcessGone reports whether the process that registered the row
	// earlier no longer exists. RegisterNode asks it only about a process
	// on the same host as Node.Process; nil means it cannot tell, and the
	// name is free only once the former holder's lease has passed.
	ProcessGone func(NodeProcess) bool
}

// NodeClaimParams are the row Store.NodeClaim writes and, to replace an
// existing row, what that row must still be.
type NodeClaimParams struct {
	Node Node
	// Former, when set, replaces the existing row instead of inserting.
	Former *NodeFormer
}

// NodeFormer is the guard of a replacing NodeClaim: the row must still
// name Process and, when SilentFor is above zero, have been last seen
// longer than SilentFor ago on the database clock.
type NodeFormer struct {
	Process   NodeProcess
	SilentFor time.Duration
}

// NodeTouchParams are a node's liveness report.
type NodeTouchParams struct {
	Name         string
	LoadAvg      float64
	MemAvailable int64
	Cores        int
	// RunningUsage is what the node measured of each job it runs now.
	RunningUsage []LiveUsage
	// Process, when set, is the process that registered the row: the
	// touch applies only while the row still names it, so a process whose
	// name another took over (once its lease passed) cannot keep the row
	// alive; it gets an error matching ErrNodeOnline and stops its runs
	// when its lease runs out.
	Process *NodeProcess
}

// NodeTouched is what a node learns from recording its liveness: its
// health state (ONLINE, OFFLINE or ERROR: never MAINTENANCE) and its
// maintenance flag as the cluster has them.
type NodeTouched struct {
	State       NodeState
	Maintenance bool
}

// TypeLimit caps how many jobs of one type run at once across the cluster.
// It lives in the store, so every lease holder obeys the same limits.
type TypeLimit struct {
	Type       string `json:"type"`
	MaxRunning int    `json:"max_running"`
	// Running is how many jobs of the type hold load on a node now.
	Running   int       `json:"running"`
	UpdatedAt time.Time `json:"updated_at"`
}

// TypeLimitSetParams set the limit of one job type.
type TypeLimitSetParams struct {
	Type       string
	MaxRunning int // 1 to MaxTypeLimit
}
