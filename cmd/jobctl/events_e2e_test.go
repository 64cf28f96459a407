package main_test

import (
	"encoding/json"
	"os"
	"os/user"
	"strings"
	"testing"
	"time"
)

// operatorName is who the commands of the tests record: the OS user at
// this host, as jobctl names it.
func operatorName(t *testing.T) string {
	t.Helper()
	name := os.Getenv("USER")
	if name == "" {
		u, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return name + "@" + host
}

type eventView struct {
	ID     int64     `json:"id"`
	At     time.Time `json:"at"`
	Who    string    `json:"who"`
	Verb   string    `json:"verb"`
	JobID  *int64    `json:"job_id"`
	Detail string    `json:"detail"`
	Reason string    `json:"reason"`
}

// A job cancelled from the command line with --reason: 'jobctl events'
// and 'jobctl show' name who cancelled it and why, once its node has
// stopped it.
func TestCancelWithReasonIsOnRecord(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("node-a")
	id := c.submit("--type", "sleep", "--payload", `{"duration":"10m"}`)
	c.waitStatus(id, "RUNNING", 30*time.Second)
	who := operatorName(t)

	c.ok("cancel", id, "--reason", "input was the wrong file")
	c.waitStatus(id, "CANCELLED", 30*time.Second)

	var events []eventView
	if err := json.Unmarshal([]byte(c.ok("events", "--job", id, "-o", "json")), &events); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Verb != "submit" || events[1].Verb != "cancel" {
		t.Fatalf("events of job %s: %+v; want its submit and its cancel", id, events)
	}
	ev := events[1]
	if ev.Who != who || ev.Reason != "input was the wrong file" || ev.Detail != "RUNNING → CANCELLING" || ev.At.IsZero() {
		t.Errorf("the cancel's event: %+v; want %s, the reason and RUNNING → CANCELLING", ev, who)
	}

	want := "cancelled by " + who + ": input was the wrong file"
	if out := c.ok("show", id); !strings.Contains(out, "message\t"+want+"\n") {
		t.Errorf("show %s:\n%s\nwant the message %q", id, out, want)
	}
	var shown struct {
		Status  string     `json:"status"`
		EndedBy *eventView `json:"ended_by"`
	}
	if err := json.Unmarshal([]byte(c.ok("show", id, "-o", "json")), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Status != "CANCELLED" || shown.EndedBy == nil || shown.EndedBy.Who != who || shown.EndedBy.Reason != "input was the wrong file" {
		t.Errorf("show -o json: %+v, ended_by %+v", shown, shown.EndedBy)
	}

	// The piped listing: one line per event, tab-separated.
	lines := strings.Split(strings.TrimSpace(c.ok("events", "--job", id)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "\t"+who+"\tcancel\tjob "+id+" (sleep)\tRUNNING → CANCELLING\tinput was the wrong file") {
		t.Errorf("events --job %s:\n%s", id, strings.Join(lines, "\n"))
	}
	// A reason the trail cannot hold changes nothing: exit 2.
	if r := c.run("requeue", id, "--reason", "two\nlines"); r.code != 2 || c.show(id).Status != "CANCELLED" {
		t.Errorf("requeue with a bad reason: exit %d (%s), job %s", r.code, r.stderr, c.show(id).Status)
	}
}
