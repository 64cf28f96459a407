package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/spf13/cobra"
)

// UsageError is a command line that cannot be run as given: a bad flag
// value, a missing argument, an unknown command. Nothing was changed.
type UsageError struct {
	Err     error
	Command string // e.g. "jobctl submit", for the pointer to its help
}

func (e *UsageError) Error() string {
	if e.Command == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (see '%s --help')", e.Err, e.Command)
}

func (e *UsageError) Unwrap() error { return e.Err }

// usageErrorf builds a UsageError for cmd.
func usageErrorf(cmd *cobra.Command, format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...), Command: cmd.CommandPath()}
}

// WaitFailedError reports waited-for jobs that ended FAILED, CANCELLED or
// DELETED.
type WaitFailedError struct {
	Jobs []*engine.Job
}

func (e *WaitFailedError) Error() string {
	parts := make([]string, len(e.Jobs))
	for i, j := range e.Jobs {
		parts[i] = fmt.Sprintf("job %d ended %s", j.ID, j.Status)
		if why := jobOutcome(j); why != "" {
			parts[i] += " (" + why + ")"
		}
	}
	return strings.Join(parts, "; ")
}

// WaitTimeoutError reports jobs still unfinished when a wait gave up.
type WaitTimeoutError struct {
	Timeout time.Duration
	Pending []int64
}

func (e *WaitTimeoutError) Error() string {
	ids := make([]string, len(e.Pending))
	for i, id := range e.Pending {
		ids[i] = fmt.Sprint(id)
	}
	noun := "job"
	if len(ids) > 1 {
		noun = "jobs"
	}
	return fmt.Sprintf("timed out after %s waiting for %s %s; wait again with 'jobctl wait %s'",
		e.Timeout, noun, strings.Join(ids, ", "), strings.Join(ids, " "))
}

// jobOutcome says briefly why a job ended as it did: its message, else its
// exit code.
func jobOutcome(j *engine.Job) string {
	switch {
	case j.Message != "":
		return j.Message
	case j.ExitCode != nil:
		return fmt.Sprintf("exit code %d", *j.ExitCode)
	}
	return ""
}

// errorList is several errors reported as one line; errors.Is and
// errors.As see each of them.
type errorList []error

func (l errorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

func (l errorList) Unwrap() []error { return l }

// joinErrors returns nil, the one error, or an errorList.
func joinErrors(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errorList(errs)
}
