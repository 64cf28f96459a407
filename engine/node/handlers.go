package node

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
)

// handler is how this node runs one job type.
type handler struct {
	argv    []string       // service command; job args are appended
	builtin runner.Builtin // in-process handler (noop, sleep)
	jobArgv bool           // the job's own args are the command (exec)
	load    float64        // default job load; 0: not configured
	timeout time.Duration  // default timeout; 0: not configured
}

func buildHandlers(cfg Config) (map[string]handler, error) {
	hs := map[string]handler{
		engine.TypeNoop:  {builtin: runner.Noop},
		engine.TypeSleep: {builtin: runner.Sleep},
	}
	if cfg.Exec {
		hs[engine.TypeExec] = handler{jobArgv: true}
	}
	for _, s := range cfg.Services {
		if _, dup := hs[s.Type]; dup {
			return nil, fmt.Errorf("service %q is configured twice", s.Type)
		}
		hs[s.Type] = handler{argv: s.Argv, load: s.Load, timeout: s.Timeout}
	}
	return hs, nil
}

func (n *Runtime) serviceTypes() []string {
	types := make([]string, 0, len(n.handlers))
	for t := range n.handlers {
		types = append(types, t)
	}
	slices.Sort(types)
	return types
}

// spec builds what the runner starts for a job, or says why the job can
// never run here (a permanent refusal).
func (n *Runtime) spec(h handler, job *engine.Job, attempt int) (runner.Spec, error) {
	s := runner.Spec{
		JobID:   job.ID,
		Attempt: attempt,
		Stdin:   job.Payload,
		Timeout: time.Duration(job.Timeout),
		Grace:   n.cfg.CancelGrace,
	}
	if h.builtin == nil { // only a process has an environment
		s.Env = []string{
			"JOBCTL_KEY=" + job.Key,
			"JOBCTL_PARENT_ID=" + parentID(job),
			"JOBCTL_NODE=" + n.cfg.Name,
			"JOBCTL_DB=" + n.cfg.DSN,
		}
	}
	switch {
	case h.jobArgv:
		if len(job.Args) == 0 {
			return s, fmt.Errorf("an %s job needs a command", engine.TypeExec)
		}
		s.Argv = slices.Clone(job.Args)
	case h.builtin == nil:
		s.Argv = append(slices.Clone(h.argv), job.Args...)
	default:
		s.Argv = slices.Clone(job.Args)
	}
	if job.Type == engine.TypeSleep {
		if _, err := runner.SleepDuration(s); err != nil {
			return s, err
		}
	}
	return s, nil
}

func parentID(job *engine.Job) string {
	if job.ParentID == nil {
		return ""
	}
	return strconv.FormatInt(*job.ParentID, 10)
}
