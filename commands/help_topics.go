package commands

import "github.com/spf13/cobra"

// Help topics are commands without a Run: `jobctl help NAME` prints them
// and cobra lists them under "Additional help topics". The man pages carry
// the same text (cmd/gendocs), so each is written once.
const (
	TopicExitCodes   = "exit-codes"
	TopicEnvironment = "environment"
	TopicJobProtocol = "job-protocol"
	TopicAudit       = "audit"
	TopicUsage       = "usage"
)

// auditHelp is what the audit trail records, and for how long.
const auditHelp = `Every change made to the cluster is recorded as an event, in the same
transaction as the change: there is no change without its event and no
event of a change that did not happen. 'jobctl events' lists them.

Who. The person running the command, as USER@HOST (the USER variable,
else the account's name, at the machine's host name); for a child a job
submits through its node, the job itself, as "job ID@NODE". 'jobctl top'
records its actions under the user running it.

When. The database's clock, as for every time jobctl stores.

What. The command (the verb): submit (one event a job, a --batch too),
cancel, pause, resume, requeue, release and delete, each with the state
the job went from and to; nodes maintenance, nodes drain and nodes rm
(with the jobs a drain's deadline stops and requeues, and those nodes rm
puts back in the queue); limits set and rm; schedules add, pause, resume
and rm; workflow start and cancel; lease release; prune. A cancel records
an event for each child it cancels too, noting the job it came from. What
changes nothing (a job cancelled already, a node in maintenance already)
records nothing.

Why. The --reason every such command takes: text of at most 1000
characters, without newlines or other control characters; anything else
is a usage error (exit 2) and changes nothing. In 'jobctl top', the line
under the question of c, r, m and d.

Where it shows. 'jobctl events' (--job, --node, --since, -f, -o json);
'jobctl show ID' names who cancelled or deleted a job and why (ended_by in
-o json); the detail 'jobctl top' opens on a job says the same.

Not recorded: what the engine does on its own (dispatching, retries,
timeouts, recovering the jobs of a lost node, schedules firing, workflow
steps) and the automatic pruning of 'jobctl serve --retain'; a job's own
attempts and messages tell those ('jobctl show ID').

How long. A job's events stay as long as the job and go when it is pruned
('jobctl prune', 'jobctl serve --retain'). The events naming no job (of
nodes, limits, schedules, the lease, prunes) are pruned by age, with the
same cutoff, by a prune of every ended state (one without --state).`

// exitCodesHelp is the exit status every jobctl command ends with.
const exitCodesHelp = `Every jobctl command ends with one of these exit codes; scripts may rely
on them.

  0    success
  1    any other error: the database cannot be reached, a node refused, ...
  2    usage error: an unknown flag or command, a bad value (a --db that
       is not a DSN, a --listen that is not HOST:PORT), or input the
       engine refuses (a field over its limit); nothing was changed
  3    something named was not found: a job, a node, or the database
       itself: list, show, logs, events, nodes, lease, explain, stats,
       top and wait never create one ('jobctl db migrate', serve and
       submit do)
  4    a waited-for job ended FAILED, CANCELLED or DELETED
       (wait, submit --wait)
  5    waiting timed out (--timeout of wait, submit --wait and
       nodes drain --wait)
  130  interrupted by SIGINT or SIGTERM

An error is one line on stderr, "jobctl: ...", saying what was wrong.`

