package engine

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on a job's fields, the same on every backend and checked before
// anything is written (ValidateJobInsert), so PostgreSQL, MySQL/MariaDB,
// SQLite and the in-memory store refuse the same input with the same
// message. They fit the narrowest column of any backend: MySQL's
// VARCHAR(255) (characters, in utf8mb4) for names and keys, its TEXT (64
// KiB) for the rollback spec, and 32-bit INT for attempts; args and
// payload are LONGTEXT there and TEXT elsewhere, bounded here so one job
// cannot fill a node's memory.
const (
	MaxNameLength    = 255       // type, operation, key, creator: characters
	MaxArgs          = 10000     // how many args
	MaxArgsBytes     = 256 << 10 // the args as JSON
	MaxPayloadBytes  = 1 << 20   // the payload JSON
	MaxRollbackBytes = 60 << 10  // the rollback spec
	MaxAttemptsLimit = 1000
	MaxJobLoad       = 1e9
	MaxJobTimeout    = 366 * 24 * time.Hour
	MaxJobBackoff    = MaxBackoff
	// A job's memory limit (submit --memory): 0 for none, else at least a
	// mebibyte, below which no program starts, and at most a pebibyte.
	MinMemoryLimit     = 1 << 20
	MaxMemoryLimit     = 1 << 50
	latestRunAfterYear = 9999
)

// NameProblem says what is wrong with a name or key field (a job type,
// operation, key or creator), or "" when nothing is. Names
// are shown in listings and logs, so control characters (a newline, a
// terminal escape) are refused along with what no column can hold.
func NameProblem(field, v string, required bool) string {
	switch {
	case required && strings.TrimSpace(v) == "":
		return field + " is empty"
	case !utf8.ValidString(v):
		return field + " is not valid UTF-8"
	case utf8.RuneCountInString(v) > MaxNameLength:
		return fmt.Sprintf("%s is longer than %d characters", field, MaxNameLength)
	case strings.ContainsFunc(v, unicode.IsControl):
		return field + " contains control characters"
	}
	return ""
}
