package commands

import (
	"github.com/spf13/cobra"
)

// Help groups of the root command.
const (
	groupJobs    = "jobs"
	groupCluster = "cluster"
	groupAdmin   = "admin"
)

// NewRootCmd builds the jobctl command tree on f. version is what
// `jobctl version` reports; the commit comes from the build's VCS stamp.
func NewRootCmd(f *Factory, version string) *cobra.Command {
	return NewRootCmdWithBuild(f, ResolveBuildInfo(version, ""))
}

// NewRootCmdWithBuild is NewRootCmd for a binary that knows its version and
// commit.
func NewRootCmdWithBuild(f *Factory, build BuildInfo) *cobra.Command {
	root := &cobra.Command{
		Use:   "jobctl <command>",
		Short: "Dispatch jobs across a cluster of nodes and administer it",
		Long: `jobctl is a distributed job-dispatch engine and its admin toolkit in one binary.

'jobctl serve' makes this machine a node of the cluster; every other command
talks to the cluster's database directly, so inspection works even when no
node is up. The database is chosen by --db or --db-file, else $JOBCTL_DB or
$JOBCTL_DB_FILE, else the systemd credential jobctl-db, else the db of the
config file ($XDG_CONFIG_HOME/jobctl/config.yaml), else an SQLite file under
$XDG_STATE_HOME/jobctl (created on first use); 'jobctl db status' names the
one in use.

Exit codes: 0 success, 1 error, 2 usage error, 3 not found, 4 a waited-for
job ended FAILED, CANCELLED or DELETED, 5 timed out waiting.`,
		Example: `  # run a node that may execute commands
  jobctl serve --exec

  # submit a command and wait for it
  jobctl submit --wait -- make test

  # see what is queued and running
  jobctl list --state queued,running`,
		Args:          subcommandArgs,
		RunE:          showHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       build.Version,
		// Every command with -o json filters it through --jq when given,
		// and its tables follow --headers and --no-headers.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			f.forCommand(cmd)
			if err := bindHeaders(f.IO, cmd); err != nil {
				return err
			}
			return bindJQ(f.IO, cmd)
		},
	}
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetVersionTemplate("jobctl version {{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &UsageError{Err: err, Command: cmd.CommandPath()}
	})
	root.PersistentFlags().StringVar(&f.dbFlag, "db", "",
		"database: sqlite:PATH, postgres://… or mysql://… (default $JOBCTL_DB, else the config file's db, else SQLite in the state directory); every user of the machine sees it in the process list, so give a password with --db-file")
	root.PersistentFlags().StringVar(&f.dbFileFlag, "db-file", "",
		"file holding the database address, readable by its owner alone (default $JOBCTL_DB_FILE, else the systemd credential "+DBCredential+")")

	root.AddGroup(
		&cobra.Group{ID: groupJobs, Title: "Job commands:"},
		&cobra.Group{ID: groupCluster, Title: "Cluster commands:"},
		&cobra.Group{ID: groupAdmin, Title: "Administration commands:"},
	)
	inGroup := func(id string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = id
			root.AddCommand(c)
		}
	}
	inGroup(groupJobs,
		NewCmdSubmit(f, nil),
		NewCmdList(f, nil),
		NewCmdShow(f, nil),
		NewCmdExplain(f, nil),
		NewCmdLogs(f, nil),
		NewCmdEvents(f, nil),
		NewCmdWait(f, nil),
		NewCmdProgress(f, nil),
		NewCmdSchedules(f),
		NewCmdWorkflow(f),
	)
	inGroup(groupJobs, newVerbCmds(f, nil)...)
	inGroup(groupCluster,
		newCmdServe(f),
		NewCmdNodes(f),
		NewCmdLimits(f),
		NewCmdStats(f, nil),
		NewCmdLease(f),
		NewCmdTop(f, nil),
		NewCmdSimulate(f, nil),
		NewCmdBench(f, nil),
	)
	inGroup(groupAdmin,
		NewCmdDB(f),
		NewCmdPrune(f, nil),
		NewCmdVersion(f, build, nil),
	)
	root.AddCommand(newHelpTopics()...)
	root.AddCommand(newCmdWatchdog(f))
	// Added now rather than at Execute time, so generated docs include them.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.SetHelpCommandGroupID(groupAdmin)
	root.SetCompletionCommandGroupID(groupAdmin)
	completionUsage(root)
	return root
}

// completionUsage makes cobra's completion commands report bad arguments as
// usage errors (exit 2) like every other command, and refuse an unknown
// shell instead of printing help.
func completionUsage(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Args = subcommandArgs
		c.RunE = showHelp
		c.Example = `  # load completions into the current bash session
  source <(jobctl completion bash)

  # install them for zsh
  jobctl completion zsh > "${fpath[1]}/_jobctl"`
		for _, shell := range c.Commands() {
			shell.Args = exactArgs(0, "no arguments")
		}
	}
}

// subcommandArgs refuses arguments to a command that only groups others:
// cobra would otherwise show help and succeed on a mistyped subcommand.
func subcommandArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := "unknown command %q for %q"
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default, applied only on its path
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		return usageErrorf(cmd, msg+"; did you mean %q?", args[0], cmd.CommandPath(), s[0])
	}
	return usageErrorf(cmd, msg, args[0], cmd.CommandPath())
}

// showHelp is the action of a command that only groups others.
func showHelp(cmd *cobra.Command, args []string) error {
	return cmd.Help()
}
