package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/cgroup"
	"github.com/jobctl/jobctl/engine/jobuser"
	"github.com/jobctl/jobctl/engine/runner"
)

// jobResources are what the machine gives each job process of this node
// besides its process group: a cgroup of its own where the machine lets
// the node make one (the run is measured in it and, with --enforce, held
// to a CPU share and a memory limit), and, for a job run as another user,
// a temporary directory of its own. They are opened once the node's name
// is its own (registered) and closed once it has no runs left.
type jobResources struct {
	cfg Config
	// users are who jobs run as besides the node's own user.
	users jobUsers
	log   *slog.Logger

	// cgroups make a cgroup for each job process's run; nil when the
	// machine lets the node make none.
	cgroups *cgroup.Manager
	// tempDirs hold the temporary directories of the attempts of jobs run
	// as another user; nil without such users.
	tempDirs *jobuser.TempDirs
}

func newJobResources(cfg Config, users jobUsers, log *slog.Logger) *jobResources {
	return &jobResources{cfg: cfg, users: users, log: log}
}

// openCgroups makes this node's cgroups where the machine lets it, so
// each job process runs in a group of its own, and says in one line how
// the node measures its jobs and, with --enforce, what it enforces and
// what it cannot.
func (jr *jobResources) openCgroups() {
	m, err := cgroup.Open(cgroup.Options{Name: jr.cfg.Name, Limits: jr.cfg.Enforce})
	if err != nil {
		msg := "jobs are measured by the kernel's accounting of the processes they reap, not in a cgroup of their own: " + err.Error()
		if jr.cfg.Enforce {
			jr.log.Warn(msg + "; --enforce enforces nothing")
		} else {
			jr.log.Info(msg)
		}
		return
	}
	jr.cgroups = m
	s := m.Support()
	level := slog.LevelInfo
	if enforces := s.CPUShare && s.MemoryLimit; jr.cfg.Enforce && !enforces {
		level = slog.LevelWarn
	}
	jr.log.Log(context.Background(), level, s.Describe(jr.cfg.Enforce))
}

// closeCgroups removes the node's cgroups once it has no runs left.
func (jr *jobResources) closeCgroups() {
	if jr.cgroups == nil {
		return
	}
	if err := jr.cgroups.Close(); err != nil {
		jr.log.Warn("cannot remove the node's cgroups", "err", err)
	}
}

// jobGroup makes the cgroup of a job process's run, with the limits the
// node enforces: a CPU share from its load, and its memory limit (else its
// service's). Nil for a builtin, on a node without cgroups, and when the
// group cannot be made (the run is then measured by what it reaps).
func (jr *jobResources) jobGroup(h handler, job *engine.Job, attempt int) *cgroup.Group {
	if jr.cgroups == nil || h.builtin != nil {
		return nil
	}
	l := cgroup.Limits{Load: job.Load, CPUShare: jr.cfg.Enforce, Memory: cmp.Or(job.MemoryLimit, h.memory)}
	g, err := jr.cgroups.NewGroup(fmt.Sprintf("job-%d-%d", job.ID, attempt), l)
	if err != nil {
		jr.log.Warn("cannot make the job's cgroup; it runs without, measured by the processes it reaps", "job", job.ID, "err", err)
		return nil
	}
	return g
}

// openTempDirs prepares the temporary directories of jobs run as another
// user, once the node's name is its own (registered): what is left in
// them is an earlier process's, whose jobs are dead.
func (jr *jobResources) openTempDirs() error {
	if len(jr.users) == 0 {
		return nil
	}
	d, err := jobuser.OpenTempDirs(jobTempBase(jr.cfg))
	if err != nil {
		return err
	}
	jr.tempDirs = d
	for _, u := range jr.users {
		jr.log.Info("jobs run as another user", "user", u.Name, "uid", u.UID, "gid", u.GID, "tmp", d.Base())
	}
	return nil
}

// makeTempDir gives a run of a job of user u its own empty TMPDIR, and
// names it in the spec's environment.
func (jr *jobResources) makeTempDir(u *jobuser.User, ar *activeRun, spec *runner.Spec) error {
	if jr.tempDirs == nil {
		return errors.New("the node is not running yet")
	}
	dir, err := jr.tempDirs.Make(u, ar.job.ID, ar.attempt)
	if err != nil {
		return fmt.Errorf("cannot make the job's temporary directory: %w", err)
	}
	ar.tempDir = dir
	spec.Env = append(spec.Env, "TMPDIR="+dir)
	return nil
}

// removeTempDir removes a run's TMPDIR once its processes are gone. One
// that cannot be removed is logged, and removed by the node's next start.
func (jr *jobResources) removeTempDir(ar *activeRun) {
	if ar.tempDir == "" {
		return
	}
	if err := jr.tempDirs.Remove(ar.tempDir); err != nil {
		jr.log.Error("cannot remove a job's temporary directory", "job", ar.job.ID, "dir", ar.tempDir, "err", err)
	}
	ar.tempDir = ""
}

// closeTempDirs lets go of the temporary directories of jobs run as
// another user, once the node has no runs left.
func (jr *jobResources) closeTempDirs() {
	if jr.tempDirs != nil {
		jr.tempDirs.Close()
	}
}
