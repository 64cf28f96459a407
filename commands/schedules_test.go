package commands

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func TestSchedulesAddParse(t *testing.T) {
	f := &Factory{IO: &IOStreams{}}
	var got *SchedulesAddOptions
	cmd := NewCmdSchedulesAdd(f, func(_ context.Context, o *SchedulesAddOptions) error { got = o; return nil })
	err := execParse(cmd, "nightly", "--cron", "30 2 * * *", "--tz", "Europe/Berlin", "--overlap", "allow",
		"--load", "2", "--key", "k", "--max-attempts", "3", "--backoff", "1m", "--run-timeout", "1h", "--memory", "256MiB",
		"--payload", `{"a":1}`, "--operation", "report", "--rollback", `./undo.sh "last night"`, "--rollback-type", " undo ",
		"--", "make", "report")
	if err != nil {
		t.Fatal(err)
	}
	p, j := got.Params, got.Params.Job
	if p.Name != "nightly" || p.Cron != "30 2 * * *" || p.TZ != "Europe/Berlin" || p.Overlap != engine.OverlapAllow {
		t.Errorf("params = %+v", p)
	}
	if j.Type != engine.TypeExec || strings.Join(j.Args, " ") != "make report" || j.Load == nil || *j.Load != 2 ||
		j.Key != "k" || j.MaxAttempts != 3 || j.Backoff != engine.Duration(time.Minute) ||
		j.Timeout == nil || *j.Timeout != engine.Duration(time.Hour) || string(j.Payload) != `{"a":1}` || j.Operation != "report" ||
		j.Rollback != `./undo.sh "last night"` || j.RollbackType != "undo" || j.Memory == nil || *j.Memory != 256<<20 {
		t.Errorf("template = %+v", j)
	}

	// --timeout, the run limit's old name, still sets it, with a warning.
	ios, _, stderr := TestIO("")
	cmd = NewCmdSchedulesAdd(&Factory{IO: ios}, func(_ context.Context, o *SchedulesAddOptions) error { got = o; return nil })
	if err := execParse(cmd, "old", "--cron", "@hourly", "--type", "noop", "--timeout", "2h"); err != nil {
		t.Fatal(err)
	}
	if j := got.Params.Job; j.Timeout == nil || *j.Timeout != engine.Duration(2*time.Hour) ||
		stderr.String() != "jobctl: warning: --timeout is deprecated here; the run limit is --run-timeout\n" {
		t.Errorf("--timeout 2h: run limit %v, stderr %q; want 2h and a warning", j.Timeout, stderr)
	}

	cmd = NewCmdSchedulesAdd(f, func(_ context.Context, o *SchedulesAddOptions) error { got = o; return nil })
	if err := execParse(cmd, "tick", "--cron", "@every 1s", "--type", "noop"); err != nil {
		t.Fatal(err)
	}
	if got.Params.TZ != "UTC" || got.Params.Overlap != engine.OverlapSkip || got.Params.Job.Type != engine.TypeNoop ||
		got.Params.Job.Load != nil || got.Params.Job.Timeout != nil || got.Params.Job.MaxAttempts != 1 || got.Params.Job.Memory != nil {
		t.Errorf("defaults = %+v", got.Params)
	}
}

func TestSchedulesAddRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"x", "--type", "noop"},                           // no --cron
		{"--cron", "@hourly", "--type", "noop"},           // no name
		{"a", "b", "--cron", "@hourly", "--type", "noop"}, // two names
		{"x", "--cron", "@hourly"},                        // no job
		{"x", "--cron", "61 * * * *", "--type", "noop"},
		{"x", "--cron", "@hourly", "--tz", "Mars/Base", "--type", "noop"},
		{"x", "--cron", "@hourly", "--overlap", "maybe", "--type", "noop"},
		{"x", "--cron", "@hourly", "--type", "exec"},
		{"x", "--cron", "@hourly", "--type", "noop", "--max-attempts", "0"},
		{"x", "--cron", "@hourly", "--type", "noop", "--payload", "{"},
		{"x", "--cron", "@hourly", "--type", "noop", "--rollback", `undo "`},
		{"x", "--cron", "@hourly", "--type", "noop", "--rollback-type", "undo"},
		{"x", "--cron", "@every -1s", "--type", "noop"},
		{"x", "--cron", "@every 0s", "--type", "noop"},
		{"x", "--cron", "@every 1ns", "--type", "noop"},
		{"x", "--cron", "@every 500ms", "--type", "noop"},
		{"x", "--cron", "@hourly", "--type", "noop", "--run-timeout", "0s"},
		{"x", "--cron", "@hourly", "--type", "noop", "--run-timeout", "1h", "--timeout", "1h"},
		{"x", "--cron", "@hourly", "--type", "noop", "--memory", "a lot"},
	} {
		f := &Factory{IO: &IOStreams{}}
		cmd := NewCmdSchedulesAdd(f, func(context.Context, *SchedulesAddOptions) error {
			t.Errorf("%v ran", args)
			return nil
		})
		var usage *UsageError
		if err := execParse(cmd, args...); !errors.As(err, &usage) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v = %v, want a one-line usage error", args, err)
		}
	}
}

func TestSchedulesCommands(t *testing.T) {
	e := newTestEnv(t)
	if err := e.run(t, "schedules", "add", "tick", "--cron", "@every 1m", "--type", "noop"); err != nil {
		t.Fatal(err)
	}
	if got := e.stdout.String(); got != "tick\n" {
		t.Errorf("add printed %q, want the name", got)
	}
	if err := e.run(t, "schedules", "add", "nightly", "--cron", "30 2 * * *", "--tz", "Europe/Berlin", "--", "make", "report"); err != nil {
		t.Fatal(err)
	}
	err := e.run(t, "schedules", "add", "tick", "--cron", "@hourly", "--type", "noop")
	if !errors.Is(err, engine.ErrConflict) || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("adding a name taken = %v", err)
	}

	if err := e.run(t, "schedules"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(e.stdout.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "nightly\t30 2 * * *\tEurope/Berlin\t") ||
		!strings.HasPrefix(lines[1], "tick\t@every 1m\tUTC\t") || !strings.HasSuffix(lines[1], "\t\t") {
		t.Errorf("list printed\n%s", e.stdout.String())
	}

	if err := e.run(t, "schedules", "pause", "tick"); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "schedules", "list", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var all []map[string]any
	if err := json.Unmarshal(e.stdout.Bytes(), &all); err != nil || len(all) != 2 {
		t.Fatalf("list -o json: %v\n%s", err, e.stdout.String())
	}
	for _, field := range []string{"name", "cron", "tz", "overlap", "paused", "job", "next_fire_at", "last_job_id", "created_at"} {
		if _, ok := all[1][field]; !ok {
			t.Errorf("list -o json lacks %s", field)
		}
	}
	if all[1]["paused"] != true || all[0]["paused"] != false {
		t.Errorf("paused flags = %v, %v", all[0]["paused"], all[1]["paused"])
	}
	job := all[0]["job"].(map[string]any)
	if job["type"] != "exec" || len(job["args"].([]any)) != 2 {
		t.Errorf("nightly's job = %v", job)
	}

	if err := e.run(t, "schedules", "show", "tick", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var one engine.Schedule
	if err := json.Unmarshal(e.stdout.Bytes(), &one); err != nil || one.Name != "tick" || !one.Paused {
		t.Errorf("show -o json = %+v, %v", one, err)
	}
	if err := e.run(t, "schedules", "resume", "tick"); err != nil {
		t.Fatal(err)
	}
	if sc, _ := e.store.ScheduleGet(context.Background(), "tick"); sc.Paused {
		t.Error("still paused after resume")
	}

	for _, args := range [][]string{{"show", "nope"}, {"pause", "nope"}, {"resume", "nope"}, {"rm", "nope"}} {
		if err := e.run(t, append([]string{"schedules"}, args...)...); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("%v = %v, want not found", args, err)
		}
	}
	if err := e.run(t, "schedules", "rm", "tick", "nightly"); err != nil {
		t.Fatal(err)
	}
	if all, _ := e.store.ScheduleList(context.Background()); len(all) != 0 {
		t.Errorf("%d schedules left after rm", len(all))
	}
}
