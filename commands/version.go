package commands

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// VersionOptions are the parsed flags of `jobctl version`.
type VersionOptions struct {
	IO      *IOStreams
	Version string
	Output  outputOptions
}

// versionInfo is the JSON form of `jobctl version`.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// NewCmdVersion builds `jobctl version`. runF replaces the action in tests.
func NewCmdVersion(f *Factory, version string, runF func(context.Context, *VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: f.IO, Version: version}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of jobctl",
		Long:  `Print jobctl's version, the commit it was built from, and the Go version that built it.`,
		Example: `  # the version in a script
  jobctl version -o json | jq -r .version`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return versionRun(opts)
		},
	}
	addOutputFlags(cmd, &opts.Output, false)
	return cmd
}

func versionRun(opts *VersionOptions) error {
	v := versionInfo{
		Version:  opts.Version,
		Commit:   buildCommit(),
		Go:       runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	if opts.Output.Format == formatJSON {
		return writeJSON(opts.IO.Out, v)
	}
	_, err := fmt.Fprintf(opts.IO.Out, "jobctl version %s\ncommit %s\n%s %s\n", v.Version, v.Commit, v.Go, v.Platform)
	return err
}

// buildCommit is the VCS revision the Go toolchain stamped into the
// binary, marked when the tree had local changes.
func buildCommit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev == "" {
		return "unknown"
	}
	return rev + modified
}
