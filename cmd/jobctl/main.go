// Command jobctl is the jobctl node and admin tool. main runs the command
// tree and turns its error into the documented exit code; commands never
// exit the process themselves.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/jobctl/jobctl/commands"
	"github.com/jobctl/jobctl/engine"
)

// version and commit are set at build time:
// -ldflags "-X main.version=1.2.3 -X main.commit=0a1b2c3". Left empty they
// are read from the build information the Go toolchain stamps in.
var (
	version string
	commit  string
)

// Exit codes, part of the command-line contract scripts rely on: 0 success,
// 1 any other error, 2 a usage error or input the engine refuses (nothing
// was written), 3 something named was not found, 4 a waited-for job ended
// FAILED, CANCELLED or DELETED, 5 waiting timed out, 130 interrupted.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitNotFound    = 3
	exitJobFailed   = 4
	exitTimeout     = 5
	exitInterrupted = 130 // the shell convention for SIGINT
)

func main() {
	os.Exit(run(os.Args[1:], commands.SystemIO()))
}

// run executes one command line and returns the process's exit code.
func run(args []string, ios *commands.IOStreams) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	f := commands.NewFactory(ios)
	root := commands.NewRootCmdWithBuild(f, commands.ResolveBuildInfo(version, commit))
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	code := exitCode(err)
	if code != exitOK {
		printError(ios.ErrOut, err, code)
	}
	return code
}

// exitCode maps a command's error to the documented exit code.
func exitCode(err error) int {
	var (
		usage   *commands.UsageError
		failed  *commands.WaitFailedError
		timeout *commands.WaitTimeoutError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage), errors.Is(err, engine.ErrInvalid):
		return exitUsage
	case errors.Is(err, engine.ErrNotFound):
		return exitNotFound
	case errors.As(err, &failed):
		return exitJobFailed
	case errors.As(err, &timeout):
		return exitTimeout
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return exitError
}

// printError writes the error as the one line `jobctl: …` on stderr.
func printError(w io.Writer, err error, code int) {
	msg := err.Error()
	if code == exitInterrupted {
		msg = "interrupted"
	}
	msg = strings.ReplaceAll(strings.TrimSpace(msg), "\n", "; ")
	fmt.Fprintf(w, "jobctl: %s\n", msg)
}
