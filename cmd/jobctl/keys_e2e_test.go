package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// keyScript records when its run starts and ends (by this machine's clock,
// the same for every node of the test) under its name; a second argument
// names a file it waits for first, a third a file it creates before it
// ends.
const keyScript = `d=$1; name=$2
date +%s%N > "$d/$name.start.tmp" && mv "$d/$name.start.tmp" "$d/$name.start"
if [ -n "$3" ]; then while [ ! -e "$d/$3" ]; do sleep 0.05; done; fi
if [ -n "$4" ]; then : > "$d/$4"; fi
date +%s%N > "$d/$name.end.tmp" && mv "$d/$name.end.tmp" "$d/$name.end"
`

// counterScript fails until it has been run its first argument's number of
// times, counting in the file its second argument names.
const counterScript = `n=$(cat "$2" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$2"
[ "$n" -ge "$1" ]
`

// rollbackScript appends a line to the file its first argument names and
// leaves the mark its second names.
const rollbackScript = `echo "rolled back $JOBCTL_JOB_ID" >> "$1"; : > "$2"
`

// sawScript records whether the mark its first argument names exists as it
// starts, in the file its second names.
const sawScript = `if [ -e "$1" ]; then echo yes > "$2"; else echo no > "$2"; fi
`

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// interval is one run as keyScript recorded it, in Unix nanoseconds.
type interval struct{ start, end int64 }

func readInterval(t *testing.T, dir, name string) interval {
	t.Helper()
	var iv interval
	for _, f := range []struct {
		suffix string
		into   *int64
	}{{".start", &iv.start}, {".end", &iv.end}} {
		b, err := os.ReadFile(filepath.Join(dir, name+f.suffix))
		if err != nil {
			t.Fatalf("run %s left no %s record: %v", name, f.suffix, err)
		}
		if *f.into, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err != nil {
			t.Fatalf("run %s: %s record %q", name, f.suffix, b)
		}
	}
	return iv
}

// rollbackView is what `show -o json` says of a job's rollback.
type rollbackView struct {
	jobView
	Operation     string   `json:"operation"`
	Args          []string `json:"args"`
	Key           string   `json:"key"`
	MaxAttempts   int      `json:"max_attempts"`
	Rollback      string   `json:"rollback"`
	RollbackType  string   `json:"rollback_type"`
	RollbackJobID *int64   `json:"rollback_job_id"`
	RollbackOf    *int64   `json:"rollback_of"`
	DoubleFault   bool     `json:"double_fault"`
}

func (c *cluster) showRollback(id string) rollbackView {
	c.t.Helper()
	var v rollbackView
	if err := json.Unmarshal([]byte(c.ok("show", id, "-o", "json")), &v); err != nil {
		c.t.Fatalf("show %s: %v", id, err)
	}
	return v
}