// environmentHelp lists every variable jobctl itself reads.
const environmentHelp = `Variables jobctl reads:

  JOBCTL_DB       the database when neither --db nor --db-file is given:
                  sqlite:PATH, postgres://... or mysql://...; serve
                  removes it from its environment once the database is
                  open, so nothing it starts inherits it
  JOBCTL_DB_FILE  instead of JOBCTL_DB: a file holding the database
                  address (one line; blank and # lines are skipped),
                  refused unless only its owner may read it (chmod 600)
  CREDENTIALS_DIRECTORY set by systemd for a unit with LoadCredential=:
                  when neither --db, --db-file, JOBCTL_DB nor
                  JOBCTL_DB_FILE names the database, the credential
                  jobctl-db in it does (LoadCredential=jobctl-db:/etc/
                  jobctl/db)
  JOBCTL_JOB_ID   set by a node for the job it runs: the job's id, which
                  submit --child, progress and wait --children act for
  JOBCTL_URL      set by a node for the job it runs: the node's endpoint,
                  which those three commands use when neither --db nor
                  JOBCTL_DB is given (any other command then fails: a
                  job has no database access)
  JOBCTL_JOB_TOKEN set by a node for the job it runs: the job's own token
                  for JOBCTL_URL, good for this attempt of this job only
  JOBCTL_CA_FILE  set by a node serving HTTPS for the job it runs: the
                  node's certificate, trusted for JOBCTL_URL in place of
                  the system's roots
  XDG_CONFIG_HOME when it is an absolute path, the config file is
                  $XDG_CONFIG_HOME/jobctl/config.yaml (else
                  ~/.config/jobctl/config.yaml); its db: names the
                  database when neither --db nor JOBCTL_DB does
  XDG_STATE_HOME  when it is an absolute path and no database is named,
                  the SQLite database is $XDG_STATE_HOME/jobctl/jobctl.db;
                  a node's state directory is $XDG_STATE_HOME/jobctl/
                  nodes/NAME unless serve --state-dir names one
  HOME            else the database is ~/.local/state/jobctl/jobctl.db;
                  also expands sqlite:~/PATH
  NO_COLOR        any non-empty value turns colour off
  TERM            "dumb" turns colour off
  USER            who submits a job or makes any other change, recorded
                  as USER@HOST (else the account's name; see 'jobctl help
                  audit')
  PGPASSWORD      the password of a postgres:// address without one;
                  serve removes it from its environment once the database
                  is open
  PGSSLMODE       when set, decides TLS to PostgreSQL; else jobctl asks
                  for sslmode=prefer, as psql does
  GOGC            the garbage collector's target; serve, bench and
                  simulate use 400 (less CPU for a little more memory)
                  unless it is set
  GOMEMLIMIT      a soft memory limit; simulate sets 768MiB unless it is
                  set

The PostgreSQL driver also reads the libpq variables (PGUSER,
PGPASSFILE, PGSSLROOTCERT, PGCONNECT_TIMEOUT, ...) for what a postgres://
address leaves out.

A password on the command line (--db postgres://user:secret@...) is visible
to every user of the machine in the process list, for as long as the
command runs: give it in a file (--db-file, JOBCTL_DB_FILE) or a systemd
credential instead; serve warns when it finds one.

Colour and table headers appear only when stdout is a terminal, whatever
these say.

A job gets only the variables 'jobctl help job-protocol' lists: the
JOBCTL_* ones and the few its node passes on (serve --pass-env).`

