package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/jobctl/jobctl/engine"
)

// appendLog stores output of the job's attempt as its node would.
func appendLog(t *testing.T, s engine.Store, j *engine.Job, text string) {
	t.Helper()
	if err := s.JobLogAppend(context.Background(), engine.JobLogAppendParams{JobID: j.ID, Attempt: max(1, j.Attempt), Data: []byte(text)}); err != nil {
		t.Fatal(err)
	}
}

// tick sends the current tick and carries out what it starts.
func (f *fixture) tick() {
	f.t.Helper()
	f.run(f.send(tickMsg{seq: f.m.tickSeq}))
}

func TestEnterOpensTheDetailAndFollowsTheLog(t *testing.T) {
	f := setup(t)
	appendLog(t, f.store, f.running, "starting\nstep 1 done\n")
	f.selectJob(f.running.ID)
	f.run(f.press("enter"))
	if f.m.state != stateDetail {
		t.Fatalf("enter on a job: state %v", f.m.state)
	}
	s := f.screen()
	for _, want := range []string{fmt.Sprintf("Job %d · sleep · RUNNING on alpha", f.running.ID), "run       attempt 1 of 1",
		"explain", "Log · last lines, following", "starting", "step 1 done", "esc back"} {
		if !strings.Contains(s, want) {
			t.Errorf("detail lacks %q:\n%s", want, s)
		}
	}
	// New output shows at the next tick, read by a command, not in Update.
	appendLog(t, f.store, f.running, "step 2 done\n")
	if strings.Contains(f.screen(), "step 2 done") {
		t.Fatal("new output showed before any read")
	}
	f.tick()
	if !strings.Contains(f.screen(), "step 2 done") {
		t.Errorf("the detail did not follow the log:\n%s", f.screen())
	}

	// Cancelling from the detail acts on its job, and the detail then
	// says who did it and why.
	f.press("c")
	for _, r := range "wrong input" {
		f.press(string(r))
	}
	if f.m.state != stateConfirm || !strings.Contains(f.screen(), "step 2 done") {
		t.Fatalf("c in the detail: state %v, the detail should stay under the question:\n%s", f.m.state, f.screen())
	}
	f.run(f.press("enter"))
	if f.m.state != stateDetail {
		t.Fatalf("after the cancel: state %v, want the detail again", f.m.state)
	}
	if j := f.job(f.running.ID); j.Status != engine.StatusCancelling {
		t.Fatalf("job is %s, want CANCELLING", j.Status)
	}
	if !strings.Contains(f.screen(), "message   cancelled by alice@host1: wrong input") {
		t.Errorf("the detail does not say who cancelled it:\n%s", f.screen())
	}

	f.press("esc")
	if f.m.state != stateBrowse || f.m.open != nil {
		t.Errorf("esc: state %v, open %v", f.m.state, f.m.open)
	}
	// A read that comes back after the view closed changes nothing.
	f.send(inspectMsg{id: f.running.ID, in: &Inspection{Job: f.running}})
	if f.m.open != nil {
		t.Error("a late read opened the view again")
	}
}

func TestEnterOnANodeStillScopes(t *testing.T) {
	f := setup(t)
	f.run(f.press("enter"))
	if f.m.state != stateBrowse || f.m.query.Node != "alpha" {
		t.Errorf("enter on a node: state %v, scope %q", f.m.state, f.m.query.Node)
	}
}

func TestLogsKeyFollowsAndScrollsBack(t *testing.T) {
	f := setup(t)
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	appendLog(t, f.store, f.running, b.String())
	f.selectJob(f.running.ID)
	f.run(f.press("l"))
	if f.m.state != stateLogs {
		t.Fatalf("l: state %v", f.m.state)
	}
	s := f.screen()
	if !strings.Contains(s, "· following") || !strings.Contains(s, "line 40") || strings.Contains(s, "line 1\n") {
		t.Errorf("log view does not show the last lines, following:\n%s", s)
	}
	f.press("up")
	f.press("pgup")
	s = f.screen()
	if !strings.Contains(s, "lines below") || strings.Contains(s, "line 40") {
		t.Errorf("scrolled back, the view still shows the end:\n%s", s)
	}
	back := f.m.logs.back
	appendLog(t, f.store, f.running, "line 41\nline 42\n")
	f.tick()
	if f.m.logs.back != back+2 || strings.Contains(f.screen(), "line 42") {
		t.Errorf("new output moved a view scrolled back: back %d, was %d:\n%s", f.m.logs.back, back, f.screen())
	}
	f.press("end")
	if s := f.screen(); !strings.Contains(s, "line 42") || !strings.Contains(s, "· following") {
		t.Errorf("end did not follow again:\n%s", s)
	}
	f.press("esc")
	if f.m.state != stateBrowse {
		t.Errorf("esc from the log: state %v", f.m.state)
	}

	// From the detail, l opens the whole log and esc goes back to it.
	f.run(f.press("enter"))
	f.press("l")
	f.press("esc")
	if f.m.state != stateDetail {
		t.Errorf("esc from a log opened in the detail: state %v, want the detail", f.m.state)
	}
}

