package dbstore

import (
	"strconv"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// The parameters of job_update_many: one value per transition of each
// field, so the statement text is the same whatever the batch. An unset
// optional field travels as NULL (an absent key in JSON), a flag off as
// false (absent).

// jobUpdateArrays are PostgreSQL arrays, one per column of the unnest.
// The fields most transitions leave unset, a flag off among them (NULL
// reads as false), are sparse (newPGSparse).
func jobUpdateArrays(us []engine.JobUpdate) args {
	n := len(us)
	var (
		ids, versions     = newPGArray(n, 8), newPGArray(n, 2)
		from, to          = newPGArray(n, 9), newPGArray(n, 9)
		nodes, messages   = newPGSparse(n, 8), newPGSparse(n, 4)
		exitCodes         = newPGSparse(n, 4)
		runAfter          = newPGSparse(n, 4)
		increment, rebase = newPGSparse(n, 1), newPGSparse(n, 1)
		clear, queued     = newPGSparse(n, 1), newPGSparse(n, 1)
		started, finished = newPGSparse(n, 1), newPGSparse(n, 1)
		owners            = newPGSparse(n, 8)
		terms             = newPGSparse(n, 4)
		cpu, walls        = newPGSparse(n, 8), newPGSparse(n, 8)
		peaks             = newPGSparse(n, 8)
		ooms              = newPGSparse(n, 1)
	)
	for _, u := range us {
		ids.int(u.ID)
		versions.int(u.Version)
		from.text(string(u.From))
		to.text(string(u.To))
		nodes.optText(u.Node)
		messages.optText(u.Message)
		if u.ExitCode != nil {
			exitCodes.int(int64(*u.ExitCode))
		} else {
			exitCodes.null()
		}
		runAfter.optFloat(u.RunAfterSeconds)
		increment.flag(u.IncrementAttempt)
		rebase.flag(u.RebaseAttempts)
		clear.flag(u.ClearResult)
		queued.flag(u.MarkQueued)
		started.flag(u.MarkStarted)
		finished.flag(u.MarkFinished)
		leaseTerm(owners, terms, u.StartedUnder)
		if us := u.Usage; us != nil {
			cpu.float(us.CPUSeconds)
			peaks.int(us.PeakMemory)
			walls.float(us.WallSeconds)
			ooms.bool(us.OOMKilled)
		} else {
			cpu.null()
			peaks.null()
			walls.null()
			ooms.null()
		}
	}
	return args{
		"ids":                ids.String(),
		"versions":           versions.String(),
		"from_statuses":      from.String(),
		"to_statuses":        to.String(),
		"nodes":              nodes.String(),
		"increment_attempts": increment.String(),
		"rebase_attempts":    rebase.String(),
		"exit_codes":         exitCodes.String(),
		"messages":           messages.String(),
		"run_after_seconds":  runAfter.String(),
		"clear_results":      clear.String(),
		"mark_queued":        queued.String(),
		"mark_started":       started.String(),
		"mark_finished":      finished.String(),
		"lease_owners":       owners.String(),
		"lease_terms":        terms.String(),
		"cpu_seconds":        cpu.String(),
		"peak_memory":        peaks.String(),
		"wall_seconds":       walls.String(),
		"oom_killed":         ooms.String(),
	}
}

// leaseTerm adds the lease term a transition starts a job under to the
// arrays of its owners and its terms, NULL in both when there is none.
func leaseTerm(owners, terms *pgArray, t *engine.LeaseTerm) {
	if t == nil {
		owners.null()
		terms.null()
		return
	}
	owners.text(t.Owner)
	terms.int(t.Term)
}

// plainStart reports whether u is a start as engine.QueuedStartUpdate makes
// it, under a lease term or not: what job_start_many applies.
func plainStart(u engine.JobUpdate) bool {
	return u.To == engine.StatusRunning && u.Node != nil && u.IncrementAttempt && u.MarkStarted &&
		!u.RebaseAttempts && u.ExitCode == nil && u.Usage == nil && u.RunAfterSeconds == nil &&
		!u.ClearResult && !u.MarkQueued && !u.MarkFinished && u.Priority == nil && !u.LateResult
}

// plainEnd reports whether u starts no attempt and clears no result, as
// the end of a run (engine.OutcomeUpdate) does: what job_end_many applies.
func plainEnd(u engine.JobUpdate) bool {
	return !u.IncrementAttempt && !u.RebaseAttempts && !u.ClearResult && !u.MarkQueued && !u.MarkStarted &&
		u.Priority == nil && u.StartedUnder == nil && !u.LateResult
}

// every reports whether every transition of us is plain.
func every(us []engine.JobUpdate, plain func(engine.JobUpdate) bool) bool {
	for _, u := range us {
		if !plain(u) {
			return false
		}
	}
	return true
}

// jobStartArrays are the PostgreSQL arrays of job_start_many, for starts
// that are each plainStart.
func jobStartArrays(us []engine.JobUpdate) args {
	n := len(us)
	var (
		ids, versions   = newPGArray(n, 8), newPGArray(n, 2)
		from            = newPGArray(n, 9)
		nodes, messages = newPGArray(n, 8), newPGArray(n, 4)
		owners, terms   = newPGSparse(n, 8), newPGSparse(n, 4)
	)
	for _, u := range us {
		ids.int(u.ID)
		versions.int(u.Version)
		from.text(string(u.From))
		nodes.optText(u.Node)
		messages.optText(u.Message)
		leaseTerm(owners, terms, u.StartedUnder)
	}
	return args{
		"ids":           ids.String(),
		"versions":      versions.String(),
		"from_statuses": from.String(),
		"nodes":         nodes.String(),
		"messages":      messages.String(),
		"lease_owners":  owners.String(),
		"lease_terms":   terms.String(),
	}
}

// jobInsertArrays are the PostgreSQL arrays of job_insert_arrays, one per
// column, from the rows of jobInsertRow. The fields most jobs leave at
// their zero value (no operation, key, parent, rollback, delay, backoff or
// memory limit) are sparse (newPGSparse): NULL for the zero value, which
// the statement reads back as it.
func jobInsertArrays(rows []insertRow) args {
	n := len(rows)
	var (
		types, operations = newPGArray(n, 8), newPGSparse(n, 4)
		argv, payloads    = newPGArray(n, 4), newPGArray(n, 4)
		statuses, keys    = newPGArray(n, 8), newPGSparse(n, 4)
		rollbacks         = newPGSparse(n, 4)
		rollbackTypes     = newPGSparse(n, 4)
		creators          = newPGArray(n, 8)
		loads, backoffs   = newPGArray(n, 1), newPGSparse(n, 1)
		timeouts          = newPGArray(n, 5)
		maxAttempts       = newPGArray(n, 1)
		parents           = newPGSparse(n, 4)
		runAfters         = newPGSparse(n, 8)
		priorities        = newPGArray(n, 1)
		memoryLimits      = newPGSparse(n, 4)
	)
	for _, r := range rows {
		types.text(r.typ)
		operations.nonZeroText(r.operation)
		argv.text(r.args)
		payloads.text(r.payload)
		statuses.text(r.status)
		keys.nonZeroText(r.key)
		rollbacks.nonZeroText(r.rollback)
		rollbackTypes.nonZeroText(r.rollbackType)
		creators.text(r.creator)
		loads.float(r.load)
		backoffs.nonZeroFloat(r.backoffSeconds)
		timeouts.float(r.timeoutSeconds)
		maxAttempts.int(int64(r.maxAttempts))
		parents.optInt(r.parentID)
		if t, ok := r.runAfter.(time.Time); ok {
			runAfters.text(t.UTC().Format(time.RFC3339Nano))
		} else {
			runAfters.null()
		}
		priorities.int(int64(r.priority))
		memoryLimits.nonZeroInt(r.memoryLimit)
	}
	return args{
		"types": types.String(), "operations": operations.String(), "args": argv.String(),
		"payloads": payloads.String(), "loads": loads.String(), "statuses": statuses.String(),
		"job_keys": keys.String(), "parent_ids": parents.String(), "max_attempts": maxAttempts.String(),
		"backoff_seconds": backoffs.String(), "rollbacks": rollbacks.String(), "run_afters": runAfters.String(),
		"timeout_seconds": timeouts.String(), "creators": creators.String(),
		"rollback_types": rollbackTypes.String(), "priorities": priorities.String(),
		"memory_limits": memoryLimits.String(),
	}
}

// The bits of a transition's flags, which travel as one number in the
// parameters of the MySQL and SQLite statements (jobUpdatesJSON,
// jobUpdateTuplesJSON), as mysql/job_update_many.sql and
// sqlite/job_update_many_set.sql read them.
const (
	flagIncrementAttempt = 1 << iota
	flagRebaseAttempts
	flagClearResult
	flagMarkQueued
	flagMarkStarted
	flagMarkFinished
)

// jobUpdateFlags is the number of u's flags.
func jobUpdateFlags(u engine.JobUpdate) int64 {
	var flags int64
	for _, f := range [...]struct {
		bit int64
		on  bool
	}{
		{flagIncrementAttempt, u.IncrementAttempt},
		{flagRebaseAttempts, u.RebaseAttempts},
		{flagClearResult, u.ClearResult},
		{flagMarkQueued, u.MarkQueued},
		{flagMarkStarted, u.MarkStarted},
		{flagMarkFinished, u.MarkFinished},
	} {
		if f.on {
			flags |= f.bit
		}
	}
	return flags
}

// jobUpdatesJSON is the JSON array of the MySQL statement: one object per
// transition, with the keys it reads.
func jobUpdatesJSON(us []engine.JobUpdate) string {
	b := make([]byte, 0, 96*len(us))
	b = append(b, '[')
	for i, u := range us {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, u.ID, 10)
		b = append(b, `,"version":`...)
		b = strconv.AppendInt(b, u.Version, 10)
		b = append(b, `,"from":`...)
		b = appendJSONString(b, string(u.From))
		b = append(b, `,"to":`...)
		b = appendJSONString(b, string(u.To))
		if u.Node != nil {
			b = append(b, `,"node":`...)
			b = appendJSONString(b, *u.Node)
		}
		if u.ExitCode != nil {
			b = append(b, `,"exit_code":`...)
			b = strconv.AppendInt(b, int64(*u.ExitCode), 10)
		}
		if u.Message != nil {
			b = append(b, `,"message":`...)
			b = appendJSONString(b, *u.Message)
		}
		if u.RunAfterSeconds != nil {
			b = append(b, `,"run_after_seconds":`...)
			b = strconv.AppendFloat(b, *u.RunAfterSeconds, 'g', -1, 64)
		}
		if t := u.StartedUnder; t != nil {
			b = append(b, `,"lease_owner":`...)
			b = appendJSONString(b, t.Owner)
			b = append(b, `,"lease_term":`...)
			b = strconv.AppendInt(b, t.Term, 10)
		}
		if us := u.Usage; us != nil {
			b = append(b, `,"cpu_seconds":`...)
			b = strconv.AppendFloat(b, us.CPUSeconds, 'g', -1, 64)
			b = append(b, `,"peak_memory":`...)
			b = strconv.AppendInt(b, us.PeakMemory, 10)
			b = append(b, `,"wall_seconds":`...)
			b = strconv.AppendFloat(b, us.WallSeconds, 'g', -1, 64)
			if us.OOMKilled {
				b = append(b, `,"oom_killed":1`...)
			} else {
				b = append(b, `,"oom_killed":0`...)
			}
		}
		// The flags travel as one number: MariaDB's JSON_TABLE looks each
		// column's key up from the object's start, and a key per flag cost
		// a look through every key for each flag that was off (absent).
		if flags := jobUpdateFlags(u); flags != 0 {
			b = append(b, `,"flags":`...)
			b = strconv.AppendInt(b, flags, 10)
		}
		b = append(b, '}')
	}
	return string(append(b, ']'))
}

