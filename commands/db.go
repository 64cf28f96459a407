package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jobctl/jobctl/engine"
	jobsql "github.com/jobctl/jobctl/sql"
	"github.com/spf13/cobra"
)

// NewCmdDB builds `jobctl db` and its subcommands.
func NewCmdDB(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "Manage the database schema",
		Long: `Apply or inspect the schema migrations of the cluster's database. Every
command migrates a fresh database on first use; 'db migrate' does it
explicitly, for example before upgrading the nodes of a cluster.`,
		Example: `  # apply pending migrations
  jobctl db migrate

  # what is applied
  jobctl db status`,
		Args: subcommandArgs,
		RunE: showHelp,
	}
	cmd.AddCommand(NewCmdDBMigrate(f, nil), NewCmdDBStatus(f, nil))
	return cmd
}

// DBOptions are the parsed flags of `jobctl db migrate` and `db status`.
type DBOptions struct {
	IO       *IOStreams
	Open     func(ctx context.Context) (engine.Store, error) // without migrating
	DBChoice func() (DBChoice, error)
	Clock    engine.Clock

	Output outputOptions
}

// NewCmdDBMigrate builds `jobctl db migrate`. runF replaces the action in tests.
func NewCmdDBMigrate(f *Factory, runF func(context.Context, *DBOptions) error) *cobra.Command {
	opts := &DBOptions{IO: f.IO, Open: f.Open, Clock: f.Clock}
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending schema migrations",
		Long: `Apply pending schema migrations. It is safe to run while nodes are up and
from several machines at once: migrations run under a database lock.`,
		Example: `  # bring a PostgreSQL database up to date
  jobctl db migrate --db postgres://jobctl@db.example/jobctl`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return dbMigrateRun(cmd.Context(), opts)
		},
	}
}

func dbMigrateRun(ctx context.Context, opts *DBOptions) error {
	store, err := opts.Open(ctx)
	if err != nil {
		return err
	}
	before, err := store.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	after, err := store.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	applied := pending(before) - pending(after)
	version := 0
	for _, m := range after {
		if m.AppliedAt != nil {
			version = max(version, m.Version)
		}
	}
	if applied == 0 {
		fmt.Fprintf(opts.IO.Out, "%s database is up to date at version %d\n", store.Dialect(), version)
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "applied %d %s; %s database is at version %d\n",
		applied, plural(applied, "migration", "migrations"), store.Dialect(), version)
	return nil
}

func pending(ms []engine.Migration) int {
	n := 0
	for _, m := range ms {
		if m.AppliedAt == nil {
			n++
		}
	}
	return n
}

// NewCmdDBStatus builds `jobctl db status`. runF replaces the action in tests.
func NewCmdDBStatus(f *Factory, runF func(context.Context, *DBOptions) error) *cobra.Command {
	opts := &DBOptions{IO: f.IO, Open: f.Open, DBChoice: f.DBChoice, Clock: f.Clock}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Name the database in use and list its schema migrations",
		Long: `Name the database in use (without its password or parameters) and where
that choice came from: --db, $JOBCTL_DB, the config file, or the default
SQLite file. Then list every schema migration this jobctl knows and when
it was applied.

The database line heads the table on a terminal; otherwise it goes to
stderr, so stdout keeps only the table: its VERSION NAME APPLIED header row
(--no-headers drops it) and a tab-separated row per migration. -o json
prints an array of {version, name, applied_at}; applied_at is null for a
pending migration.
It only reads: for an SQLite file that does not exist it says so and lists
every migration pending, and creates nothing.`,
		Example: `  # which database, and is anything pending?
  jobctl db status

  # count the pending migrations
  jobctl db status -o json | jq 'map(select(.applied_at == null)) | length'`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return dbStatusRun(cmd.Context(), opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, false)
	addHeaderFlags(cmd)
	return cmd
}

func dbStatusRun(ctx context.Context, opts *DBOptions) error {
	ms, location, missing, err := migrationStatus(ctx, opts)
	if err != nil {
		return err
	}
	if opts.DBChoice != nil {
		choice, err := opts.DBChoice()
		if err != nil {
			return err
		}
		from := choiceFrom(choice)
		if missing {
			from += "; it does not exist yet: 'jobctl db migrate' creates it"
		}
		line := "database: " + location + " (" + from + ")\n"
		if opts.IO.OutIsTerminal && opts.Output.Format != formatJSON {
			fmt.Fprint(opts.IO.Out, line+"\n")
		} else {
			fmt.Fprint(opts.IO.ErrOut, line)
		}
	}
	if opts.Output.Format == formatJSON {
		if ms == nil {
			ms = []engine.Migration{}
		}
		return writeJSON(opts.IO.Out, ms)
	}
	ios, now := opts.IO, opts.Clock.Now()
	p := newPalette(ios)
	t := newReportTable(ios, "VERSION", "NAME", "APPLIED")
	for _, m := range ms {
		applied := timeCell(ios, now, m.AppliedAt)
		if m.AppliedAt == nil {
			applied = p.yellow("pending")
		}
		t.addRow(strconv.Itoa(m.Version), m.Name, applied)
	}
	return t.render()
}

// migrationStatus reads the migrations of the database in use and names
// it. An SQLite file that does not exist (missing) has every migration
// pending: it is reported so, not created.
func migrationStatus(ctx context.Context, opts *DBOptions) (ms []engine.Migration, location string, missing bool, err error) {
	store, err := opts.Open(ctx)
	var absent *NoDatabaseError
	if errors.As(err, &absent) && absent.Err != nil {
		known, err := jobsql.Migrations("sqlite")
		if err != nil {
			return nil, "", false, err
		}
		ms = make([]engine.Migration, len(known))
		for i, m := range known {
			ms[i] = engine.Migration{Version: m.Version, Name: m.Name}
		}
		return ms, absent.Location, true, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	ms, err = store.MigrationStatus(ctx)
	return ms, storeLocation(store), false, err
}

// storeLocation names the database a store is on, without a password.
func storeLocation(store engine.Store) string {
	if l, ok := store.(interface{ Location() string }); ok {
		return l.Location()
	}
	return store.Dialect()
}

// choiceFrom says where the choice of the database came from.
func choiceFrom(c DBChoice) string {
	switch c.Source {
	case DBFromDefault:
		return "default"
	case DBFromConfig:
		return "from config file " + c.Path
	case DBFromFileFlag, DBFromFileEnv:
		return "from " + c.Source + " " + c.Path
	case DBFromCredential:
		return "from systemd credential " + DBCredential
	}
	return "from " + c.Source
}
