package dbstore

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/jobctl/jobctl/engine"
)

// TestPostgresWritesOfJobsNotifyThemselves: no trigger notifies of jobs
// (migrations 021 and 025 dropped them); every PostgreSQL statement that
// inserts or updates jobs notifies in its own text (jobs_changed_notify),
// but for the fragments the statements include and the writes that leave
// no job in a state that wakes the dispatcher. The notification follows
// exactly engine.WakingStatuses, the set the in-process signal follows, so
// both paths wake the dispatcher for the same changes; which writes send
// one is TestPostgresNotifiesOnlyWakingWrites.
func TestPostgresWritesOfJobsNotifyThemselves(t *testing.T) {
	t.Parallel()
	s := migrated(t, openStore(t, postgresSchemaDSN(t)))
	var triggers []string
	if err := s.db.SelectContext(t.Context(), &triggers,
		`SELECT tgname FROM pg_trigger WHERE tgrelid = CAST('jobs' AS regclass) AND NOT tgisinternal ORDER BY tgname`); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(triggers, []string{"jobs_record_attempts"}) {
		t.Errorf("the triggers of jobs are %v; want only jobs_record_attempts", triggers)
	}
	quiet := map[string]string{
		"job_insert_values":    "a fragment of job_insert and job_submit",
		"job_update_guarded":   "a fragment of job_update",
		"job_rollback_guarded": "a fragment of job_rollback_set",
		"job_update_many_set":  "a fragment of job_update_many and job_update_many_ids",
		"job_insert_many":      "not used on PostgreSQL, whose bulk inserts are job_insert_arrays",
		"job_start_many":       "leaves every job it writes RUNNING",
		"job_progress_set":     "changes no state",
	}
	queries, err := loadQueries(postgresDialect)
	if err != nil {
		t.Fatal(err)
	}
	const notify = "pg_notify('jobctl_job_changes'"
	for name, q := range queries {
		writes := strings.Contains(q, "UPDATE jobs") || strings.Contains(q, "INSERT INTO jobs")
		if _, ok := quiet[name]; ok || !writes {
			continue
		}
		if !strings.Contains(q, notify) {
			t.Errorf("%s writes jobs and notifies no one", name)
		}
	}
	for name, why := range quiet {
		if strings.Contains(queries[name], notify) {
			t.Errorf("%s notifies, though it is listed as quiet (%s)", name, why)
		}
	}
	for _, st := range engine.AllStatuses {
		if got := strings.Contains(queries["jobs_changed_notify"], "'"+string(st)+"'"); got != st.Wakes() {
			t.Errorf("writes notify on %s: %v, but %s.Wakes() is %v", st, got, st, st.Wakes())
		}
	}
}