// jobUpdateTuplesJSON is the JSON array of the SQLite statement: one array
// per transition, its fields by position in the order of
// job_update_many_set's columns, null where a field is unset, and the six
// flags as the bits of one number (jobUpdateFlags). SQLite finds
// an element of an array by position without comparing keys, and the text
// is shorter: a batch costs it a quarter less than objects with named keys.
// Each element it extracts costs a walk over the ones before it, so the
// flags are one element, not six.
func jobUpdateTuplesJSON(us []engine.JobUpdate) string {
	b := make([]byte, 0, 64*len(us))
	b = append(b, '[')
	flag := func(on bool) byte {
		if on {
			return '1'
		}
		return '0'
	}
	for i, u := range us {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, u.ID, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, u.Version, 10)
		b = append(b, ',')
		b = appendJSONString(b, string(u.From))
		b = append(b, ',')
		b = appendJSONString(b, string(u.To))
		b = append(b, ',')
		if u.Node != nil {
			b = appendJSONString(b, *u.Node)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, ',')
		if u.ExitCode != nil {
			b = strconv.AppendInt(b, int64(*u.ExitCode), 10)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, ',')
		if u.Message != nil {
			b = appendJSONString(b, *u.Message)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, ',')
		if u.RunAfterSeconds != nil {
			b = strconv.AppendFloat(b, *u.RunAfterSeconds, 'g', -1, 64)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, ',')
		b = strconv.AppendInt(b, jobUpdateFlags(u), 10)
		switch t := u.StartedUnder; {
		case t != nil:
			b = append(b, ',')
			b = appendJSONString(b, t.Owner)
			b = append(b, ',')
			b = strconv.AppendInt(b, t.Term, 10)
		case u.Usage != nil:
			b = append(b, ",null,null"...)
		}
		if us := u.Usage; us != nil {
			b = append(b, ',')
			b = strconv.AppendFloat(b, us.CPUSeconds, 'g', -1, 64)
			b = append(b, ',')
			b = strconv.AppendInt(b, us.PeakMemory, 10)
			b = append(b, ',')
			b = strconv.AppendFloat(b, us.WallSeconds, 'g', -1, 64)
			b = append(b, ',', flag(us.OOMKilled))
		}
		b = append(b, ']')
	}
	return string(append(b, ']'))
}

// jobIDsJSON is the JSON array of the updates' job ids, in their order.
func jobIDsJSON(us []engine.JobUpdate) string {
	b := make([]byte, 0, 8*len(us)+2)
	b = append(b, '[')
	for i, u := range us {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, u.ID, 10)
	}
	return string(append(b, ']'))
}

// appendJSONString appends s as a JSON string. s is valid UTF-8 (see
// checkJobUpdate), so only quotes, backslashes and control characters need
// escaping.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
