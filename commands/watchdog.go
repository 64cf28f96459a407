package commands

import (
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jobctl/jobctl/engine/watchdog"
)

// newCmdWatchdog is the process `jobctl serve` starts beside itself to
// kill its jobs' process groups when it dies or loses its node lease. It
// is an internal part of serve, not a command for people, so it is hidden
// from help, man pages and completions.
func newCmdWatchdog(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "watchdog",
		Short:  "Kill a node's jobs when the node dies or loses its node lease (started by serve)",
		Hidden: true,
		Args:   exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			// It kills jobs; no job may read or steer it.
			if err := hideProcess(); err != nil {
				return err
			}
			// It ends only when the node does (end of its stdin): a
			// signal meant for the node, or a hang-up of its terminal,
			// must not leave the node's jobs unguarded. A broken pipe
			// to a dead node must not end it before it kills them.
			signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
			return watchdog.Run(f.IO.In, f.IO.Out, watchdog.SystemClock{})
		},
	}
}
