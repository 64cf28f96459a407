package commands

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/jobuser"
	"github.com/jobctl/jobctl/engine/node"
)

// ServeOptions are the settings of `jobctl serve`.
type ServeOptions struct {
	Factory    *Factory
	Config     node.Config
	Services   []string // --service TYPE=COMMAND
	Prefer     []string // --prefer TYPE=NODE[,NODE...][@THRESHOLD]
	ConfigFile string
	LogLevel   string
	// DBMaxConns is --db-max-conns; 0 when not given, so the DSN's
	// pool_max_conns or the default applies.
	DBMaxConns int

	jobUsers []*jobuser.User // who jobs run as besides the node's own user

	// LoadAvgFile is where the node reads its load average, in the format
	// of /proc/loadavg (a hidden flag: a container's own view, or a test's).
	LoadAvgFile string
}

func newCmdServe(f *Factory) *cobra.Command {
	return NewCmdServe(f, nil)
}

// NewCmdServe builds `jobctl serve`; runF replaces the run step in tests.
func NewCmdServe(f *Factory, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{Factory: f, Config: node.Defaults()}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a node of the cluster",
		Long: `Run this machine as a node: register it, run the jobs dispatched to it, and take
part in electing the one dispatcher (unless --dispatch-interval is 0).

The node serves its dispatch endpoint on --listen. Jobs of type noop and sleep
always run; exec jobs run arbitrary commands and need --exec; other types come
from --service TYPE=COMMAND or the services of --config. On SIGINT or SIGTERM
the node stops accepting work, hands the lease over, lets running jobs finish
within --shutdown-grace and puts the rest back in the queue.

A node holds at most --db-max-conns connections to the database, however
many jobs run: a pool for its work, its liveness and the lease; one of its
own for its liveness and the lease only while every pool connection is at
job work; and one to LISTEN for job changes while it dispatches
(PostgreSQL). A node that does not hold the lease keeps one pool connection
open unused (for a fourth of its node lease, a little more than the time
between its liveness writes) and closes any other as soon as it is handed
back, unless its work keeps more going at once: then it keeps one more at
each liveness write that finds four or more closed since the last. The lease
holder keeps its own 5 seconds. So an idle node that does not hold the lease
keeps 1, a busy one 1 and one more for each statement at work at once, the
idle lease holder about 4. It appears to
PostgreSQL as application_name "jobctl serve NODE". Behind a transaction pooler such as
PgBouncer with pool_mode=transaction, add pooler=transaction to the DSN:
the dispatcher then polls every --dispatch-interval instead of listening.

Jobs run as the node's own user unless --job-user names another one (or a
service sets user: in --config). Such a job runs with that user's uid, gid
and groups, its HOME, USER and LOGNAME, in its home directory, and with
TMPDIR an empty directory of its own (mode 0700), removed when the attempt
ends. The node then needs root or the capabilities CAP_SETUID, CAP_SETGID,
CAP_CHOWN and CAP_KILL, and refuses to start without them (exit 2).

On Linux the node and its watchdog are closed to every other process without
CAP_SYS_PTRACE, those of their own user included: a job cannot read their
environment (/proc/PID/environ), memory or open files. Their command line
stays visible to all (ps), so give a database password in a file readable by
the node alone: --db-file FILE (or JOBCTL_DB_FILE), or the systemd credential
jobctl-db (LoadCredential=jobctl-db:/etc/jobctl/db). Once the database is
open the node removes JOBCTL_DB, JOBCTL_DB_FILE and PGPASSWORD from its
environment. A job run as the node's own user can still read every file that
user can; --job-user keeps it from them.

Every job process runs in a cgroup of its own where the machine lets the
node make one (cgroup v2 with the cpu and memory controllers delegated to
the node's cgroup, as systemd's Delegate=yes does; or the cgroup v1 cpu,
cpuacct and memory hierarchies, as root), which measures the CPU time and
peak memory of its whole process tree; elsewhere the node measures what
the kernel accounts of the processes a job reaps. What each run used is
kept with its attempt (see 'jobctl help usage').

--enforce also holds each job to its share: CPU in proportion to its load
when the node is busy (cpu.weight 100, cpu.shares 1024, a unit of load;
a job alone may still use idle cores), and its memory limit (submit
--memory, else its service's memory) as a hard limit without swap. A job
killed at its limit ends with the reason "killed: out of memory, limit
2GiB". The node says at its start, in one line, what it measures and what
it could and could not enforce, and why.

A --config service may set memory, the limit of its jobs that set none:

  services:
    transcode:
      command: ["/usr/local/bin/transcode", "--fast"]
      load: 2.5
      memory: 2GiB`,
		Example: `  # A one-machine cluster on the default SQLite database, running any command
  jobctl serve --exec

  # A node of a PostgreSQL cluster, reachable by the others, with a service type
  jobctl serve --db postgres://jobctl@db/jobctl --listen 0.0.0.0:7420 \
    --advertise http://node1:7420 --max-load 8 --service transcode='/usr/local/bin/transcode --fast'

  # A worker that never dispatches
  jobctl serve --dispatch-interval 0

  # Through PgBouncer in transaction mode, with at most 4 connections to it
  jobctl serve --db 'postgres://jobctl@pgbouncer:6432/jobctl?pooler=transaction' --db-max-conns 4

  # As root: jobs as the user build; the database's address in a file only root may read
  (umask 077; echo 'postgres://jobctl:SECRET@db/jobctl' > /etc/jobctl/db)
  jobctl serve --db-file /etc/jobctl/db --job-user build --exec

  # Hold every job to a CPU share from its load and to its memory limit
  sudo jobctl serve --exec --enforce`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Before any secret is read: no process of this user, a job
			// least of all, may read this one's memory or environment.
			if err := hideProcess(); err != nil {
				return err
			}
			// Machine-dependent defaults are applied here, not in the flag
			// definitions, so help and man pages read the same everywhere.
			machine := node.Defaults()
			if !cmd.Flags().Changed("node") {
				opts.Config.Name = machine.Name
			}
			if !cmd.Flags().Changed("max-load") {
				opts.Config.MaxLoad = machine.MaxLoad
			}
			for _, p := range opts.Prefer {
				pref, err := node.ParsePreferFlag(p)
				if err != nil {
					return usageErrorf(cmd, "%v", err)
				}
				opts.Config.Preferred = append(opts.Config.Preferred, pref)
			}
			for _, s := range opts.Services {
				svc, err := node.ParseServiceFlag(s)
				if err != nil {
					return usageErrorf(cmd, "%v", err)
				}
				opts.Config.Services = append(opts.Config.Services, svc)
			}
			if opts.ConfigFile != "" {
				fc, err := node.LoadConfigFile(opts.ConfigFile)
				if err != nil {
					return usageErrorf(cmd, "--config: %v", err)
				}
				opts.Config.Services = append(opts.Config.Services, fc.Services...)
				opts.Config.Preferred = append(opts.Config.Preferred, fc.Preferred...)
				if fc.DB != "" {
					opts.Factory.useConfigDB(fc.DB, opts.ConfigFile)
				}
			}
			if err := opts.Config.Validate(); err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			if err := checkHostPort("--listen", opts.Config.Listen); err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			if err := checkNodeName(opts.Config.Name); err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			if _, err := parseLogLevel(opts.LogLevel); err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			if cmd.Flags().Changed("db-max-conns") &&
				(opts.DBMaxConns < dbstore.MinMaxConns || opts.DBMaxConns > dbstore.MaxMaxConns) {
				return usageErrorf(cmd, "--db-max-conns %d: give a whole number from %d to %d",
					opts.DBMaxConns, dbstore.MinMaxConns, dbstore.MaxMaxConns)
			}
			users, err := opts.Config.JobUsers()
			if err != nil {
				return usageErrorf(cmd, "%v", err)
			}
			opts.jobUsers = users

			if opts.LoadAvgFile != "" {
				if _, err := os.Stat(opts.LoadAvgFile); err != nil {
					return usageErrorf(cmd, "--loadavg-file: %v", err)
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return serveRun(cmd.Context(), opts)
		},
	}
	c := &opts.Config
	fl := cmd.Flags()
	fl.StringVar(&c.Name, "node", "", "name of this node, unique in the cluster (default: host name)")
	fl.StringVar(&c.Listen, "listen", c.Listen, "address of the dispatch endpoint (port 0 picks a free one)")
	fl.StringVar(&c.Advertise, "advertise", "", "URL other nodes reach this node at (default: from --listen)")
	fl.Float64Var(&c.MaxLoad, "max-load", 0, "load this node carries at most (default: CPU threads)")
	fl.IntVar(&c.MaxJobs, "max-jobs", c.MaxJobs, "jobs this node runs at once at most")
	fl.IntVar(&c.Weight, "weight", c.Weight, "weight for the random, roundrobin and lowerweight selectors")
	fl.DurationVar(&c.Warmup, "warmup", c.Warmup, "time after start over which the weight ramps up")
	fl.DurationVar(&c.DispatchInterval, "dispatch-interval", c.DispatchInterval, "time between dispatch rounds; 0 never dispatches")
	fl.DurationVar(&c.LeaseTTL, "lease-timeout", 0, "how long the lease lasts unrenewed (default 3 × dispatch interval)")
	fl.Var((*daysValue)(&c.Retain), "retain", "the dispatcher deletes jobs (and their logs and events) that ended longer ago than this, and older events naming no job, checking every tenth of it (1m to 10m); 90m, 12h, 30d: at least 1m, 0 keeps every job")
	fl.DurationVar(&c.HeartbeatInterval, "heartbeat-interval", c.HeartbeatInterval, "time between heartbeats to the other nodes; each waits for its answer as long as the interval, at least 100ms and at most 10s")
	fl.StringVar(&c.Selector, "selector", c.Selector, "node order: loadfactor, random, roundrobin or lowerweight")
	fl.BoolVar(&c.AcceptExceeding, "accept-exceeding", c.AcceptExceeding, "accept a job whose load alone exceeds --max-load")
	fl.BoolVar(&c.Exec, "exec", false, "run exec jobs (arbitrary commands from job input)")
	fl.StringArrayVar(&opts.Services, "service", nil, "job type and the command that runs it, TYPE=COMMAND (repeatable)")
	fl.StringVar(&opts.ConfigFile, "config", "", "YAML file with services, preferred nodes and the database (db)")
	fl.StringArrayVar(&opts.Prefer, "prefer", nil, "send jobs of TYPE to these nodes first while their load factor is under THRESHOLD (default 1), TYPE=NODE[,NODE...][@THRESHOLD] (repeatable)")
	fl.DurationVar(&c.PollInterval, "poll-interval", c.PollInterval, "how often running jobs are checked for cancel, pause and resume")
	fl.DurationVar(&c.CancelGrace, "cancel-grace", c.CancelGrace, "time between SIGTERM and SIGKILL when a job is stopped")
	fl.DurationVar(&c.ShutdownGrace, "shutdown-grace", c.ShutdownGrace, "time running jobs may finish when the node stops")
	fl.Var((*loadAvgLimit)(&c.MaxLoadAvg), "max-load-avg", "above this load average the node gets new jobs only when no node under its limit can take them; 0 or off: no limit")
	fl.Var((*sizeValue)(&c.ReservedMemory), "reserved-memory", "no new jobs while free memory is under this `SIZE` (300MiB, 2GiB, or bytes)")
	fl.BoolVar(&c.MetricsAuth, "metrics-auth", false, "/metrics asks for the cluster token like /v1/dispatch")
	fl.BoolVar(&c.Enforce, "enforce", false, "hold each job, in its own cgroup, to a CPU share from its load and to its memory limit (--memory)")
	fl.StringVar(&c.TLS.CertFile, "tls-cert", "", "serve the endpoint over HTTPS with this certificate (PEM)")
	fl.StringVar(&c.TLS.KeyFile, "tls-key", "", "the key of --tls-cert (PEM)")
	fl.StringVar(&c.TLS.CAFile, "tls-ca", "", "CA bundle to verify other nodes' HTTPS endpoints (default: the system's)")
	fl.DurationVar(&c.NodeLease, "node-lease", c.NodeLease, "a node that cannot record its liveness in the database this long stops its jobs")
	fl.StringVar(&c.StateDir, "state-dir", "", "directory for what the node keeps across restarts (default: $XDG_STATE_HOME/jobctl/nodes/NAME)")
	fl.StringVar(&c.JobUser, "job-user", "", "run every job as this user, USER[:GROUP], with its groups, its home and a TMPDIR of its own per attempt (needs root or CAP_SETUID, CAP_SETGID, CAP_CHOWN and CAP_KILL)")
	fl.StringSliceVar(&c.PassEnv, "pass-env", nil, "more of this node's environment variables that jobs get, besides PATH, HOME, USER, LOGNAME, LANG, LC_ALL, TZ, TMPDIR and SHELL (repeatable, comma-separated)")
	fl.IntVar(&opts.DBMaxConns, "db-max-conns", 0, fmt.Sprintf(
		"most connections this node holds to the database, its liveness and LISTEN connections included, %d to %d (default: the DSN's pool_max_conns, else %d)",
		dbstore.MinMaxConns, dbstore.MaxMaxConns, dbstore.DefaultMaxConns))
	fl.StringVar(&opts.LogLevel, "log-level", "info", "debug, info, warn or error")
	fl.StringVar(&opts.LoadAvgFile, "loadavg-file", "", "read the load average from this file, in the format of /proc/loadavg")
	_ = fl.MarkHidden("loadavg-file")
	groupFlags(cmd, []flagSection{
		{"Node", []string{"node", "listen", "advertise", "exec", "service", "config", "pass-env", "job-user", "state-dir", "db-max-conns", "log-level"}},
		{"Dispatch", []string{"selector", "prefer", "weight", "retain"}},
		{"Limits", []string{"max-load", "max-jobs", "accept-exceeding", "max-load-avg", "reserved-memory", "enforce"}},
		{"TLS", []string{"tls-cert", "tls-key", "tls-ca", "metrics-auth"}},
		{"Timing", []string{"dispatch-interval", "lease-timeout", "heartbeat-interval", "node-lease", "warmup",
			"poll-interval", "cancel-grace", "shutdown-grace"}},
	})
	_ = cmd.RegisterFlagCompletionFunc("selector", completeSelectors)
	_ = cmd.RegisterFlagCompletionFunc("node", completeNodes(f)) // a node started again takes its name back
	_ = cmd.RegisterFlagCompletionFunc("log-level", cobra.FixedCompletions(
		[]string{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func parseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToLower(s))); err != nil {
		return l, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	tuneGCForServing()
	level, _ := parseLogLevel(opts.LogLevel)
	log := slog.New(slog.NewTextHandler(opts.Factory.IO.ErrOut, &slog.HandlerOptions{Level: level}))
	opts.Factory.UseDBOptions("jobctl serve "+opts.Config.Name, opts.DBMaxConns)
	if err := opts.Factory.pinDB(); err != nil {
		return err
	}
	store, err := opts.Factory.Store(ctx)
	if err != nil {
		return err
	}
	forgetSecrets()
	warnExposedSecrets(log, opts)
	if opts.Config.StateDir == "" {
		opts.Config.StateDir = defaultStateDir(opts.Config.Name)
	}
	// The watchdog is this same program, so it speaks this node's protocol.
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find this program to start its watchdog: %w", err)
	}
	nodeOpts := []node.Option{node.WithWatchdog([]string{exe, "watchdog"})}
	if opts.LoadAvgFile != "" {
		nodeOpts = append(nodeOpts, node.WithHealthReader(func() node.HealthReading { return node.ReadHealthFrom(opts.LoadAvgFile) }))
	}
	rt, err := node.New(opts.Config, store, opts.Factory.Clock, log, nodeOpts...)
	if err != nil {
		return err
	}
	if err := rt.Listen(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return rt.Run(ctx)
}

// forgetSecrets removes from this process's environment the variables
// that named the database and its password, now that it is open, so that
// nothing the node starts inherits them by mistake. (Jobs get only an
// allow-list of variables anyway; the watchdog gets the rest.) The process's
// initial environment, which /proc/PID/environ shows, is closed to other
// processes by hideProcess.
func forgetSecrets() {
	for _, name := range append([]string{"JOBCTL_DB", "JOBCTL_DB_FILE"}, node.SecretEnv...) {
		_ = os.Unsetenv(name)
	}
}

// warnExposedSecrets says, once at start, where a secret of the node lies
// open: a password on the command line, which every user of the machine
// sees in the process list, and a file holding the database that a job's
// user may read.
func warnExposedSecrets(log *slog.Logger, opts *ServeOptions) {
	f := opts.Factory
	if f.dbFlag != "" && dbstore.DSNHasPassword(f.dbFlag) {
		log.Warn("--db holds a password, which every user of this machine can read in the process list; give the address in a file of its own instead (--db-file, JOBCTL_DB_FILE or the systemd credential " + DBCredential + ")")
	}
	if len(opts.jobUsers) == 0 {
		return
	}
	var files []string
	if c, err := f.DBChoice(); err == nil && c.Path != "" && c.Source != DBFromCredential {
		files = append(files, c.Path)
	}
	if opts.ConfigFile != "" && !slices.Contains(files, opts.ConfigFile) {
		files = append(files, opts.ConfigFile)
	}
	for _, path := range files {
		fi, err := os.Stat(path)
		if err != nil {
			continue
		}
		for _, u := range opts.jobUsers {
			if u.MayRead(fi) {
				log.Warn("jobs can read this file, which may name the database and its password; make it private (chmod 600)",
					"file", path, "job_user", u.Name)
			}
		}
	}
}

// defaultStateDir is where node name keeps what must outlive its process
// (job results the database has not taken yet) when --state-dir is not
// given: $XDG_STATE_HOME/jobctl/nodes/NAME, else
// ~/.local/state/jobctl/nodes/NAME; "" when there is no home either. The
// name is escaped so it stays one directory.
func defaultStateDir(name string) string {
	base := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(base) { // the XDG spec says to ignore a relative one
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		base = filepath.Join(home, ".local", "state")
	}
	dir := url.PathEscape(name)
	if dir == "." || dir == ".." {
		dir = strings.ReplaceAll(dir, ".", "%2E")
	}
	return filepath.Join(base, "jobctl", "nodes", dir)
}

// sizeValue is a flag holding a size in bytes, written with a unit or
// without (engine.ParseBytes).
type sizeValue int64

func (v *sizeValue) String() string {
	if *v == 0 {
		return "0"
	}
	return engine.FormatBytes(int64(*v))
}
func (v *sizeValue) Type() string { return "size" }
func (v *sizeValue) Set(s string) error {
	b, err := engine.ParseBytes(s)
	if err != nil {
		return fmt.Errorf("want a size such as 300MiB, 2GiB or a number of bytes")
	}
	*v = sizeValue(b)
	return nil
}

// loadAvgLimit is --max-load-avg: a number >= 0, or "off" (0, no limit).
// Its default, twice the machine's cores, reads the same on every machine
// so help and man pages do not depend on where they were made.
type loadAvgLimit float64

func (v *loadAvgLimit) String() string {
	if float64(*v) == engine.DefaultMaxLoadAvg(runtime.NumCPU()) {
		return "2 × cores"
	}
	return strconv.FormatFloat(float64(*v), 'g', -1, 64)
}
func (v *loadAvgLimit) Type() string { return "number" }
func (v *loadAvgLimit) Set(s string) error {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		*v = 0
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return fmt.Errorf("want a number >= 0 or off")
	}
	*v = loadAvgLimit(f)
	return nil
}
