package dbstore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
)

// everyBackend runs f on a fresh, migrated store of each backend.
func everyBackend(t *testing.T, f func(t *testing.T, s *Store)) {
	for _, b := range []struct {
		name string
		open func(t *testing.T) *Store
	}{
		{"sqlite", func(t *testing.T) *Store { return migratedSQLite(t) }},
		{"postgres", func(t *testing.T) *Store { return migrated(t, openStore(t, postgresSchemaDSN(t))) }},
		{"mysql", func(t *testing.T) *Store { return migrated(t, openStore(t, mysqlDatabaseDSN(t))) }},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f(t, b.open(t))
		})
	}
}

// Each variant of the purge's candidate query is answered from the index
// of ended jobs, or for a range of ids from the primary key, so a batch
// reads what it takes and not the table's history: SQLite uses a partial
// index only when the query repeats its WHERE term as written, and
// PostgreSQL (told to use an index, as a purge tells it) only when the
// terms imply the index's.
func TestPurgeCandidatesUseTheEndedIndex(t *testing.T) {
	everyBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := s.dialect.timeArg(time.Now())
		primaryKey := map[string]string{"sqlite": "INTEGER PRIMARY KEY", "postgres": "jobs_pkey", "mysql": "PRIMARY"}[s.dialect.name]
		for _, tt := range []struct {
			p     engine.JobPurgeParams
			index string
		}{
			{engine.JobPurgeParams{FinishedBefore: &time.Time{}}, "jobs_ended"},
			{engine.JobPurgeParams{FinishedBefore: &time.Time{}, After: &engine.PurgePosition{ID: 1}}, "jobs_ended"},
			{engine.JobPurgeParams{}, "jobs_ended"},
			{engine.JobPurgeParams{Creator: "bench", After: &engine.PurgePosition{ID: 1}}, "jobs_ended"},
			{engine.JobPurgeParams{Creator: "bench", MinID: 5, MaxID: 10}, primaryKey},
			{engine.JobPurgeParams{FinishedBefore: &time.Time{}, MinID: 5, MaxID: 10}, primaryKey},
		} {
			p := tt.p
			name := purgeCandidatesQuery(p)
			a := args{"statuses": []string{"FINISHED", "FAILED"}, "creator": p.Creator, "finished_before": at,
				"after_ended_at": at, "after_id": int64(1), "min_id": p.MinID, "max_id": maxIDArg(p.MaxID), "limit": int64(100)}
			query, params, err := s.bind(s.q, name, a, true)
			if err != nil {
				t.Fatal(err)
			}
			var plan string
			err = s.inTx(ctx, func(tx *sqlx.Tx) error {
				if s.dialect.purgeByIndex != "" {
					if _, err := tx.ExecContext(ctx, s.dialect.purgeByIndex); err != nil {
						return err
					}
				}
				plan, err = explain(ctx, tx, s.dialect.name, query, params)
				return err
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !strings.Contains(plan, tt.index) {
				t.Errorf("%s does not use %s:\n%s", name, tt.index, plan)
			}
		}
	})
}