func TestStatusLineClears(t *testing.T) {
	f := setup(t)
	f.selectJob(f.queued.ID)
	f.press("c")
	f.press("esc")
	if !strings.Contains(f.screen(), "left as it was") {
		t.Fatalf("esc did not say so:\n%s", f.screen())
	}
	f.clock.Advance(time.Second)
	f.tick()
	if !strings.Contains(f.screen(), "left as it was") {
		t.Errorf("cleared after a second:\n%s", f.screen())
	}
	f.clock.Advance(statusTTL)
	f.tick()
	if strings.Contains(f.screen(), "left as it was") {
		t.Errorf("still shown %s later:\n%s", statusTTL+time.Second, f.screen())
	}
	// An action's error clears too; a refresh's stays until the
	// database answers.
	f.press("tab")
	f.press("/")
	for _, r := range "noop" {
		f.press(string(r))
	}
	f.run(f.press("enter"))
	f.press("c")
	if !strings.Contains(f.screen(), "error: no job selected") {
		t.Fatalf("c without a job:\n%s", f.screen())
	}
	f.clock.Advance(statusTTL)
	f.tick()
	if strings.Contains(f.screen(), "error:") {
		t.Errorf("the action's error was not cleared:\n%s", f.screen())
	}
	f.send(snapshotMsg{err: context.DeadlineExceeded})
	f.clock.Advance(2 * statusTTL)
	f.send(tickMsg{seq: f.m.tickSeq - 1}) // stale: no refresh
	f.m.expireStatus()
	if !strings.Contains(f.screen(), "error: refresh: ") {
		t.Errorf("the refresh's error was cleared while the database did not answer:\n%s", f.screen())
	}
}

func TestSortKeys(t *testing.T) {
	f := setup(t)
	heavy := insert(t, f.store)
	if _, err := f.store.JobUpdate(context.Background(), engine.JobUpdate{ID: heavy.ID, From: heavy.Status, Version: heavy.Version,
		To: engine.StatusPaused, Node: engine.Ptr("")}); err != nil {
		t.Fatal(err)
	}
	f.tick()
	f.selectJob(f.finished.ID)
	ids := func() []int64 {
		var out []int64
		for _, j := range f.m.jobs.jobs {
			out = append(out, j.ID)
		}
		return out
	}
	page := ids()
	f.press("s") // by id, ascending
	if got, want := ids(), []int64{f.finished.ID, f.queued.ID, f.running.ID, heavy.ID}; !equalIDs(got, want) {
		t.Errorf("s: %v, want %v", got, want)
	}
	if !strings.Contains(f.screen(), "ID▲") || !strings.Contains(f.screen(), "sorted by id ▲") {
		t.Errorf("the sort is not shown:\n%s", f.screen())
	}
	if j := f.m.jobs.Selected(); j.ID != f.finished.ID {
		t.Errorf("the cursor left its job: on %d", j.ID)
	}
	f.press("S")
	if got, want := ids(), []int64{heavy.ID, f.running.ID, f.queued.ID, f.finished.ID}; !equalIDs(got, want) {
		t.Errorf("S: %v, want %v", got, want)
	}
	f.press("s") // by status, ascending: the lifecycle's order
	if got := f.m.jobs.jobs; got[0].Status != engine.StatusQueued || got[len(got)-1].Status != engine.StatusFinished {
		t.Errorf("by status: %v", ids())
	}
	// The sort holds across refreshes, and comes round to the page's own
	// order.
	f.tick()
	if !strings.Contains(f.screen(), "STATUS▲") {
		t.Errorf("the sort was lost at a refresh:\n%s", f.screen())
	}
	for range sortColumns - 2 {
		f.press("s")
	}
	if got := ids(); !equalIDs(got, page) || !strings.Contains(f.screen(), "on nodes first") {
		t.Errorf("after every column: %v, want the page's order %v:\n%s", got, page, f.screen())
	}
}

