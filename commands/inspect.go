package commands

import (
	"fmt"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// inspectingCommands only read the cluster's database, so they never create
// one: run against a database that does not exist they say so and how to
// create it, rather than leave an empty database (and, for SQLite, a file
// and its directories) where a mistyped --db pointed. Shell completion,
// which asks the database for job ids, is among them.
var inspectingCommands = map[string]bool{
	"jobctl list":             true,
	"jobctl show":             true,
	"jobctl logs":             true,
	"jobctl events":           true,
	"jobctl nodes":            true,
	"jobctl nodes list":       true,
	"jobctl lease":            true,
	"jobctl lease show":       true,
	"jobctl explain":          true,
	"jobctl stats":            true,
	"jobctl top":              true,
	"jobctl wait":             true,
	"jobctl schedules":        true,
	"jobctl schedules list":   true,
	"jobctl schedules show":   true,
	"jobctl limits":           true,
	"jobctl limits ls":        true,
	"jobctl workflow":         true,
	"jobctl workflow list":    true,
	"jobctl workflow show":    true,
	"jobctl db status":        true,
	"jobctl __complete":       true,
	"jobctl __completeNoDesc": true,
}

// forCommand tells the factory which command runs, before it runs.
func (f *Factory) forCommand(cmd *cobra.Command) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inspecting = inspectingCommands[cmd.CommandPath()]
	f.appName = cmd.CommandPath()
}

// NoDatabaseError is a database an inspecting command found not created:
// an SQLite file that does not exist, or a server database without
// jobctl's tables. It matches engine.ErrNotFound (exit 3).
type NoDatabaseError struct {
	Location string // the database, without a password
	Err      error  // the store's own error, if any
}

func (e *NoDatabaseError) Error() string {
	what := "does not exist"
	if e.Err == nil {
		what = "has no jobctl tables"
	}
	return fmt.Sprintf("database %s %s; create it with 'jobctl db migrate' "+
		"(or run 'jobctl serve' or 'jobctl submit', which create it)", e.Location, what)
}

func (e *NoDatabaseError) Unwrap() error { return e.Err }

// Is lets errors.Is(err, engine.ErrNotFound) match.
func (e *NoDatabaseError) Is(target error) bool { return target == engine.ErrNotFound }
