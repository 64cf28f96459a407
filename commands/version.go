package commands

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// BuildInfo says which jobctl this is: its version and the commit it was
// built from.
type BuildInfo struct {
	Version string
	Commit  string
}

// ResolveBuildInfo completes what the linker set (-X main.version,
// -X main.commit) from what the Go toolchain stamped into the binary, so
// that `go install …@v1.2.3` and a plain `go build` in a checkout report
// something true too.
func ResolveBuildInfo(version, commit string) BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return resolveBuildInfo(version, commit, info)
}

func resolveBuildInfo(version, commit string, info *debug.BuildInfo) BuildInfo {
	b := BuildInfo{Version: version, Commit: commit}
	if info != nil && b.Version == "" {
		// "(devel)" is what a build inside the module's own tree gets.
		if v := info.Main.Version; v != "" && v != "(devel)" {
			b.Version = v
		}
	}
	if info != nil && b.Commit == "" {
		b.Commit = vcsCommit(info)
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

// vcsCommit is the revision the toolchain stamped when it built from a
// checkout, marked when the tree had local changes.
func vcsCommit(info *debug.BuildInfo) string {
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
		return ""
	}
	return rev + modified
}

// VersionOptions are the parsed flags of `jobctl version`.
type VersionOptions struct {
	IO     *IOStreams
	Build  BuildInfo
	Output outputOptions
}

// versionInfo is the JSON form of `jobctl version`.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// NewCmdVersion builds `jobctl version`. runF replaces the action in tests.
func NewCmdVersion(f *Factory, build BuildInfo, runF func(context.Context, *VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: f.IO, Build: build}
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
		Version:  opts.Build.Version,
		Commit:   opts.Build.Commit,
		Go:       runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	if opts.Output.Format == formatJSON {
		return writeJSON(opts.IO.Out, v)
	}
	_, err := fmt.Fprintf(opts.IO.Out, "jobctl version %s\ncommit %s\n%s %s\n", v.Version, v.Commit, v.Go, v.Platform)
	return err
}