// jobProtocolHelp is what a handler process gets and may say.
const jobProtocolHelp = `How a node runs a job, and what the job may tell it.

Command. An exec job (on a node started with --exec) runs its own
arguments: 'jobctl submit -- CMD ARGS...'. A job of a service type runs
the service's command (--service TYPE=COMMAND or --config) with the job's
arguments appended. The command is exec'd directly, never through a shell,
in its own process group, as the node's user in the node's working
directory. On a node with --job-user (or for a service with user: in
--config) it runs as that user instead, with its groups, in its home
directory (/ when it has none), with HOME, USER and LOGNAME its own and
TMPDIR an empty directory of its own (mode 0700), removed when the job
ends. The built-in types noop and sleep run inside the node and start no
process.

Input. The job's payload (submit --payload) arrives as JSON on stdin;
without a payload stdin is empty.

Environment. A job's whole environment is these variables:

  JOBCTL_JOB_ID     the job's id
  JOBCTL_ATTEMPT    which attempt this is, from 1
  JOBCTL_KEY        the job's key; empty when it has none
  JOBCTL_PARENT_ID  the parent job's id; empty for a job without a parent
  JOBCTL_NODE       the name of the node running it
  JOBCTL_URL        the endpoint of the node running it
  JOBCTL_JOB_TOKEN  a random token for this attempt of this job: good only
                    for its own progress and children, only while this
                    attempt runs on this node; keep it out of logs
  JOBCTL_CA_FILE    only from a node serving HTTPS (--tls-cert): that
                    certificate's file, which jobctl inside the job
                    trusts for JOBCTL_URL

and, when the node has them, PATH, HOME, USER, LOGNAME, LANG, LC_ALL, TZ,
TMPDIR and SHELL (HOME, USER, LOGNAME and TMPDIR are the job user's own
under --job-user), plus the variables the node names with --pass-env
(repeatable, comma-separated; it adds to that list and cannot name
JOBCTL_* variables or PGPASSWORD). Nothing else of the node's environment
reaches a job: no database address, no cluster token. Nor can a job read
them out of its node: on Linux the node is closed to other processes, its
own user's too (see 'jobctl serve --help'). A job reaches the cluster only
through its node, with jobctl itself:

  jobctl submit --child -- CMD...  submit a child of this job (also
                                   --parent $JOBCTL_JOB_ID); only an exec
                                   job may have exec children
  jobctl progress N [MESSAGE]      report progress, as a jobctl:progress
                                   line does
  jobctl wait --children           wait until every child has ended; exit
                                   0, 4 or 5 as 'jobctl wait'; the job is
                                   WAITING meanwhile and holds no load

Any other jobctl command inside a job fails (exit 1): a job has no
database access. These three use the node only when neither --db nor
JOBCTL_DB is given; outside a job they are usage errors (exit 2).
The node serves them under /v1/jobs/$JOBCTL_JOB_ID/ on its endpoint
(POST progress, POST children, GET children, POST wait), with the header
"Authorization: Bearer $JOBCTL_JOB_TOKEN".

Output. stdout and stderr are the job's log ('jobctl logs ID [-f]'), kept
up to 10 MiB per attempt; past that a note "log truncated at N bytes" marks
the cut. Two kinds of stdout line also speak to the node:

  jobctl:progress N [text]  progress N percent (0-100; a trailing % is
                            allowed), with an optional message
  jobctl:warning text       a successful exit ends as WARNING, not FINISHED

A line is read this way only when it starts with the keyword, which is
followed by a blank or the end of the line; other lines are only log. The
lines that take effect are stored apart from the job's own output, as are
the node's notes about the run (timed out, cancelled, paused): 'jobctl
logs' prints them marked [protocol] and [note], and 'jobctl logs --raw'
prints the job's own output alone.

Exit. The exit code becomes the job's status:

  0                     FINISHED (WARNING after a jobctl:warning line)
  non-zero or a signal  RESTART after the backoff while attempts remain
                        (submit --max-attempts, --backoff), else FAILED
  126, 127              the command is not executable or not found: a
                        failure like any other

Stopping. Cancel ('jobctl cancel') and the job's run limit (submit
--run-timeout, else the service's, else 8h) send SIGTERM to the job's
whole process group, then SIGKILL after the node's --cancel-grace (10s);
the job ends CANCELLED, whatever its exit code, and its log says why.
Pause and resume send SIGSTOP and SIGCONT to the group. When the job's
main process exits, whatever it left running in its group is killed. The
whole group also dies with its node: a small watchdog process beside the
node kills every job's group when the node dies in any way (SIGKILL, out
of memory, a crash), and when the node has not recorded its liveness in
the database for its --node-lease (10s), frozen or cut off; such a run
goes back to the queue (RESTART). A process that leaves its group (setsid,
a daemon) escapes both, unless the node runs the job in a cgroup of its
own ('jobctl help usage'): then it is killed with the rest when the main
process exits. With serve --enforce and submit --memory, a job whose
processes hold more memory than its limit is killed and ends with the
reason "killed: out of memory, limit 2GiB" (FAILED, or RESTART while
attempts remain). When a node shuts down, running jobs have
--shutdown-grace (30s) to finish; the rest are stopped and go back to the
queue (RESTART).

Running again. A job runs at least once; it can run again after its work
ended, so it should be idempotent (safe to run twice). That happens only
when its node could not record the result before the cluster gave the job
to another node: the node was cut off from the database, or frozen, for
longer than its --node-lease (10s) plus 2 seconds, the run ended in that
time, and another node started the job before this one came back (its
result, recorded late, is dropped: the node logs "dropped the result"); or
the node crashed between the run's end and its first try to record the
result (after a first failed try the result waits in the node's
--state-dir and is recorded when the node is started again). A run that
ended while its node still held its lease, whose job was only put back in
the queue (RESTART, no new attempt started yet), has its late result taken:
the job ends as the run did and does not run again (the node logs "took
the late result").

Example. A service handler in shell, /usr/local/bin/report.sh:

  #!/bin/sh
  payload=$(cat)                         # the payload JSON
  echo "job $JOBCTL_JOB_ID, attempt $JOBCTL_ATTEMPT on $JOBCTL_NODE"
  echo "jobctl:progress 50 half way"
  [ -n "$payload" ] || echo "jobctl:warning no payload given"
  exit 0

Run as the job type "report":

  jobctl serve --service report=/usr/local/bin/report.sh
  jobctl submit --type report --payload '{"day":"2026-01-01"}' --wait`

