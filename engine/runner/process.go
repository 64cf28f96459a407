package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jobctl/jobctl/engine"
)

// outputDrainDelay bounds how long stdout and stderr are read after the job's
// process group is gone; only a process that left the group (setsid) can
// still hold them open.
const outputDrainDelay = 5 * time.Second

// Start runs s.Argv as a child process in its own process group and returns
// at once. A command that cannot be started gives a Run that has already
// ended as Failed, with exit code 127 (126 when not executable) and a log
// line saying why. The only error is an empty Argv.
func Start(s Spec, out Output) (*Run, error) {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return nil, errors.New("runner: no command to run (empty argv)")
	}
	r := newRun(s, out)
	stdout := &lineParser{out: r.out}
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	// Never nil: a nil Env would hand the job the node's whole environment.
	cmd.Env = append([]string{
		"JOBCTL_JOB_ID=" + strconv.FormatInt(s.JobID, 10),
		"JOBCTL_ATTEMPT=" + strconv.Itoa(s.Attempt)}, s.Env...)
	cmd.Dir = s.Dir
	if len(s.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(s.Stdin)
	}
	cmd.Stdout = stdout
	cmd.Stderr = logWriter{out: r.out}
	cmd.SysProcAttr = jobProcAttr()
	cmd.SysProcAttr.Credential = s.Credential
	cmd.WaitDelay = outputDrainDelay

	var enter func() (func() error, error)
	if s.Group != nil {
		s.Group.Place(cmd.SysProcAttr)
		enter = s.Group.EnterThread
	}
	started := time.Now()
	spawned := spawn(cmd, enter)
	if spawned.leaveErr != nil {
		r.out.logf("the node could not move its starting thread out of the job's cgroup: %v", spawned.leaveErr)
	}
	if err := spawned.err; err != nil {
		r.out.logf("cannot start %s: %v", s.Argv[0], err)
		if s.Group != nil {
			_ = s.Group.Remove()
		}
		r.finish(ending{exitCode: startFailureCode(err), reason: "cannot start: " + err.Error()})
		return r, nil
	}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, out: r.out, watcher: s.Watcher,
		meter: &meter{group: s.Group, pgid: cmd.Process.Pid, started: started}}
	if p.watcher != nil {
		p.watcher.WatchGroup(p.pid)
	}
	r.start(p)
	go func() {
		e := p.wait()
		stdout.flush()
		r.finish(e)
	}()
	return r, nil
}

// startFailureCode follows the shell: 126 found but not executable, 127 otherwise.
func startFailureCode(err error) int {
	if errors.Is(err, fs.ErrPermission) {
		return 126
	}
	return 127
}

// process controls a started child. Its pid is also its process group id.
type process struct {
	cmd     *exec.Cmd
	pid     int
	out     *trackingOutput
	watcher GroupWatcher // nil: none
	meter   *meter

	// mu orders signals against reaping: once the leader is reaped its pid,
	// and so the group id, may be reused by an unrelated process.
	mu     sync.Mutex
	exited bool
}

// signal sends sig to the whole process group while it is safe to.
func (p *process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return ErrFinished
	}
	if err := syscall.Kill(-p.pid, sig); err != nil {
		return fmt.Errorf("sending %s to process group %d: %w", unix.SignalName(sig), p.pid, err)
	}
	return nil
}

func (p *process) pause() error  { return p.signal(syscall.SIGSTOP) }
func (p *process) resume() error { return p.signal(syscall.SIGCONT) }

func (p *process) terminate(phrase string) {
	p.out.logf("%s, sending SIGTERM", phrase)
	_ = p.signal(syscall.SIGTERM) // ErrFinished: it ended meanwhile
	// A stopped process keeps SIGTERM pending until it is continued.
	_ = p.signal(syscall.SIGCONT)
}

func (p *process) kill(grace time.Duration) {
	p.out.logf("still running %s after SIGTERM, sending SIGKILL", grace)
	_ = p.signal(syscall.SIGKILL)
}

// endedOnItsOwn reports that the leader has ended, reaped or not.
func (p *process) endedOnItsOwn() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited || leaderExited(p.pid)
}

func (p *process) killNow(phrase string) {
	p.out.logf("%s, sending SIGKILL", phrase)
	_ = p.signal(syscall.SIGKILL)
}

// wait waits for the leader to exit, kills what it left in its group, then
// reaps it and reads the rest of its output.
func (p *process) wait() ending {
	// The leader is left a zombie, which keeps its pid and group id
	// reserved while the leftovers are killed.
	err := waitExited(p.pid)
	wall := time.Since(p.meter.started)
	p.mu.Lock()
	if err == nil {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	}
	p.exited = true
	p.mu.Unlock()
	group := p.meter.group
	if group != nil {
		// What left the process group (setsid, a daemon) is still in
		// the run's cgroup: the run is over, so is it.
		group.Kill()
	}
	if p.watcher != nil {
		p.watcher.ForgetGroup(p.pid)
	}

	err = p.cmd.Wait()
	if errors.Is(err, exec.ErrWaitDelay) {
		p.out.logf("output still open %s after the job exited (held by a process outside its group); stopped reading", outputDrainDelay)
	}
	e := exitEnding(p.cmd.ProcessState, err)
	usage, sample := p.meter.final(p.cmd.ProcessState, wall)
	if group != nil {
		usage.OOMKilled = sample.OOMKills > 0 ||
			(sample.OOMKills < 0 && sample.LimitHits > 0 && e.signal == syscall.SIGKILL)
		if usage.OOMKilled && !e.ok {
			e.reason = outOfMemoryReason(group.MemoryLimit(), e)
		}
		if err := group.Remove(); err != nil {
			p.out.logf("%v", err)
		}
	}
	e.usage = &usage
	return e
}

// outOfMemoryReason says that a run failed because a process of it was
// killed at its memory limit, and how its leader ended if not by that
// kill: "killed: out of memory, limit 64MiB; exit code 137".
func outOfMemoryReason(limit int64, e ending) string {
	reason := engine.MessageOutOfMemory(limit)
	if e.signal == 0 {
		reason += "; " + e.reason
	}
	return reason
}

// exitEnding describes how a reaped process ended.
func exitEnding(state *os.ProcessState, waitErr error) ending {
	if state == nil {
		return ending{exitCode: -1, reason: "lost track of the process: " + waitErr.Error()}
	}
	ws, ok := state.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		reason := "killed by " + unix.SignalName(ws.Signal())
		if ws.CoreDump() {
			reason += " (core dumped)"
		}
		return ending{exitCode: -1, reason: reason, signal: ws.Signal()}
	}
	code := state.ExitCode()
	return ending{exitCode: code, ok: code == 0, reason: fmt.Sprintf("exit code %d", code)}
}

// live is what the run has used so far; ok is false once its leader has
// ended (its use is then final) or when it cannot be read.
func (p *process) live(procs func(pgid int) procTotals) (cpu time.Duration, cores float64, memory int64, ok bool) {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited {
		return 0, 0, 0, false
	}
	return p.meter.live(procs)
}