// Keys, retries and rollbacks on a cluster of three nodes: the jobs of one
// key run one at a time in submission order while another key's run beside
// them; a retry comes before the next job; a final failure's rollback runs
// once, before the key moves on; a failing rollback is a double fault.
func TestKeysAndRollbackAcrossNodes(t *testing.T) {
	t.Parallel()
	c := postgresCluster(t)
	nodes := map[string]*node{}
	for _, name := range []string{"n1", "n2", "n3"} {
		// Round robin spreads the one-at-a-time jobs of a key over the nodes.
		nodes[name] = c.serve(name, "--exec", "--max-load", "4", "--selector", "roundrobin")
	}
	dir := t.TempDir()
	sh := func(script string, args ...string) []string { return append([]string{"--", "sh", script}, args...) }

	t.Run("KeyOrderAndParallelKeys", func(t *testing.T) {
		script := writeScript(t, dir, "key.sh", keyScript)
		// The first job of key a waits for a file a job of key b makes:
		// it can end only if key b runs while key a's job runs.
		a := []string{c.submit(append([]string{"--key", "a"}, sh(script, dir, "a1", "b1.done")...)...)}
		for i := 2; i <= 5; i++ {
			a = append(a, c.submit(append([]string{"--key", "a"}, sh(script, dir, fmt.Sprintf("a%d", i))...)...))
		}
		b := c.submit(append([]string{"--key", "b"}, sh(script, dir, "b1", "", "b1.done")...)...)
		c.ok(append([]string{"wait", "--timeout", "90s", b}, a...)...)

		ran := map[string]bool{}
		var prev interval
		for i, id := range a {
			iv := readInterval(t, dir, fmt.Sprintf("a%d", i+1))
			if iv.end < iv.start {
				t.Errorf("a%d ended before it started: %+v", i+1, iv)
			}
			if i > 0 && iv.start < prev.end {
				t.Errorf("a%d started at %d, before a%d ended at %d: jobs of one key overlapped or ran out of order",
					i+1, iv.start, i, prev.end)
			}
			prev = iv
			ran[c.show(id).Node] = true
		}
		// b1 records its end after it made the file a1 waits for, so only
		// its start is sure to fall within a1's run.
		bi, a1 := readInterval(t, dir, "b1"), readInterval(t, dir, "a1")
		if bi.start < a1.start || bi.start > a1.end {
			t.Errorf("b1 ran %+v, not while a1 ran %+v", bi, a1)
		}
		t.Logf("the jobs of key a ran on nodes %v", ran)
	})

	t.Run("RetryBeforeNextJob", func(t *testing.T) {
		script := writeScript(t, dir, "counter.sh", counterScript)
		copyCount := writeScript(t, dir, "copy.sh", `cat "$1" > "$2"`+"\n")
		counter := filepath.Join(dir, "retry.count")
		id := c.submit(append([]string{"--key", "r", "--max-attempts", "3", "--backoff", "100ms"}, sh(script, "3", counter)...)...)
		// The next job of the key copies the count as it starts: 3 when
		// every run of the retried job came first.
		seen := filepath.Join(dir, "retry.seen")
		next := c.submit(append([]string{"--key", "r"}, sh(copyCount, counter, seen)...)...)
		c.ok("wait", "--timeout", "60s", id, next)
		j := c.show(id)
		if j.Status != "FINISHED" || j.Attempt != 3 {
			t.Errorf("job failing twice then succeeding: %s on attempt %d, want FINISHED on 3", j.Status, j.Attempt)
		}
		if b, _ := os.ReadFile(counter); strings.TrimSpace(string(b)) != "3" {
			t.Errorf("the job ran %q times, want 3", b)
		}
		if b, _ := os.ReadFile(seen); strings.TrimSpace(string(b)) != "3" {
			t.Errorf("the next job of the key saw %q runs of the retried one, want 3", b)
		}
	})

	t.Run("RollbackOnceBeforeTheKeyMovesOn", func(t *testing.T) {
		rb := writeScript(t, dir, "rollback.sh", rollbackScript)
		saw := writeScript(t, dir, "saw.sh", sawScript)
		log, mark := filepath.Join(dir, "rollback.log"), filepath.Join(dir, "rollback.mark")
		spec := fmt.Sprintf("sh '%s' '%s' '%s'", rb, log, mark)
		id := c.submit("--key", "k", "--max-attempts", "2", "--backoff", "100ms", "--rollback", spec, "--", "false")
		next := c.submit(append([]string{"--key", "k"}, sh(saw, mark, filepath.Join(dir, "rollback.next"))...)...)
		c.waitStatus(next, "FINISHED", 90*time.Second)

		f := c.showRollback(id)
		if f.Status != "FAILED" || f.Attempt != 2 || f.RollbackJobID == nil || f.DoubleFault || f.Rollback != spec {
			t.Fatalf("the failed job: %+v", f)
		}
		r := c.showRollback(strconv.FormatInt(*f.RollbackJobID, 10))
		if r.Status != "FINISHED" || r.RollbackOf == nil || *r.RollbackOf != f.ID || r.Key != "k" || r.MaxAttempts != 1 ||
			r.Type != "exec" || !slices.Equal(r.Args, []string{"sh", rb, log, mark}) || r.Operation != fmt.Sprintf("rollback of %d", f.ID) {
			t.Errorf("the rollback job: %+v", r)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "rollback.next")); strings.TrimSpace(string(b)) != "yes" {
			t.Errorf("the next job of the key saw the rollback's mark: %q, want yes", b)
		}
		// More rounds make no second rollback.
		c.roundsPass(nodes, 5)
		b, err := os.ReadFile(log)
		if lines := strings.Count(string(b), "\n"); err != nil || lines != 1 {
			t.Errorf("the rollback ran %d times (%q, %v), want once", lines, b, err)
		}
		if out := c.ok("show", id); !strings.Contains(out, fmt.Sprintf("job %d FINISHED", *f.RollbackJobID)) {
			t.Errorf("show of the failed job does not name its rollback job:\n%s", out)
		}
	})

	t.Run("DoubleFault", func(t *testing.T) {
		id := c.submit("--key", "d", "--rollback", "false", "--", "false")
		fine := c.submit("--key", "e", "--rollback", "true", "--", "false")
		c.eventually(90*time.Second, "both rollbacks to end", func() bool {
			for _, j := range []string{id, fine} {
				v := c.showRollback(j)
				if v.RollbackJobID == nil {
					return false
				}
				if s := c.show(strconv.FormatInt(*v.RollbackJobID, 10)).Status; s != "FAILED" && s != "FINISHED" {
					return false
				}
			}
			return true
		})
		if v := c.showRollback(id); !v.DoubleFault || v.Status != "FAILED" {
			t.Errorf("a failed job whose rollback failed: %s, double fault %v; want FAILED, true", v.Status, v.DoubleFault)
		}
		if v := c.showRollback(fine); v.DoubleFault {
			t.Error("a failed job whose rollback finished is a double fault")
		}
		if got := strings.Fields(c.ok("list", "--double-fault", "-q")); !slices.Equal(got, []string{id}) {
			t.Errorf("list --double-fault -q = %v, want [%s]", got, id)
		}
		if out := c.ok("show", id); !strings.Contains(out, "double fault") {
			t.Errorf("show of a double fault does not say so:\n%s", out)
		}
	})

	t.Run("BadRollbackIsUsageError", func(t *testing.T) {
		for _, args := range [][]string{
			{"--rollback", "undo 'unbalanced", "--", "true"},
			{"--rollback-type", "x", "--", "true"},
			{"--rollback", "undo", "--rollback-type", "bad\ntype", "--", "true"},
		} {
			if r := c.run(append([]string{"submit"}, args...)...); r.code != 2 || strings.Count(r.stderr, "\n") > 2 {
				t.Errorf("submit %q: exit %d, stderr %q; want exit 2 with one line", args, r.code, r.stderr)
			}
		}
	})
}
