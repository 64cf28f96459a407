package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// chaosWorkerSource is the program chaos jobs run. It appends to the file
// it is given a "start" line, a "tick" line every 100ms while it works and
// an "end" line when done, each one small write to a file opened O_APPEND,
// so lines of concurrent runs never mix. A run killed midway leaves its
// last tick as the evidence of how long it lived.
//
// Before its start it locks, for as long as it lives, a file of its job
// and one of its key, if it has one; a run that finds either held writes
// "beside-job" or "beside-key": another run of its job, or of its key, is
// alive at that moment. The kernel drops the locks of a process that dies,
// however it dies, so this sees a run killed in silence too, which its
// ticks alone cannot date.
const chaosWorkerSource = `package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) != 3 && len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: chaoswork FILE DURATION [KEY]")
		os.Exit(2)
	}
	d, err := time.ParseDuration(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	f, err := os.OpenFile(os.Args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	prefix := fmt.Sprintf("%s %s %s %d", os.Getenv("JOBCTL_JOB_ID"), os.Getenv("JOBCTL_ATTEMPT"), os.Getenv("JOBCTL_NODE"), os.Getpid())
	record := func(kind string) {
		if _, err := fmt.Fprintf(f, "%s %s %d\n", prefix, kind, time.Now().UnixNano()); err != nil {
			os.Exit(1)
		}
	}
	locks := os.Args[1] + ".locks"
	if err := os.MkdirAll(locks, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	names := map[string]string{"beside-job": "job-" + os.Getenv("JOBCTL_JOB_ID")}
	if len(os.Args) == 4 {
		names["beside-key"] = "key-" + os.Args[3]
	}
	var beside []string
	for kind, name := range names {
		lock, err := os.OpenFile(filepath.Join(locks, name), os.O_RDONLY|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == syscall.EWOULDBLOCK {
			beside = append(beside, kind)
		} else if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		// The lock lives as long as the process: lock is never closed.
	}
	record("start")
	for _, kind := range beside {
		record(kind)
	}
	end := time.Now().Add(d)
	for left := time.Until(end); left > 0; left = time.Until(end) {
		time.Sleep(min(left, 100*time.Millisecond))
		if time.Until(end) > 0 {
			record("tick")
		}
	}
	record("end")
}
`

var (
	chaosWorkerOnce sync.Once
	chaosWorkerPath string
	chaosWorkerErr  error
)

// chaosWorker builds the worker once, next to the jobctl binary.
func chaosWorker(t *testing.T) string {
	t.Helper()
	chaosWorkerOnce.Do(func() {
		dir := filepath.Join(filepath.Dir(binary), "chaoswork-src")
		if chaosWorkerErr = os.MkdirAll(dir, 0o755); chaosWorkerErr != nil {
			return
		}
		src := filepath.Join(dir, "main.go")
		if chaosWorkerErr = os.WriteFile(src, []byte(chaosWorkerSource), 0o644); chaosWorkerErr != nil {
			return
		}
		chaosWorkerPath = filepath.Join(filepath.Dir(binary), "chaoswork")
		build := exec.Command("go", "build", "-o", chaosWorkerPath, src)
		build.Dir = dir
		build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		if out, err := build.CombinedOutput(); err != nil {
			chaosWorkerErr = fmt.Errorf("building the chaos worker: %v\n%s", err, out)
		}
	})
	if chaosWorkerErr != nil {
		t.Fatal(chaosWorkerErr)
	}
	return chaosWorkerPath
}

// chaosJob is one job of the mix.
type chaosJob struct {
	Load       float64
	Duration   time.Duration
	Grandchild bool   // the work runs in a grandchild of the node, behind a shell
	Key        string // one of a few keys, or none
}

// chaosMix draws n jobs: loads from 0.5 to 2, mostly short runs, some of
// one to two seconds, and a few longer than the node lease, so that a run
// that outlives its node is still alive when its job runs again; a third
// of them do their work in a grandchild, and a fifth have one of four
// keys, whose jobs must run one after another in submission order.
func chaosMix(seed uint64, n int) []chaosJob {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	loads := []float64{0.5, 1, 1, 1.5, 2}
	jobs := make([]chaosJob, n)
	for i := range jobs {
		var d time.Duration
		switch x := r.Float64(); {
		case x < 0.70:
			d = 50*time.Millisecond + time.Duration(r.Int64N(int64(250*time.Millisecond)))
		case x < 0.93:
			d = 300*time.Millisecond + time.Duration(r.Int64N(int64(700*time.Millisecond)))
		case x < 0.97:
			d = time.Second + time.Duration(r.Int64N(int64(time.Second)))
		default:
			d = chaosNodeLease + time.Second + time.Duration(r.Int64N(int64(2*time.Second)))
		}
		jobs[i] = chaosJob{Load: loads[r.IntN(len(loads))], Duration: d.Round(time.Millisecond), Grandchild: r.IntN(3) == 0}
		if r.IntN(5) == 0 {
			jobs[i].Key = fmt.Sprintf("k%d", r.IntN(4))
		}
	}
	return jobs
}

