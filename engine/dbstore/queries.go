package dbstore

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
	jobsql "github.com/jobctl/jobctl/sql"
)

// Query names: the files of sql/queries without ".sql".
const (
	qDBNow                    = "db_now"
	qJobInsert                = "job_insert"
	qJobGet                   = "job_get"
	qJobExists                = "job_exists"
	qJobList                  = "job_list" // rendered per shape: see jobListQueryName
	qJobUpdate                = "job_update"
	qJobUpdateMany            = "job_update_many"
	qJobUpdateManyLock        = "job_update_many_lock"
	qJobUpdateManyRead        = "job_update_many_read"
	qJobUpdateManyStarted     = "job_update_many_started"      // its variant "started" (JobStartMany)
	qJobUpdateManyReadStarted = "job_update_many_read_started" // the same
	qJobUpdateManyIDs         = "job_update_many_ids"
	qJobProgressSet           = "job_progress_set"
	qJobListDispatchable      = "job_list_dispatchable"
	qJobListDispatchableAfter = "job_list_dispatchable_after"
	qJobListFirstChildren     = "job_list_first_children"
	qJobQueueLoads            = "job_queue_loads"
	qJobInsertArrays          = "job_insert_arrays"
	qJobLoadsByNode           = "job_loads_by_node"
	qJobLogAppend             = "job_log_append"
	qJobLogList               = "job_log_list"
	qNodeInsertAbsent         = "node_insert_absent"
	qNodeTakeover             = "node_takeover"
	qNodeGet                  = "node_get"
	qNodeList                 = "node_list"
	qNodeTouch                = "node_touch"
	qNodeSetState             = "node_set_state"
	qNodeSetMaintenance       = "node_set_maintenance"
	qLeaseAcquire             = "lease_acquire"
	qLeaseRelease             = "lease_release"
	qLeaseGet                 = "lease_get"
	qLeaseTermGet             = "lease_term_get"
	qLeaseTermCurrent         = "lease_term_current"
	qSettingGet               = "setting_get"
	qSettingInsertAbsent      = "setting_insert_absent"
	qSchemaMigrationsCreate   = "schema_migrations_create"
	qSchemaMigrationsExists   = "schema_migrations_exists"
	qSchemaMigrationsList     = "schema_migrations_list"
	qSchemaMigrationApplied   = "schema_migration_applied"
	qSchemaMigrationInsert    = "schema_migration_insert"
	qSchemaMigrationDelete    = "schema_migration_delete"
	qSchemaVersion            = "schema_version"
	qJobSubmit                = "job_submit"
	qJobSubmitOffered         = "job_submit_offered"
	qReservationList          = "reservation_list"
	qReservationNodeHolder    = "reservation_node_holder"
	qReservationDelete        = "reservation_delete"
	qReservationInsert        = "reservation_insert"
	qMigrateLock              = "migrate_lock"
	qMigrateUnlock            = "migrate_unlock"
	qNodeTouched              = "node_touched"
	qMigrateTxLock            = "migrate_tx_lock"
	qNodeSetBeatMissed        = "node_set_beat_missed"

	qJobInsertMany         = "job_insert_many"
	qJobStartMany          = "job_start_many"
	qJobEndMany            = "job_end_many"
	qJobInsertRow          = "job_insert_row"
	qJobIDsFrom            = "job_ids_from"
	qJobIDsExisting        = "job_ids_existing"
	qJobCountByStatus      = "job_count_by_status"
	qJobCountLiveByStatus  = "job_count_live_by_status"
	qJobTimes              = "job_times"
	qJobPurgeCandidates    = "job_purge_candidates"
	qJobPurgeChildrenOf    = "job_purge_children_of"
	qJobPurgeDelete        = "job_purge_delete"
	qNodeRemove            = "node_remove"
	qReservationDeleteNode = "reservation_delete_node"
	qJobChangesSchema      = "job_changes_schema"

	qTypeLimitSet    = "type_limit_set"
	qTypeLimitList   = "type_limit_list"
	qTypeLimitDelete = "type_limit_delete"

	qJobListRollbackPending = "job_list_rollback_pending"
	qJobRollbackSet         = "job_rollback_set"
)