// TestPostgresNotifiesOnlyWakingWrites: a claim and a start send no
// notification, a finish and an insert of a queued job send one, with the
// cluster's schema as payload. A notification of the test's own marks the
// point after each write: PostgreSQL delivers notifications in commit
// order, so the next one heard after a write is the write's own or the
// marker.
func TestPostgresNotifiesOnlyWakingWrites(t *testing.T) {
	t.Parallel()
	dsn := postgresSchemaDSN(t)
	s := migrated(t, openStore(t, dsn))
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	marker := "marker of " + schema
	l := pq.NewListener(dsn, time.Second, time.Second, nil)
	defer l.Close()
	if err := l.Listen(jobChangesChannel); err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx := t.Context()
	// Tests in other schemas notify the same channel; their payloads are
	// skipped.
	next := func(what string) string {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case n := <-l.Notify:
				if n == nil {
					t.Fatalf("after %s: the listener lost its connection", what)
				}
				if n.Extra == schema || n.Extra == marker {
					return n.Extra
				}
			case <-deadline:
				t.Fatalf("after %s: no notification within 30s", what)
				return ""
			}
		}
	}
	// Only the marker, and nothing of this schema's writes, may follow.
	mark := func(what string) {
		t.Helper()
		if _, err := s.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, jobChangesChannel, marker); err != nil {
			t.Fatal(err)
		}
		if got := next(what); got != marker {
			t.Errorf("%s notified %q", what, got)
		}
	}
	held, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusInstantiated})
	if err != nil {
		t.Fatal(err)
	}
	mark("a held job's insert")
	if _, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued}); err != nil {
		t.Fatal(err)
	}
	if got := next("a queued job's insert"); got != schema {
		t.Errorf("a queued job's insert notified %q, want %q", got, schema)
	}
	// In bulk: held jobs alone send nothing, one queued job among them
	// one notification for the statement.
	bulkHeld := []engine.JobInsertParams{{Type: engine.TypeNoop, Status: engine.StatusInstantiated},
		{Type: engine.TypeNoop, Status: engine.StatusInstantiated}}
	if _, err := s.JobInsertMany(ctx, bulkHeld); err != nil {
		t.Fatal(err)
	}
	mark("a bulk insert of held jobs")
	if _, err := s.JobInsertMany(ctx, append(bulkHeld, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued},
		engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued})); err != nil {
		t.Fatal(err)
	}
	if got := next("a bulk insert with queued jobs"); got != schema {
		t.Errorf("a bulk insert with queued jobs notified %q, want %q", got, schema)
	}
	mark("a bulk insert, after its one notification")
	// A plain submit, its own statement.
	if _, err := s.JobSubmit(ctx, engine.JobSubmitParams{JobInsertParams: engine.JobInsertParams{Type: engine.TypeNoop,
		Status: engine.StatusQueued}, Event: engine.EventAppendParams{Who: "me@host", Verb: engine.EventSubmit}}); err != nil {
		t.Fatal(err)
	}
	if got := next("a submit"); got != schema {
		t.Errorf("a submit notified %q, want %q", got, schema)
	}
	release, err := engine.ReleaseUpdate(held)
	if err != nil {
		t.Fatal(err)
	}
	released, err := s.JobUpdate(ctx, release)
	if err != nil {
		t.Fatal(err)
	}
	if got := next("a release"); got != schema {
		t.Errorf("a release notified %q, want %q", got, schema)
	}
	res, err := s.JobUpdateMany(ctx, []engine.JobUpdate{engine.QueuedStartUpdate(released, "n1")})
	if err != nil || res[0].Err != nil {
		t.Fatalf("start: %v %v", err, res)
	}
	mark("a batched start")
	done := engine.OutcomeUpdate(res[0].Job, engine.RunResult{Outcome: engine.RunSucceeded}, false, func() float64 { return 0.5 })
	if res, err := s.JobUpdateManyQuiet(ctx, []engine.JobUpdate{done}); err != nil || res[0].Err != nil {
		t.Fatalf("finish: %v %v", err, res)
	}
	if got := next("a finish"); got != schema {
		t.Errorf("a finish notified %q, want %q", got, schema)
	}
	// One at a time, and through the general batch statement.
	queued, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	if got := next("a queued job's insert"); got != schema {
		t.Errorf("a queued job's insert notified %q, want %q", got, schema)
	}
	running, err := s.JobUpdate(ctx, engine.QueuedStartUpdate(queued, "n1"))
	if err != nil {
		t.Fatal(err)
	}
	mark("a start of its own")
	failed := engine.OutcomeUpdate(running, engine.RunResult{ExitCode: 1, Outcome: engine.RunFailed}, false,
		func() float64 { return 0.5 })
	if res, err := s.JobUpdateMany(ctx, []engine.JobUpdate{failed}); err != nil || res[0].Err != nil {
		t.Fatalf("fail: %v %v", err, res)
	}
	if got := next("a failure read back"); got != schema {
		t.Errorf("a failure read back notified %q, want %q", got, schema)
	}
	mark("a failure, after its one notification")
	// No trigger notifies: a job put back in the queue by hand in SQL
	// waits for the dispatcher's poll (README, "How it works").
	if _, err := s.db.ExecContext(ctx, `UPDATE jobs SET status = 'QUEUED', version = version + 1 WHERE id = $1`,
		running.ID); err != nil {
		t.Fatal(err)
	}
	mark("a job queued by hand in SQL")
}