// planOf is the plan of the named query with a, as explain gives it.
func planOf(t *testing.T, s *Store, name string, a args) string {
	t.Helper()
	query, params, err := s.bind(s.q, name, a, true)
	if err != nil {
		t.Fatal(err)
	}
	var plan string
	err = s.inTx(t.Context(), func(tx *sqlx.Tx) error {
		plan, err = explain(t.Context(), tx, s.dialect.name, query, params)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// explain returns the plan of a query as text; for MySQL, the indexes it
// may use.
func explain(ctx context.Context, tx *sqlx.Tx, dialect, query string, params []any) (string, error) {
	prefix := map[string]string{"sqlite": "EXPLAIN QUERY PLAN ", "postgres": "EXPLAIN ", "mysql": "EXPLAIN "}[dialect]
	rows, err := tx.QueryxContext(ctx, prefix+query, params...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		row, err := rows.SliceScan()
		if err != nil {
			return "", err
		}
		for _, v := range row {
			switch x := v.(type) {
			case []byte:
				b.Write(x)
			case string:
				b.WriteString(x)
			}
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.String(), rows.Err()
}

// explainBuffers runs query under EXPLAIN (ANALYZE, BUFFERS) on PostgreSQL
// and returns the shared buffers it touched, and the plan as JSON.
func explainBuffers(ctx context.Context, q sqlx.QueryerContext, query string, params []any) (int, []byte, error) {
	var plan []byte
	if err := sqlx.GetContext(ctx, q, &plan, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+query, params...); err != nil {
		return 0, nil, err
	}
	var explained []struct {
		Plan struct {
			Hit  int `json:"Shared Hit Blocks"`
			Read int `json:"Shared Read Blocks"`
		}
	}
	if err := json.Unmarshal(plan, &explained); err != nil || len(explained) != 1 {
		return 0, plan, fmt.Errorf("EXPLAIN gave %s: %v", plan, err)
	}
	return explained[0].Plan.Hit + explained[0].Plan.Read, plan, nil
}

// A service a release before this one stored, with its timeout as text
// only, still gives its defaults: the one statement inserts nothing for
// it, and the store reads the nodes instead, and records the event with
// the job all the same.
func TestJobSubmitServiceOfAnOlderRelease(t *testing.T) {
	everyBackend(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		if _, err := engine.RegisterNode(ctx, s, engine.NodeRegisterParams{Node: engine.Node{Name: "old", MaxLoad: 3},
			ProcessGone: func(engine.NodeProcess) bool { return false }}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.ExecContext(ctx, s.db.Rebind("UPDATE nodes SET services = ? WHERE name = 'old'"),
			`[{"type":"encode","load":2,"timeout":"1h30m0s","memory":1073741824}]`); err != nil {
			t.Fatal(err)
		}
		sub, err := s.JobSubmit(ctx, engine.JobSubmitParams{JobInsertParams: engine.JobInsertParams{Type: "encode",
			Load: 1, Status: engine.StatusQueued, Timeout: time.Minute}, ServiceLoad: true, ServiceTimeout: true,
			ServiceMemory: true, Event: engine.EventAppendParams{Who: "me@host", Verb: engine.EventSubmit}})
		if err != nil {
			t.Fatal(err)
		}
		j, err := s.JobGet(ctx, sub.ID)
		want := engine.JobSubmitted{ID: sub.ID, Load: 2, Offered: true, OnlineOffered: true, LargestMaxLoad: 3}
		if err != nil || sub != want || j.Load != 2 || time.Duration(j.Timeout) != 90*time.Minute || j.MemoryLimit != 1<<30 {
			t.Errorf("job %+v (%+v), %v; want load 2, timeout 1h30m and memory limit 1GiB from the old service, and %+v",
				j, sub, err, want)
		}
		jobs, err := s.JobList(ctx, engine.JobListParams{})
		if err != nil || len(jobs) != 1 {
			t.Errorf("%d jobs, %v; want the one", len(jobs), err)
		}
		events, err := s.EventList(ctx, engine.EventListParams{JobID: &sub.ID})
		if err != nil || len(events) != 1 || events[0].Verb != engine.EventSubmit {
			t.Errorf("the job's events: %+v, %v; want its submit", events, err)
		}
	})
}

// The measured use of a type reads the newest final attempts down
// jobs_type_measured: SQLite uses that partial index only while
// job_final_attempts states the ended statuses exactly as the index does
// (statusOneOf, migration 018).
func TestMeasuredUseReadsTheMeasuredIndexes(t *testing.T) {
	t.Parallel()
	s := migratedSQLite(t)
	plan := planOf(t, s, qJobAttemptUsageType, args{"job_type": engine.TypeNoop, "runs": int64(10)})
	for _, index := range []string{"USING INDEX jobs_type_measured", "USING INDEX job_attempts_type_measured"} {
		if !strings.Contains(plan, index) {
			t.Errorf("the measured use of a type does not read %s:\n%s", index, plan)
		}
	}
}

// A queued job with a key looks for the other live jobs of its key down
// jobs_live_key_id: SQLite uses that partial index only while
// job_live_key_match states the statuses it leaves out exactly as the index
// does (statusNoneOf, migration 022).
func TestDispatchableReadsTheLiveKeyIndex(t *testing.T) {
	t.Parallel()
	s := migratedSQLite(t)
	plan := planOf(t, s, qJobListDispatchable, args{"status": string(engine.StatusQueued),
		"type": engine.TypeNoop, "limit": int64(10), "after_priority": engine.MaxPriority + 1, "after_id": int64(0),
		"max_load": 2 * engine.MaxJobLoad, "load_above": -1.0})
	if !strings.Contains(plan, "USING INDEX jobs_live_key_id") {
		t.Errorf("the dispatch page does not read jobs_live_key_id:\n%s", plan)
	}
}

// PostgreSQL finds a node's own live jobs, and the loads of the nodes, in
// jobs_status_node, testing node in the index, however many jobs are
// queued or ended (migration 027).
func TestPostgresNodeJobsReadTheStatusIndex(t *testing.T) {
	t.Parallel()
	s := migrated(t, openStore(t, postgresSchemaDSN(t)))
	for _, fill := range []string{
		`INSERT INTO jobs (type, status, created_at, timeout_seconds)
		 SELECT 'noop', 'QUEUED', now(), 0 FROM generate_series(1, 20000)`,
		`INSERT INTO jobs (type, status, node, created_at, finished_at, timeout_seconds)
		 SELECT 'noop', 'FINISHED', 'n' || (i % 4), now(), now(), 0 FROM generate_series(1, 20000) AS i`,
		`INSERT INTO jobs (type, status, node, created_at, started_at, timeout_seconds)
		 SELECT 'noop', 'RUNNING', 'n' || (i % 4), now(), now(), 0 FROM generate_series(1, 200) AS i`,
		`ANALYZE jobs`,
	} {
		if _, err := s.db.ExecContext(t.Context(), fill); err != nil {
			t.Fatal(err)
		}
	}
	own := s.jobListArgs(engine.JobListParams{Node: "n1", Statuses: engine.RecoverableStatuses})
	own["limit"] = limitOrAll(0)
	for name, a := range map[string]args{
		jobListQueryName(engine.JobSort{}, true, true):  own,
		jobListQueryName(engine.JobSort{}, true, false): own,
		qNodeList: {},
	} {
		plan := planOf(t, s, name, a)
		if !strings.Contains(plan, "jobs_status_node") {
			t.Errorf("%s does not read jobs_status_node:\n%s", name, plan)
		}
		if a["node"] != nil && !regexp.MustCompile(`Index Cond: .*node = `).MatchString(plan) {
			t.Errorf("%s does not test node in the index:\n%s", name, plan)
		}
	}
}

// A count or a listing of live jobs (a benchmark's look at its progress,
// top's waiting jobs) reads the indexes of live jobs, never the table of
// ended ones: on PostgreSQL the queue statuses through jobs_queue and the
// others through jobs_status_node, each in a statement of its own; on
// SQLite through jobs_status_id, which holds every status, in one.
func TestLiveCountsAndListsReadTheLiveIndexes(t *testing.T) {
	for _, b := range []struct {
		name  string
		open  func(t *testing.T) *Store
		live  *regexp.Regexp // a plan that reads an index of live jobs
		parts int            // statements for every live status
	}{
		{"sqlite", func(t *testing.T) *Store { return migratedSQLite(t) }, regexp.MustCompile(`USING (COVERING )?INDEX jobs_status_id\b`), 1},
		{"postgres", func(t *testing.T) *Store { return migrated(t, openStore(t, postgresSchemaDSN(t))) },
			regexp.MustCompile(`Index (Only )?Scan (Backward )?(using|on) (jobs_queue|jobs_queue_load|jobs_status_node)\b`), 2},
	} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			fill := []string{
				`INSERT INTO jobs (type, status, creator, created_at, finished_at, timeout_seconds)
				 SELECT 'noop', 'FINISHED', 'bench', ` + s.dialect.now + `, ` + s.dialect.now + `, 0 FROM jobs_seq`,
				`INSERT INTO jobs (type, status, creator, created_at, timeout_seconds)
				 SELECT 'noop', 'QUEUED', 'bench', ` + s.dialect.now + `, 0 FROM jobs_seq WHERE n <= 100`,
				`INSERT INTO jobs (type, status, node, creator, created_at, started_at, timeout_seconds)
				 SELECT 'noop', 'RUNNING', 'n1', 'bench', ` + s.dialect.now + `, ` + s.dialect.now + `, 0 FROM jobs_seq WHERE n <= 100`,
				`ANALYZE`,
			}
			seq := `CREATE TEMPORARY TABLE jobs_seq AS WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 20000) SELECT n FROM g`
			err := s.inTx(t.Context(), func(tx *sqlx.Tx) error {
				for _, q := range append([]string{seq}, fill...) {
					if _, err := tx.ExecContext(t.Context(), q); err != nil {
						return fmt.Errorf("%s: %w", q, err)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			live := slices.DeleteFunc(slices.Clone(engine.AllStatuses), engine.Status.Terminal)
			p := engine.JobListParams{Statuses: live, Creator: "bench", MinID: 1, MaxID: 1 << 40}
			counts := s.jobCounts(p)
			if len(counts) != b.parts {
				t.Fatalf("the live statuses are counted in %d statements, want %d", len(counts), b.parts)
			}
			for _, c := range counts {
				if plan := planOf(t, s, c.name, c.args); !b.live.MatchString(plan) {
					t.Errorf("a count of %v reads no index of live jobs:\n%s", c.args["statuses"], plan)
				}
			}
			got, err := s.JobCountByStatus(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[engine.Status]int{engine.StatusQueued: 100, engine.StatusRunning: 100}; !maps.Equal(got, want) {
				t.Errorf("counts %v, want %v", got, want)
			}

			waiting := engine.JobListParams{Statuses: engine.QueuedLikeStatuses, Creator: "bench", MaxID: 1 << 40, Limit: 50}
			parts := s.jobListParts(waiting)
			if len(parts) != b.parts {
				t.Fatalf("%v is listed in %d statements, want %d", waiting.Statuses, len(parts), b.parts)
			}
			// SQLite reads a limited listing down its primary key, newest
			// first, whatever the statements: only PostgreSQL's plans are
			// the split's to keep.
			for _, q := range parts {
				if s.dialect.name != "postgres" {
					break
				}
				a := s.jobListArgs(q)
				a["limit"] = limitOrAll(q.Limit)
				if plan := planOf(t, s, jobListQueryName(q.Sort, true, false), a); !b.live.MatchString(plan) {
					t.Errorf("a listing of %v reads no index of live jobs:\n%s", q.Statuses, plan)
				}
			}
			jobs, err := s.JobList(t.Context(), waiting)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 50 || jobs[0].Status != engine.StatusQueued {
				t.Errorf("listed %d jobs, want the newest 50 QUEUED", len(jobs))
			}
		})
	}
}

// A listing of live statuses that lie in both of PostgreSQL's indexes of
// live jobs runs a statement for each and merges them: the same jobs in
// the same order as the one statement that reads every status, for every
// sort, limit and brief listing.
func TestPostgresLiveListingsMergeAsOneStatement(t *testing.T) {
	t.Parallel()
	s := migrated(t, openStore(t, postgresSchemaDSN(t)))
	ctx := t.Context()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	statuses := []engine.Status{engine.StatusQueued, engine.StatusRunning, engine.StatusRestart,
		engine.StatusInstantiated, engine.StatusPaused, engine.StatusFinished}
	for i := range 30 {
		node := ""
		if i%3 == 0 {
			node = fmt.Sprintf("n%d", i%2)
		}
		j, err := s.JobInsert(ctx, engine.JobInsertParams{Type: []string{"noop", "exec", "sleep"}[i%3],
			Status: engine.StatusQueued, Load: float64(i%5) + 0.5, Priority: i%4 + 1, MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.db.ExecContext(ctx, s.db.Rebind(`UPDATE jobs SET status = ?, node = ?, created_at = ? WHERE id = ?`),
			string(statuses[i%len(statuses)]), node, s.dialect.timeArg(base.Add(time.Duration((i*7)%11)*time.Minute)), j.ID)
		if err != nil {
			t.Fatal(err)
		}
	}
	ids := func(jobs []*engine.Job) []int64 {
		out := make([]int64, len(jobs))
		for i, j := range jobs {
			out[i] = j.ID
		}
		return out
	}
	live := slices.DeleteFunc(slices.Clone(engine.AllStatuses), engine.Status.Terminal)
	sorts := []engine.JobSort{{}}
	for _, f := range engine.JobSortFields {
		sorts = append(sorts, engine.JobSort{Field: f.Name}, engine.JobSort{Field: f.Name, Desc: true})
	}
	for _, sets := range [][]engine.Status{engine.QueuedLikeStatuses, live, {engine.StatusRunning, engine.StatusQueued}} {
		for _, sort := range sorts {
			for _, limit := range []int{0, 1, 4, 9} {
				for _, brief := range []bool{false, true} {
					p := engine.JobListParams{Statuses: sets, Sort: sort, Limit: limit, Brief: brief}
					got, err := s.JobList(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					want, err := s.jobList(ctx, s.q, p)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(ids(got), ids(want)) {
						t.Errorf("%+v: listed %v, one statement lists %v", p, ids(got), ids(want))
					}
				}
			}
		}
	}
}

// SQLite reads the first page of a queue in the order of jobs_queue and
// stops at the page's end, instead of reading every fitting job of the
// queue through jobs_queue_load and sorting them all, which its planner
// would rather do without statistics.
func TestSQLiteDispatchPageReadsTheQueueInOrder(t *testing.T) {
	t.Parallel()
	s := migratedSQLite(t)
	for _, maxLoad := range []float64{2 * engine.MaxJobLoad, 10} {
		plan := planOf(t, s, qJobListDispatchable, args{"status": string(engine.StatusQueued),
			"type": engine.TypeNoop, "limit": int64(1000), "max_load": maxLoad, "load_above": -1.0})
		if !strings.Contains(plan, "SEARCH jobs USING INDEX jobs_queue ") || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("the first page of a queue, loads up to %v, is not read in the order of jobs_queue:\n%s", maxLoad, plan)
		}
	}
}

// SQLite fills a temporary index for an IN list of more than two values in
// a trigger's WHEN clause or a partial index's WHERE clause anew for every
// row a write changes. The triggers and the partial indexes that a job's
// writes run through state their tests without one (migrations 018 and
// 022).
func TestSQLiteJobWritesTestStatesWithoutINLists(t *testing.T) {
	t.Parallel()
	s := migratedSQLite(t)
	for _, name := range []string{"jobs_record_attempt", "jobs_keep_final_attempt", "jobs_take_late_result",
		"jobs_ended", "jobs_type_measured", "jobs_live_key_id"} {
		var def string
		if err := s.db.GetContext(t.Context(), &def, "SELECT sql FROM sqlite_schema WHERE name = ?", name); err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		if strings.Contains(strings.ToUpper(def), " IN (") {
			t.Errorf("%s tests a state with an IN list:\n%s", name, def)
		}
	}
}
