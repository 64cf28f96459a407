// Package commands is jobctl's command tree: one file per command or group
// of commands, a small Factory giving them their streams, store and clock,
// and the output printing they share (tables on a terminal, tab-separated
// lines when piped, JSON on request).
//
// Each command follows one shape: an Options struct, a NewCmdX(f, runF)
// constructor that only parses and validates flags and arguments, and an
// xRun(opts) function that does the work. Tests inject runF to check what
// was parsed, or run xRun against a real store. Commands never exit the
// process: they return typed errors (UsageError, WaitFailedError,
// WaitTimeoutError, engine.ErrNotFound) that cmd/jobctl maps to exit codes.
package commands