func TestJobsPaneShowsCommandExitAndProgressOfRunningJobsOnly(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	j, err := f.store.JobInsert(ctx, engine.JobInsertParams{Type: engine.TypeExec, Args: []string{"echo", "a b"}, Load: 1,
		Status: engine.StatusQueued, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.JobProgressSet(ctx, engine.JobProgressParams{ID: f.running.ID, Attempt: f.running.Attempt, Node: "alpha", Progress: 40}); err != nil {
		t.Fatal(err)
	}
	failed := move(t, f.store, insert(t, f.store), "beta", engine.StatusRunning)
	if _, err := f.store.JobUpdate(ctx, engine.JobUpdate{ID: failed.ID, From: failed.Status, Version: failed.Version,
		To: engine.StatusFailed, MarkFinished: true, ExitCode: engine.Ptr(7)}); err != nil {
		t.Fatal(err)
	}
	f.tick()
	rowOf := func(id int64) string {
		for line := range strings.SplitSeq(f.screen(), "\n") {
			if strings.HasPrefix(strings.TrimLeft(line, " ▸›"), itoa(id)+" ") {
				return line
			}
		}
		t.Fatalf("no row of job %d:\n%s", id, f.screen())
		return ""
	}
	if r := rowOf(j.ID); !strings.Contains(r, `echo "a b"`) || strings.Contains(r, "%") || strings.Contains(r, "░") {
		t.Errorf("a queued exec job's row: %q; want its command and no progress", r)
	}
	if r := rowOf(f.running.ID); !strings.Contains(r, "40%") || !strings.Contains(r, "█") {
		t.Errorf("a running job's row: %q; want its progress", r)
	}
	if r := rowOf(failed.ID); !strings.Contains(r, " 7 ") || strings.Contains(r, "%") {
		t.Errorf("a failed job's row: %q; want its exit code and no progress", r)
	}
	// The progress column stays narrow however wide the screen.
	f.send(windowSize(200, 40))
	if r := rowOf(f.running.ID); strings.Count(r, "█")+strings.Count(r, "░") != jobBarW {
		t.Errorf("at 200 columns the bar is not %d cells: %q", jobBarW, r)
	}
}

func TestFooterFitsEightyColumns(t *testing.T) {
	h := NewHelp(NewStyles(false), DefaultKeyMap())
	h.SetSize(80, 20)
	line := h.ShortView()
	if strings.Contains(line, "…") || ansi.StringWidth(line) != 80 {
		t.Errorf("the footer at 80 columns is cut or not 80 wide: %q", line)
	}
	// Every key is on the help screen.
	full := strings.Join([]string{h.View()}, "")
	for _, b := range [][]key.Binding{DefaultKeyMap().FullHelp()[0], DefaultKeyMap().FullHelp()[1], DefaultKeyMap().FullHelp()[2]} {
		for _, k := range b {
			if !strings.Contains(full, k.Help().Desc) {
				t.Errorf("the help screen lacks %q", k.Help().Desc)
			}
		}
	}
}

func TestLogBuffer(t *testing.T) {
	b := newLogBuffer()
	b.max = 4
	b.add([]engine.LogChunk{
		{Seq: 1, Attempt: 1, Data: []byte("a\nb")},
		{Seq: 2, Attempt: 1, Data: []byte("c\n\x1b[31mred\x1b[0m\tx\x07\n")},
		{Seq: 2, Attempt: 1, Data: []byte("again\n")}, // read before: skipped
		{Seq: 3, Attempt: 2, Data: []byte("d")},
	})
	// The unfinished last line shows too.
	if got, want := strings.Join(b.Lines(), "|"), "a|bc|red    x·|── attempt 2 ──|d"; got != want {
		t.Errorf("lines %q, want %q", got, want)
	}
	b.add([]engine.LogChunk{{Seq: 4, Attempt: 2, Data: []byte("e\nf\n")}})
	if got, want := strings.Join(b.Lines(), "|"), "red    x·|── attempt 2 ──|de|f"; got != want {
		t.Errorf("lines after more than it keeps: %q, want %q", got, want)
	}
	if b.afterSeq != 4 {
		t.Errorf("afterSeq %d, want 4", b.afterSeq)
	}
}

func TestSourceInspectReadsTheLogsTail(t *testing.T) {
	f := setup(t)
	src := &Source{Store: f.store, Clock: engine.SystemClock{}}
	line := strings.Repeat("x", 1023) + "\n"
	for range 100 { // 100 KiB, more than the tail
		appendLog(t, f.store, f.running, line)
	}
	appendLog(t, f.store, f.running, "the end\n")
	in, err := src.Inspect(context.Background(), InspectQuery{ID: f.running.ID, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, c := range in.Log {
		size += len(c.Data)
	}
	if size > logTailBytes+len(line) || size < logTailBytes-len(line) || string(in.Log[len(in.Log)-1].Data) != "the end\n" {
		t.Errorf("the tail read %d bytes in %d chunks, ending %q; want about %d, to the end", size, len(in.Log),
			in.Log[len(in.Log)-1].Data, logTailBytes)
	}
	if in.Explanation == nil || in.Job.ID != f.running.ID {
		t.Errorf("inspection %+v; want the job and its explanation", in)
	}
	// After the last chunk read, only what came since.
	appendLog(t, f.store, f.running, "more\n")
	next, err := src.Inspect(context.Background(), InspectQuery{ID: f.running.ID, AfterSeq: in.Log[len(in.Log)-1].Seq})
	if err != nil || len(next.Log) != 1 || string(next.Log[0].Data) != "more\n" || next.Explanation != nil {
		t.Errorf("the next read: %+v, %v", next, err)
	}
	if _, err := src.Inspect(context.Background(), InspectQuery{ID: 424242}); err == nil {
		t.Error("an unknown job read without an error")
	}
}

func windowSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
