package node

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/jobuser"
	"github.com/jobctl/jobctl/engine/runner"
)

// handler is how this node runs one job type.
type handler struct {
	argv    []string       // service command; job args are appended
	builtin runner.Builtin // in-process handler (noop, sleep, workflow)
	jobArgv bool           // the job's own args are the command (exec)
	load    float64        // default job load; 0: not configured
	timeout time.Duration  // default timeout; 0: not configured
	user    *jobuser.User  // who its processes run as; nil: the node's own user
	memory  int64          // default memory limit; 0: not configured
}

func buildHandlers(cfg Config, store engine.Store, users jobUsers) (map[string]handler, error) {
	if _, err := passEnvNames(cfg.PassEnv); err != nil {
		return nil, err
	}
	hs := map[string]handler{
		engine.TypeNoop:  {builtin: runner.Noop},
		engine.TypeSleep: {builtin: runner.Sleep},
		// A workflow step reads and writes the store: node code, so it
		// runs in process and no job process ever gets the database.
		engine.TypeWorkflow: {builtin: workflowStep(store)},
	}
	if cfg.Exec {
		hs[engine.TypeExec] = handler{jobArgv: true, user: users[cfg.JobUser]}
	}
	for _, s := range cfg.Services {
		if _, dup := hs[s.Type]; dup {
			return nil, fmt.Errorf("service %q is configured twice", s.Type)
		}
		hs[s.Type] = handler{argv: s.Argv, load: s.Load, timeout: s.Timeout, user: users.forService(cfg, s), memory: s.Memory}
	}
	return hs, nil
}

func (r *jobRunner) serviceTypes() []string {
	types := make([]string, 0, len(r.handlers))
	for t := range r.handlers {
		types = append(types, t)
	}
	slices.Sort(types)
	return types
}

// spec builds what the runner starts for a job, or says why the job can
// never run here (a permanent refusal).
func (r *jobRunner) spec(h handler, job *engine.Job, attempt int) (runner.Spec, error) {
	s := runner.Spec{
		JobID:   job.ID,
		Attempt: attempt,
		Stdin:   job.Payload,
		Timeout: time.Duration(job.Timeout),
		Grace:   r.cfg.CancelGrace,
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
	if h.builtin == nil { // only a process has an environment
		token, err := r.tokens.issueJobToken(job.ID, attempt)
		if err != nil {
			return s, err
		}
		s.Env = r.jobEnv(job, token, h.user)
		if h.user != nil {
			s.Credential = h.user.Credential()
			s.Dir = h.user.Dir()
		}
	}
	return s, nil
}

// DefaultPassEnv are the variables of the node's environment every job
// gets when the node has them: what ordinary programs expect to find, and
// no secret. --pass-env adds to them.
var DefaultPassEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "TMPDIR", "SHELL"}

// userEnv are the variables that name a job's user and its places: a job
// run as another user gets that user's, never the node's (TMPDIR is added
// when its directory is made).
var userEnv = []string{"HOME", "USER", "LOGNAME", "TMPDIR"}

// jobEnv is a job process's whole environment (besides JOBCTL_JOB_ID and
// JOBCTL_ATTEMPT, which the runner adds): the allowed part of the node's
// own, then the job's. It holds no database address and no cluster token:
// a job reaches the cluster only through its node, with its own token. A
// job run as user u has u's HOME, USER and LOGNAME.
func (r *jobRunner) jobEnv(job *engine.Job, token string, u *jobuser.User) []string {
	names, _ := passEnvNames(r.cfg.PassEnv) // checked by New
	env := make([]string, 0, len(names)+8)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(names, name) && (u == nil || !slices.Contains(userEnv, name)) {
			env = append(env, kv)
		}
	}
	if u != nil {
		env = append(env, u.Env()...)
	}
	env = append(env,
		"JOBCTL_KEY="+job.Key,
		"JOBCTL_PARENT_ID="+parentID(job),
		"JOBCTL_NODE="+r.cfg.Name,
		"JOBCTL_URL="+r.url(),
		"JOBCTL_JOB_TOKEN="+token)
	if r.caFile != "" {
		env = append(env, "JOBCTL_CA_FILE="+r.caFile)
	}
	return env
}

// SecretEnv are the variables besides jobctl's own that may hold the
// node's database password: serve removes them from its environment once
// the database is open, and --pass-env refuses them.
var SecretEnv = []string{"PGPASSWORD"}

// passEnvNames is DefaultPassEnv and the names of --pass-env, each once.
// jobctl's own variables are refused: a job's JOBCTL_* are its node's to
// set, and JOBCTL_DB would hand every job the database; so is the
// database's password.
func passEnvNames(extra []string) ([]string, error) {
	names := slices.Clone(DefaultPassEnv)
	for _, name := range extra {
		name = strings.TrimSpace(name)
		switch {
		case name == "" || strings.ContainsAny(name, "=\x00"):
			return nil, fmt.Errorf("--pass-env %q is not a variable name", name)
		case strings.HasPrefix(strings.ToUpper(name), "JOBCTL_"):
			return nil, fmt.Errorf("--pass-env %s: jobs never get jobctl's own variables from their node", name)
		case slices.Contains(SecretEnv, name):
			return nil, fmt.Errorf("--pass-env %s: jobs never get their node's database password", name)
		case !slices.Contains(names, name):
			names = append(names, name)
		}
	}
	return names, nil
}

func parentID(job *engine.Job) string {
	if job.ParentID == nil {
		return ""
	}
	return strconv.FormatInt(*job.ParentID, 10)
}