// usageHelp is how jobs are measured and held to their share.
const usageHelp = `What a job really uses, how it is measured, and how it is held to its
share.

Measured. Every run of a job process is measured by its node: CPU seconds
(user + system), peak memory and wall time, of its whole process tree.
Where the node can make cgroups (cgroup v2 with the cpu and memory
controllers delegated to it, as systemd's Delegate=yes does, Linux 5.7 or
later; or the cgroup v1 cpu, cpuacct and memory hierarchies, as root), each
run has a cgroup of its own from its first instruction: its CPU time is
cpu.stat usage_usec or cpuacct.usage, its peak memory.peak (Linux 5.19)
or memory.max_usage_in_bytes. A cgroup's memory counts the page cache the
job caused as well as its processes' resident memory. Elsewhere the node
takes the kernel's accounting of the processes the job reaped (wait4
rusage: CPU time, and the largest resident set of one process), which
misses a grandchild whose own parent never waited for it. Builtin jobs
(noop, sleep, workflow steps) run inside the node and are not measured.
The node says at its start which way it measures. The packaged systemd
unit delegates the cpu and memory controllers to its node (Delegate=cpu
memory), so a packaged node measures in cgroups and --enforce works there.

Where it shows. What each attempt used is kept with it: 'jobctl show ID'
(CPU, PEAK, WALL per attempt; "usage" in -o json), 'jobctl list -o wide'
(the last attempt's), 'jobctl list --oom' (killed at the memory limit).
While a job runs its node reports, with each record of its liveness (a
fifth of --node-lease), the CPU it has used, the cores it used since the
report before and the memory it holds: 'jobctl top' (CPU, MEM, on a
terminal wide enough), 'jobctl show', 'jobctl nodes -o json'
(running_usage). /metrics has histograms per
type: jobctl_job_wait_seconds, jobctl_job_run_seconds and
jobctl_job_cpu_seconds.

Loads that tell the truth. A job's load is what it declares; the
dispatcher places it by that. 'jobctl stats' shows each type's declared
load beside the cores its latest runs used (CPU seconds per wall second,
median and 95th percentile) and their 95th percentile of peak memory, and
flags a type whose load is far off: "transcode: declared load 1, uses 3.2
cores p95 over 40 runs". Far is a 95th percentile of cores above 1.5
times the declared load or below half of it, over at least 5 measured
runs, and at least a quarter core away from it (so a load-0 job using a
sliver of a core is not flagged). 'jobctl explain' and 'jobctl top' say so
too, and 'jobctl simulate --from-cluster' runs each job for its type's
measured median time.

Enforced, with serve --enforce. Each run's cgroup holds it to:

  a CPU share   in proportion to its load when the node is busy
                (cpu.weight 100 or cpu.shares 1024 a unit of load); a job
                alone may still use idle cores, and a node whose loads add
                up to at most its cores gives each job its load in cores
  its memory    submit --memory SIZE (512MiB, 2GiB; also in --batch lines,
                schedules, workflows, and a service's memory in --config)
                as a hard limit, without swap (memory.max with
                memory.swap.max 0, or memory.limit_in_bytes with
                memory.memsw.limit_in_bytes); on cgroup v2 the whole run
                is killed when it goes over

A job killed at its limit ends with the reason
"killed: out of memory, limit 2GiB"; the kill is read from memory.events
(oom_kill) or memory.oom_control. A node that cannot enforce a limit says
so at its start and runs jobs without it; a node without --enforce
measures only.`

// newHelpTopics builds the help topics of the root command.
func newHelpTopics() []*cobra.Command {
	return []*cobra.Command{
		{
			Use:   TopicExitCodes,
			Short: "Exit codes of every jobctl command",
			Long:  exitCodesHelp,
		},
		{
			Use:   TopicEnvironment,
			Short: "Environment variables jobctl reads",
			Long:  environmentHelp,
		},
		{
			Use:   TopicJobProtocol,
			Short: "What a job gets from its node and what it may print",
			Long:  jobProtocolHelp,
		},
		{
			Use:   TopicAudit,
			Short: "The audit trail: who changed what, when and why",
			Long:  auditHelp,
		},
		{
			Use:   TopicUsage,
			Short: "What jobs use, how it is measured, and --enforce",
			Long:  usageHelp,
		},
	}
}
