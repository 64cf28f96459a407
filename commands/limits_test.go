package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func TestLimitsSetParsesItsFlags(t *testing.T) {
	ios, _, _ := TestIO("")
	f := NewFactory(ios)
	var got *LimitsSetOptions
	cmd := NewCmdLimitsSet(f, func(_ context.Context, o *LimitsSetOptions) error { got = o; return nil })
	if err := execParse(cmd, "render", "--max-running", "2", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if got.Type != "render" || got.MaxRunning != 2 || got.Output.Format != formatJSON {
		t.Errorf("options %+v", got)
	}
	for _, args := range [][]string{
		{}, {"a", "b", "--max-running", "1"}, {"render"},
		{"render", "--max-running", "0"}, {"render", "--max-running", "-1"}, {"render", "--max-running", "x"},
		{"render", "--max-running", fmt.Sprint(engine.MaxTypeLimit + 1)},
		{"", "--max-running", "1"}, {"a\tb", "--max-running", "1"}, {strings.Repeat("x", 256), "--max-running", "1"},
		{"render", "--max-running", "1", "-o", "yaml"},
	} {
		ran := false
		cmd := NewCmdLimitsSet(f, func(context.Context, *LimitsSetOptions) error { ran = true; return nil })
		if err := execParse(cmd, args...); !errors.As(err, new(*UsageError)) || ran {
			t.Errorf("limits set %q: %v (ran %v); want a UsageError", args, err, ran)
		}
	}
	for _, args := range [][]string{{}} {
		cmd := NewCmdLimitsRemove(f, func(context.Context, *LimitsRemoveOptions) error { return nil })
		if err := execParse(cmd, args...); !errors.As(err, new(*UsageError)) {
			t.Errorf("limits rm %q: %v; want a UsageError", args, err)
		}
	}
	for _, args := range [][]string{{"x"}, {"-o", "yaml"}} {
		cmd := NewCmdLimitsList(f, func(context.Context, *LimitsListOptions) error { return nil })
		if err := execParse(cmd, args...); !errors.As(err, new(*UsageError)) {
			t.Errorf("limits ls %q: %v; want a UsageError", args, err)
		}
	}
}

func TestLimitsSetListRemove(t *testing.T) {
	e := newTestEnv(t)
	run := func(args ...string) string {
		t.Helper()
		if err := e.run(t, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return e.stdout.String()
	}
	if got := run("limits", "set", "render", "--max-running", "2"); got != "render\t2\n" {
		t.Errorf("limits set printed %q", got)
	}
	run("limits", "set", "encode", "--max-running", "5")
	for range 3 {
		e.move(t, e.insert(t, engine.JobInsertParams{Type: "render"}), engine.StatusRunning)
	}
	e.insert(t, engine.JobInsertParams{Type: "render"})
	e.move(t, e.insert(t, engine.JobInsertParams{Type: "encode"}), engine.StatusRunning)

	for _, args := range [][]string{{"limits"}, {"limits", "ls"}, {"limits", "list"}} {
		if got, want := run(args...), "encode\t5\t1\nrender\t2\t3\n"; got != want {
			t.Errorf("%v printed %q, want %q", args, got, want)
		}
	}
	if got := run("limits", "ls", "-q"); got != "encode\nrender\n" {
		t.Errorf("limits ls -q printed %q", got)
	}
	var limits []map[string]any
	if err := json.Unmarshal([]byte(run("limits", "-o", "json")), &limits); err != nil || len(limits) != 2 {
		t.Fatalf("limits -o json: %v\n%s", err, e.stdout.String())
	}
	if l := limits[1]; l["type"] != "render" || l["max_running"] != 2.0 || l["running"] != 3.0 || l["updated_at"] == nil {
		t.Errorf("limits -o json [1] = %v, want render, 2, 3 and updated_at", l)
	}

	// Lowering a limit below what runs says that they go on.
	if got := run("limits", "set", "render", "--max-running", "1"); got != "render\t1\n" {
		t.Errorf("limits set printed %q", got)
	}
	if got, want := e.stderr.String(), "3 jobs of type render run now; they go on, and no more start until fewer than 1 run\n"; got != want {
		t.Errorf("limits set below the running jobs: stderr %q, want %q", got, want)
	}
	var l map[string]any
	if err := json.Unmarshal([]byte(run("limits", "set", "render", "--max-running", "4", "-o", "json")), &l); err != nil ||
		l["type"] != "render" || l["max_running"] != 4.0 || l["running"] != 3.0 {
		t.Errorf("limits set -o json: %v %v", l, err)
	}

	if got := run("limits", "rm", "render"); got != "render\n" {
		t.Errorf("limits rm printed %q", got)
	}
	err := e.run(t, "limits", "rm", "render", "encode")
	if !errors.Is(err, engine.ErrNotFound) || !strings.Contains(err.Error(), "limit of type render not found") {
		t.Errorf("removing a limit twice: %v; want a not-found error naming it", err)
	}
	if got := e.stdout.String(); got != "encode\n" {
		t.Errorf("limits rm with one unknown type printed %q; want the other removed", got)
	}
	if got := run("limits", "-o", "json"); strings.TrimSpace(got) != "[]" {
		t.Errorf("limits -o json without limits printed %q, want []", got)
	}
	if got := run("limits"); got != "" {
		t.Errorf("limits piped without limits printed %q", got)
	}
}

func TestLimitsOnATerminal(t *testing.T) {
	e := newTestEnv(t)
	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	run := func(args ...string) string {
		t.Helper()
		if err := e.run(t, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return e.stdout.String()
	}
	if got := run("limits"); got != "" || !strings.Contains(e.stderr.String(), "no type limits; set one with 'jobctl limits set TYPE --max-running N'") {
		t.Errorf("limits without any: stdout %q, stderr %q", got, e.stderr.String())
	}
	if got, want := run("limits", "set", "render", "--max-running", "2"), "type render: at most 2 running at once (no limit before)\n"; got != want {
		t.Errorf("limits set printed %q, want %q", got, want)
	}
	if got, want := run("limits", "set", "render", "--max-running", "3"), "type render: at most 3 running at once (was 2)\n"; got != want {
		t.Errorf("limits set again printed %q, want %q", got, want)
	}
	got := run("limits", "ls")
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "TYPE MAX RUNNING RUNNING" ||
		strings.Join(strings.Fields(lines[1]), " ") != "render 3 0" {
		t.Errorf("limits ls printed\n%s", got)
	}
	if got, want := run("limits", "rm", "render"), "removed the limit of type render\n"; got != want {
		t.Errorf("limits rm printed %q, want %q", got, want)
	}
}

func TestExplainPipedTypeLimit(t *testing.T) {
	e := newTestEnv(t)
	e.node(t, "a", 4, nil)
	e.move(t, e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep}), engine.StatusRunning)
	j := e.insert(t, engine.JobInsertParams{Type: engine.TypeSleep})
	if err := e.store.TypeLimitSet(context.Background(), engine.TypeLimitSetParams{Type: engine.TypeSleep, MaxRunning: 1}); err != nil {
		t.Fatal(err)
	}
	if err := e.run(t, "explain", fmt.Sprint(j.ID)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`job	%d
type	sleep
load	1
priority	50
status	QUEUED
dispatchable	yes
type limit	1 of at most 1 running, held back (jobctl limits)
selector	loadfactor
node	a	ONLINE	1	0/4	0/200	has room: load 0 + 1 within max 4
conclusion	held back: type sleep is at its limit of 1 running (jobctl limits); once it is under it, node a would be offered it first
`, j.ID)
	if got := e.stdout.String(); got != want {
		t.Errorf("explain:\n%s\nwant:\n%s", got, want)
	}
	if err := e.run(t, "explain", fmt.Sprint(j.ID), "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got struct {
		TypeLimit *engine.TypeLimit `json:"type_limit"`
		AtLimit   bool              `json:"at_limit"`
	}
	if err := json.Unmarshal(e.stdout.Bytes(), &got); err != nil || got.TypeLimit == nil || !got.AtLimit ||
		got.TypeLimit.MaxRunning != 1 || got.TypeLimit.Running != 1 {
		t.Errorf("explain -o json: type_limit %+v, at_limit %v, %v", got.TypeLimit, got.AtLimit, err)
	}
}