// requiredQueries are the queries every dialect must have; loading fails
// without one, so a missing file shows at Open, not deep in a dispatch round.
var requiredQueries = []string{
	qDBNow, qJobInsert, qJobGet, qJobExists, qJobList, qJobUpdate, qJobProgressSet,
	qJobListDispatchable, qJobListDispatchableAfter, qJobListFirstChildren, qJobQueueLoads, qJobLoadsByNode, qJobLogAppend, qJobLogList, qNodeInsertAbsent, qNodeTakeover, qNodeGet,
	qNodeList, qNodeTouch, qNodeSetState, qNodeSetMaintenance, qNodeSetBeatMissed, qLeaseAcquire, qLeaseRelease, qLeaseGet, qLeaseTermGet,
	qSettingGet,
	qSettingInsertAbsent, qSchemaMigrationsCreate, qSchemaMigrationsExists, qSchemaMigrationsList,
	qSchemaMigrationApplied, qSchemaMigrationInsert, qSchemaMigrationDelete, qSchemaVersion, qJobSubmit,
	qReservationList, qReservationNodeHolder, qReservationDelete, qReservationInsert,
	qJobInsertMany, qJobInsertRow, qJobIDsFrom, qJobIDsExisting, qJobCountByStatus, qJobCountLiveByStatus, qJobTimes, qJobPurgeCandidates,
	qJobPurgeChildrenOf, qJobPurgeDelete, qNodeRemove, qReservationDeleteNode,
	qJobUpdateMany,
	qTypeLimitSet, qTypeLimitList, qTypeLimitDelete,
	qJobAttemptList, qJobAttemptUsageList, qJobAttemptUsageType, qJobPurgeAttempts,
	qJobListRollbackPending, qJobRollbackSet,
}