// TestPostgresListenerReconnects: when the listening connection is lost,
// the listener connects again by itself and reports one change, since
// notifications may have been missed meanwhile; then it hears changes again.
func TestPostgresListenerReconnects(t *testing.T) {
	t.Parallel()
	dsn := postgresSchemaDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// A name of its own, so the test finds its listener among the others.
	app := "jobctl-reconnect-" + u.Query().Get("search_path")
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	s := migrated(t, openStore(t, u.String()))
	other := openStore(t, dsn)

	changes, err := s.JobChanges(t.Context())
	if err != nil {
		t.Fatalf("JobChanges: %v", err)
	}
	var killed int
	err = other.db.GetContext(t.Context(), &killed,
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`, app)
	if err != nil || killed != 1 {
		t.Fatalf("terminate the listening connection: %d terminated, %v; want 1", killed, err)
	}
	select {
	case <-changes:
	case <-time.After(30 * time.Second):
		t.Fatal("no signal within 30s of the listener's reconnection")
	}
	if _, err := other.JobInsert(t.Context(), engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changes:
	case <-time.After(30 * time.Second):
		t.Fatal("no signal within 30s of another process's insert after the reconnection")
	}
}

// TestJobChangesSkipNonWakingWrites: in-process signals are sent before a
// write returns, so the store can be held to silence where nothing was
// freed: a node's start of an offered job must not wake the dispatcher into another
// round at once, nor a held job that nobody may dispatch yet. (SQLite: no
// other process's notifications can interfere.)
func TestJobChangesSkipNonWakingWrites(t *testing.T) {
	t.Parallel()
	s := migratedSQLite(t)
	ctx := t.Context()
	queued, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	changes, err := s.JobChanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	signalled := func() bool {
		select {
		case <-changes:
			return true
		default:
			return false
		}
	}
	if _, err := s.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeNoop, Status: engine.StatusInstantiated}); err != nil || signalled() {
		t.Errorf("a held job's insert: %v, or it signalled", err)
	}
	res, err := s.JobUpdateMany(ctx, []engine.JobUpdate{engine.QueuedStartUpdate(queued, "n1")})
	if err != nil || res[0].Err != nil || signalled() {
		t.Fatalf("a batched start (QUEUED → RUNNING): %v %v, or it signalled", err, res)
	}
	done := engine.OutcomeUpdate(res[0].Job, engine.RunResult{Outcome: engine.RunSucceeded}, false, func() float64 { return 0.5 })
	if _, err := s.JobUpdate(ctx, done); err != nil || !signalled() {
		t.Errorf("a finish: %v, or it did not signal", err)
	}
}

// TestPostgresLiveIndexesLeaveOutExactlyTheEndedJobs: the partial indexes of
// migrations 003, 010, 015, 016 and 027 name the states they leave out, or keep, by
// hand; they must be exactly the engine's sets, or a live job would be
// missing from the index the dispatcher reads its queue through: the live
// indexes leave out engine.TerminalStatuses (jobs_status_node the
// dispatchable ones too, which the queue indexes hold), the queue indexes
// keep exactly engine.DispatchableStatuses, and the indexes of ended jobs,
// which a purge and the measured use of a type read, exactly
// engine.TerminalStatuses.
func TestPostgresLiveIndexesLeaveOutExactlyTheEndedJobs(t *testing.T) {
	t.Parallel()
	s := migrated(t, openStore(t, postgresSchemaDSN(t)))
	named := map[string]func(engine.Status) bool{
		"jobs_status_node":    func(st engine.Status) bool { return st.Terminal() || st.Dispatchable() },
		"jobs_live_key_id":    engine.Status.Terminal,
		"jobs_queue":          engine.Status.Dispatchable,
		"jobs_queue_load":     engine.Status.Dispatchable,
		"jobs_queue_children": engine.Status.Dispatchable,
		"jobs_ended":          engine.Status.Terminal,
		"jobs_type_measured":  engine.Status.Terminal,
	}
	for name, wantNamed := range named {
		var def string
		err := s.db.GetContext(t.Context(), &def,
			`SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			 WHERE c.relname = $1 AND i.indrelid = CAST('jobs' AS regclass)`, name)
		if err != nil {
			t.Fatalf("read index %s: %v", name, err)
		}
		for _, st := range engine.AllStatuses {
			if got, want := strings.Contains(def, "'"+string(st)+"'"), wantNamed(st); got != want {
				t.Errorf("index %s names %s: %v, want %v\n%s", name, st, got, want, def)
			}
		}
	}
}
