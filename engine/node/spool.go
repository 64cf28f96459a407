package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// spoolFormat is the version of a spool file's layout; a file of another
// version is left alone.
const spoolFormat = 1

// resultSpool keeps on disk the results the database has not taken yet, so
// they outlive the node's process: a node killed during a database outage
// records them at its next start (replayResults) instead of its jobs
// running again.
//
// Nothing is written while the database answers: a result goes to the
// spool only once a try to record it has failed (and with it every result
// waiting behind it), or when a stopping node leaves results unrecorded.
// Its file is removed once the result is recorded or fenced off.
//
// Layout, under the node's state directory (--state-dir; by default
// $XDG_STATE_HOME/jobctl/nodes/NAME, else ~/.local/state/jobctl/nodes/NAME):
//
//	results/                 mode 0700
//	  JOB-ATTEMPT.json       mode 0600, one result each (spoolRecord)
//	  .JOB-ATTEMPT.json.tmp  a file being written; left over only by a crash
//
// A file is written whole to a temporary name, synced, renamed into place
// and the directory synced, so a crash leaves either the whole result or
// none of it.
type resultSpool struct {
	dir  string // "": results are kept in memory only
	node string
	log  *slog.Logger

	mu      sync.Mutex
	kept    map[int64]int // job id → results of it on disk
	made    bool          // dir exists
	failing bool          // the last write failed (said once)
}

// spoolRecord is one spool file: what recording the result needs, decided
// as for a live one (engine.OutcomeUpdate).
type spoolRecord struct {
	Format   int               `json:"format"`
	JobID    int64             `json:"job_id"`
	Attempt  int               `json:"attempt"`
	Node     string            `json:"node"`
	ExitCode int               `json:"exit_code"`
	Outcome  engine.RunOutcome `json:"outcome"`
	Warning  string            `json:"warning,omitempty"`
	Reason   string            `json:"reason"`
	// Shutdown: the run was stopped by its node (a shutdown, or the node
	// fencing itself off), so the job goes back to RESTART.
	Shutdown bool `json:"shutdown,omitempty"`
	// Refused: the job's spec could not run here; it fails for good.
	Refused bool      `json:"refused,omitempty"`
	EndedAt time.Time `json:"ended_at"`
	// Usage is what the run used; absent when it was not measured (and in
	// a record an older release wrote).
	Usage *engine.Usage `json:"usage,omitempty"`
}

func newResultSpool(stateDir, node string, log *slog.Logger) *resultSpool {
	s := &resultSpool{node: node, log: log, kept: map[int64]int{}}
	if stateDir != "" {
		s.dir = filepath.Join(stateDir, "results")
	}
	return s
}

// save puts c on disk, as record describes it, unless it is there already
// or settled. A spool that cannot be written keeps the result in memory
// only; the first error of a run of them is logged.
func (s *resultSpool) save(c *completion, record func() spoolRecord) {
	if s.dir == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.file != "" || c.settled {
		return
	}
	rec := record()
	name, err := s.write(rec)
	if err != nil {
		if !s.failing {
			s.log.Error("cannot keep a job result on disk; it is kept in memory only", "job", rec.JobID, "err", err)
		}
		s.failing = true
		return
	}
	if s.failing {
		s.log.Info("keeping job results on disk works again", "dir", s.dir)
	}
	s.failing = false
	c.file = name
	s.kept[rec.JobID]++
}

// settle marks c as done with (recorded, or dropped) and removes its file.
// Nothing is written for c after this.
func (s *resultSpool) settle(c *completion) {
	if s.dir == "" {
		return // nothing is ever written: spare the hot path the lock
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c.settled = true
	if c.file == "" {
		return
	}
	s.remove(c.file, c.run.job.ID)
	c.file = ""
}

func (s *resultSpool) remove(file string, id int64) {
	if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Error("cannot remove a recorded job result from disk", "file", file, "err", err)
	} else {
		_ = syncDir(s.dir)
	}
	if s.kept[id]--; s.kept[id] <= 0 {
		delete(s.kept, id)
	}
}

// onDisk reports whether c is on disk.
func (s *resultSpool) onDisk(c *completion) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.file != ""
}

// holds reports whether a result of job id is on disk.
func (s *resultSpool) holds(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kept[id] > 0
}

// write puts one record on disk; called with mu held.
func (s *resultSpool) write(rec spoolRecord) (string, error) {
	if !s.made {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return "", err
		}
		s.made = true
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	base := s.fileName(rec.JobID, rec.Attempt)
	tmp := filepath.Join(s.dir, "."+base+".tmp")
	final := filepath.Join(s.dir, base)
	if err := writeSynced(tmp, data); err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	if err := syncDir(s.dir); err != nil {
		return "", err
	}
	return final, nil
}

// fileName is the name of the file of a result of attempt of job id.
func (s *resultSpool) fileName(id int64, attempt int) string {
	return strconv.FormatInt(id, 10) + "-" + strconv.Itoa(attempt) + ".json"
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// load reads the results an earlier process of this node left, as
// completions of runs that are no longer on the books. Leftover temporary
// files are removed; a file that cannot be read, is of another format or of
// another node is left where it is, with an error logged.
func (s *resultSpool) load() ([]*completion, error) {
	if s.dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the job results kept in %s: %w", s.dir, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.made = true
	var out []*completion
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(s.dir, name)
		switch {
		case strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp"):
			_ = os.Remove(path) // a write a crash cut short: the result never left memory
			continue
		case !strings.HasSuffix(name, ".json") || e.IsDir():
			continue
		}
		rec, err := readSpoolRecord(path)
		if err == nil && name != s.fileName(rec.JobID, rec.Attempt) {
			err = errors.New("its name does not match its job and attempt")
		}
		if err == nil && rec.Node != s.node {
			err = fmt.Errorf("it is a result of node %q, not %q", rec.Node, s.node)
		}
		if err != nil {
			s.log.Error("cannot replay a kept job result; leaving it", "file", path, "err", err)
			continue
		}
		ar := &activeRun{job: &engine.Job{ID: rec.JobID}, attempt: rec.Attempt, refused: rec.Refused, shutdown: rec.Shutdown}
		res := engine.RunResult{ExitCode: rec.ExitCode, Outcome: rec.Outcome, Warning: rec.Warning, Reason: rec.Reason,
			Usage: rec.Usage}
		out = append(out, &completion{run: ar, result: res, endedAt: rec.EndedAt, file: path})
		s.kept[rec.JobID]++
	}
	return out, nil
}

func readSpoolRecord(path string) (spoolRecord, error) {
	var rec spoolRecord
	data, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, err
	}
	switch {
	case rec.Format != spoolFormat:
		return rec, fmt.Errorf("format %d, want %d", rec.Format, spoolFormat)
	case rec.JobID <= 0 || rec.Attempt < 0:
		return rec, errors.New("no job id or attempt")
	}
	return rec, nil
}