// loadQueries renders every query of the dialect: the .sql files are
// templates in which {{now}} and {{nowPlus ":param"}} become the dialect's
// clock and {{template "name"}} includes another file. job_list is
// rendered once per shape (renderJobLists).
func loadQueries(d *dialect) (map[string]string, error) {
	files, err := jobsql.Queries(d.name)
	if err != nil {
		return nil, err
	}
	root := template.New("").Option("missingkey=error").Funcs(template.FuncMap{
		"now":      func() string { return d.now },
		"nowPlus":  d.nowPlus,
		"statuses": statusList,
		"statusOneOf": func(column, set string) (string, error) {
			return statusOneOf(d, column, set)
		},
		"statusNoneOf": func(column, set string) (string, error) {
			return statusNoneOf(d, column, set)
		},
		"has": hasWord,
	})
	names := make([]string, 0, len(files))
	for name, body := range files {
		if _, err := root.New(name).Parse(body); err != nil {
			return nil, fmt.Errorf("sql/queries %s (%s): %w", name, d.name, err)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	out := make(map[string]string, len(files))
	for _, name := range names {
		if name == qJobList {
			lists, err := renderJobLists(root, d)
			if err != nil {
				return nil, err
			}
			for n, q := range lists {
				if err := checkColons(q); err != nil {
					return nil, fmt.Errorf("sql/queries %s (%s): %w", n, d.name, err)
				}
				out[n] = q
			}
			continue
		}
		var b strings.Builder
		if err := root.ExecuteTemplate(&b, name, nil); err != nil {
			return nil, fmt.Errorf("sql/queries %s (%s): %w", name, d.name, err)
		}
		q := strings.TrimSpace(b.String())
		if err := checkColons(q); err != nil {
			return nil, fmt.Errorf("sql/queries %s (%s): %w", name, d.name, err)
		}
		out[name] = q
	}
	for name, datas := range queryVariants {
		if root.Lookup(name) == nil {
			continue // a query of other dialects only
		}
		for _, data := range datas {
			var b strings.Builder
			if err := root.ExecuteTemplate(&b, name, data); err != nil {
				return nil, fmt.Errorf("sql/queries %s (%s) with %q: %w", name, d.name, data, err)
			}
			q := strings.TrimSpace(b.String())
			if err := checkColons(q); err != nil {
				return nil, fmt.Errorf("sql/queries %s (%s) with %q: %w", name, d.name, data, err)
			}
			out[variantName(name, data)] = q
		}
	}
	required := append(slices.Clip(requiredQueries), scheduleQueries...)
	required = append(required, eventQueries...)
	if d.migrationLock {
		required = append(slices.Clip(required), qMigrateLock, qMigrateUnlock)
	}
	if d.migrationTxLock {
		required = append(slices.Clip(required), qMigrateTxLock)
	}
	if d.updateReturns {
		required = append(slices.Clip(required), qJobUpdateManyIDs, qJobUpdateManyStarted)
	} else {
		required = append(slices.Clip(required), qJobUpdateManyLock, qJobUpdateManyRead, qJobUpdateManyReadStarted, qLeaseTermCurrent, qNodeTouched)
	}
	if !d.insertReturnsID {
		required = append(slices.Clip(required), qJobSubmitOffered)
	}
	if d.notifiesJobChanges {
		required = append(slices.Clip(required), qJobChangesSchema)
	}
	if d.sendsArrays {
		required = append(slices.Clip(required), qJobInsertArrays, qJobStartMany, qJobEndMany)
	}
	for _, name := range required {
		if _, ok := out[name]; !ok {
			return nil, fmt.Errorf("sql/queries: no %s.sql for %s", name, d.name)
		}
	}
	return out, nil
}

// queryVariants are queries rendered once more for each of these data,
// space-separated words their templates test with "has", under the name
// variantName gives. A filter that only some calls use is then in the
// text only when used, where a flag that switches it off would hide it
// from SQLite's planner, which cannot see past a bound parameter; and a
// batch of a node's starts reads back fewer columns ("started") through
// the statement every other batch runs. A dialect renders the variants of
// the queries it has.
var queryVariants = map[string][]string{
	qJobPurgeCandidates: {"before", "range", "after", "before range", "before after"},
	qJobUpdateMany:      {"started"},
	qJobUpdateManyRead:  {"started"},
}

// variantName names a query rendered with data: "job_purge_candidates"
// with "before range" is "job_purge_candidates_before_range".
func variantName(name, data string) string {
	if data == "" {
		return name
	}
	return name + "_" + strings.Join(strings.Fields(data), "_")
}

// hasWord reports whether a template's data, a string of space-separated
// words (nil for none), holds word.
func hasWord(data any, word string) bool {
	s, _ := data.(string)
	return slices.Contains(strings.Fields(s), word)
}

// statusList renders one of the engine's status sets (engine.StatusSets)
// as an SQL list, so every query uses the very sets the Go rules use.
func statusList(set string) (string, error) {
	statuses, ok := engine.StatusSets[set]
	if !ok {
		return "", fmt.Errorf("no status set %q", set)
	}
	quoted := make([]string, len(statuses))
	for i, st := range statuses {
		quoted[i] = "'" + string(st) + "'"
	}
	return "(" + strings.Join(quoted, ", ") + ")", nil
}

// statusOneOf renders "column holds one of the set's statuses" as the
// dialect's partial indexes of ended jobs state it, which a query must
// repeat for the planner to read them: comparisons joined by OR where the
// dialect writes sets so (setsAsComparisons), else an IN list.
func statusOneOf(d *dialect, column, set string) (string, error) {
	if !d.setsAsComparisons {
		list, err := statusList(set)
		return column + " IN " + list, err
	}
	terms, err := statusComparisons(column, "=", set)
	return "(" + strings.Join(terms, " OR ") + ")", err
}

// statusNoneOf renders "column holds none of the set's statuses" as the
// dialect's index of live keys states it, which a query must repeat for the
// planner to read it: one comparison per status joined by AND where the
// dialect writes sets so (setsAsComparisons; SQLite matches each term of a
// partial index's WHERE on its own), else a NOT IN list.
func statusNoneOf(d *dialect, column, set string) (string, error) {
	if !d.setsAsComparisons {
		list, err := statusList(set)
		return column + " NOT IN " + list, err
	}
	terms, err := statusComparisons(column, "<>", set)
	return strings.Join(terms, " AND "), err
}

// statusComparisons compares column with each status of the set by op.
func statusComparisons(column, op, set string) ([]string, error) {
	statuses, ok := engine.StatusSets[set]
	if !ok {
		return nil, fmt.Errorf("no status set %q", set)
	}
	terms := make([]string, len(statuses))
	for i, st := range statuses {
		terms[i] = column + " " + op + " '" + string(st) + "'"
	}
	return terms, nil
}

// checkColons refuses a ':' that does not start a :parameter, and any ':'
// in a "--" comment. Queries are bound by name (sqlx), which reads every ':'
// outside of "::" as the start of a parameter, even in a comment or a string
// literal; a stray one would silently shift the parameters, and a comment
// naming one (":limit") would bind it twice.
func checkColons(q string) error {
	for i := 0; i < len(q); i++ {
		if strings.HasPrefix(q[i:], "--") {
			end := strings.IndexByte(q[i:], '\n')
			if end < 0 {
				end = len(q) - i
			}
			if strings.Contains(q[i:i+end], ":") {
				line := strings.Count(q[:i], "\n") + 1
				return fmt.Errorf("line %d: ':' in a comment, which the binding reads as a parameter; reword the comment", line)
			}
			i += end
			continue
		}
		if q[i] != ':' {
			continue
		}
		if i+1 < len(q) && q[i+1] == ':' {
			i++ // "::" is a literal ':'
			continue
		}
		if i+1 < len(q) && (q[i+1] == '_' || q[i+1] >= 'a' && q[i+1] <= 'z' || q[i+1] >= 'A' && q[i+1] <= 'Z') {
			continue
		}
		line := strings.Count(q[:i], "\n") + 1
		return fmt.Errorf("line %d: ':' that does not start a :parameter (write '::' for a literal colon)", line)
	}
	return nil
}

// boundQuery is a query compiled once for its dialect: sqlx.Named and Rebind
// would otherwise parse the text again on every call, which costs more than
// many of the statements themselves take on the server. A call only gathers
// its values in the order of names.
type boundQuery struct {
	text     string   // positional, in the driver's placeholder form
	question string   // positional with '?', for sqlx.In to expand lists in
	names    []string // the named parameter of each placeholder, in order
}

// compiled holds each dialect's queries, rendered and compiled once per
// process (see dialectQueries).
var compiled sync.Map // *dialect → *compiledQueries

type compiledQueries struct {
	once    sync.Once
	queries map[string]*boundQuery
	err     error
}

// dialectQueries renders and compiles the dialect's queries the first
// time a store of it opens: they depend on the dialect alone, and stores
// only read them, so every store of the process shares them.
func dialectQueries(d *dialect) (map[string]*boundQuery, error) {
	v, _ := compiled.LoadOrStore(d, &compiledQueries{})
	c := v.(*compiledQueries)
	c.once.Do(func() {
		texts, err := loadQueries(d)
		if err == nil {
			c.queries, err = bindQueries(texts, sqlx.BindType(d.driver))
		}
		c.err = err
	})
	return c.queries, c.err
}

// bindQueries compiles every rendered query for bindType (sqlx.BindType of
// the dialect's driver).
func bindQueries(texts map[string]string, bindType int) (map[string]*boundQuery, error) {
	out := make(map[string]*boundQuery, len(texts))
	for name, text := range texts {
		bq, err := bindQuery(text, bindType)
		if err != nil {
			return nil, fmt.Errorf("sql/queries %s: %w", name, err)
		}
		out[name] = bq
	}
	return out, nil
}

// bindQuery compiles one query with sqlx's own named-parameter rules: each
// parameter is bound to its index in a first pass, so the positional values
// sqlx.Named returns say which name every placeholder stands for.
func bindQuery(text string, bindType int) (*boundQuery, error) {
	unique := paramNames(text)
	index := make(map[string]any, len(unique))
	for i, n := range unique {
		index[n] = i
	}
	question, positions, err := sqlx.Named(text, index)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(positions))
	for i, p := range positions {
		names[i] = unique[p.(int)]
	}
	return &boundQuery{text: sqlx.Rebind(bindType, question), question: question, names: names}, nil
}

// paramNames lists the distinct :names of a query in order of first use.
// It reads names as sqlx does (letters, digits, '_' and '.'; "::" is a
// literal colon); a name it missed would make sqlx.Named fail at Open.
func paramNames(q string) []string {
	var names []string
	for i := 0; i < len(q); i++ {
		if q[i] != ':' {
			continue
		}
		if i+1 < len(q) && q[i+1] == ':' {
			i++
			continue
		}
		end := i + 1
		for end < len(q) && isParamByte(q[end]) {
			end++
		}
		if name := q[i+1 : end]; name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
		i = end - 1
	}
	return names
}

func isParamByte(b byte) bool {
	return b == '_' || b == '.' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// values gathers the parameters of one call in placeholder order.
func (bq *boundQuery) values(a args) ([]any, error) {
	if len(bq.names) == 0 {
		return nil, nil
	}
	out := make([]any, len(bq.names))
	for i, n := range bq.names {
		v, ok := a[n]
		if !ok {
			return nil, fmt.Errorf("no value for :%s", n)
		}
		out[i] = v
	}
	return out, nil
}