// argv is the job's command: the worker itself, or a shell that runs it in
// the background and waits, so the worker is the node's grandchild.
func (j chaosJob) argv(worker, records string) []string {
	w := []string{worker, records, j.Duration.String()}
	if j.Key != "" {
		w = append(w, j.Key)
	}
	if j.Grandchild {
		return append([]string{"sh", "-c", `"$0" "$@" & wait`}, w...)
	}
	return w
}

// submitChaos submits the jobs in batches of batchSize and returns their
// ids in submission order.
func (cc *chaosCluster) submitChaos(jobs []chaosJob, worker, records string, batchSize int) ([]string, error) {
	dir := cc.t.TempDir()
	var ids []string
	for first := 0; first < len(jobs); first += batchSize {
		var b bytes.Buffer
		for _, j := range jobs[first:min(first+batchSize, len(jobs))] {
			line, err := json.Marshal(map[string]any{"args": j.argv(worker, records), "load": j.Load, "key": j.Key})
			if err != nil {
				return ids, err
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		path := filepath.Join(dir, fmt.Sprintf("batch-%d.jsonl", first))
		if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
			return ids, err
		}
		out, err := cc.jobctl(60*time.Second, "submit", "--batch", path)
		if err != nil {
			return ids, err
		}
		got := strings.Fields(out)
		if want := min(batchSize, len(jobs)-first); len(got) != want {
			return ids, fmt.Errorf("submit --batch printed %d ids, want %d", len(got), want)
		}
		ids = append(ids, got...)
	}
	return ids, nil
}

// chaosRun is one run of a job as its worker recorded it; times are Unix
// nanoseconds, 0 when never written.
type chaosRun struct {
	Job     int64
	Attempt int
	Node    string
	PID     int
	Start   int64
	Last    int64 // the latest line it wrote
	End     int64 // when it finished its work; 0 if it was killed first

	BesideJob bool // it found another run of its job alive as it started
	BesideKey bool // it found a run of another job of its key alive as it started
}

func (r *chaosRun) String() string {
	end := "never ended"
	if r.End != 0 {
		end = "ended " + nanoClock(r.End)
	}
	return fmt.Sprintf("attempt %d on %s (pid %d) started %s, last seen %s, %s",
		r.Attempt, r.Node, r.PID, nanoClock(r.Start), nanoClock(r.Last), end)
}

// nanoClock prints Unix nanoseconds as a time of day with milliseconds.
func nanoClock(ns int64) string {
	return time.Unix(0, ns).Format("15:04:05.000")
}

// readChaosRuns parses the records file into runs, in the order they
// started.
func readChaosRuns(path string) ([]*chaosRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type key struct {
		job     int64
		attempt int
		node    string
		pid     int
	}
	byKey := map[key]*chaosRun{}
	var runs []*chaosRun
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != 6 {
			return nil, fmt.Errorf("%s:%d: malformed record %q", path, n, sc.Text())
		}
		job, err1 := strconv.ParseInt(fields[0], 10, 64)
		attempt, err2 := strconv.Atoi(fields[1])
		pid, err3 := strconv.Atoi(fields[3])
		at, err4 := strconv.ParseInt(fields[5], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			return nil, fmt.Errorf("%s:%d: malformed record %q", path, n, sc.Text())
		}
		k := key{job, attempt, fields[2], pid}
		r := byKey[k]
		switch fields[4] {
		case "start":
			if r != nil {
				return nil, fmt.Errorf("%s:%d: a second start of one process: %q", path, n, sc.Text())
			}
			r = &chaosRun{Job: job, Attempt: attempt, Node: fields[2], PID: pid, Start: at, Last: at}
			byKey[k] = r
			runs = append(runs, r)
		case "beside-job", "beside-key":
			if r == nil {
				return nil, fmt.Errorf("%s:%d: a record before its start: %q", path, n, sc.Text())
			}
			r.BesideJob = r.BesideJob || fields[4] == "beside-job"
			r.BesideKey = r.BesideKey || fields[4] == "beside-key"
		case "tick", "end":
			if r == nil {
				return nil, fmt.Errorf("%s:%d: a record before its start: %q", path, n, sc.Text())
			}
			r.Last = max(r.Last, at)
			if fields[4] == "end" {
				r.End = at
			}
		default:
			return nil, fmt.Errorf("%s:%d: malformed record %q", path, n, sc.Text())
		}
	}
	return runs, sc.Err()
}

// workersRunning counts the processes still running the worker for this
// records file: a run that outlived its node writes on until it ends.
func workersRunning(records string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) >= 2 && strings.HasSuffix(args[0], "chaoswork") && args[1] == records {
			if pid, _ := strconv.Atoi(e.Name()); processAlive(pid) {
				n++
			}
		}
	}
	return n
}
