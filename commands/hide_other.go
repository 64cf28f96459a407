//go:build !linux

package commands

// hideProcess has no equivalent here: a process of the same user may read
// this one's environment (ps -E on macOS), so only running jobs as another
// user (serve --job-user) keeps them from it.
func hideProcess() error { return nil }
