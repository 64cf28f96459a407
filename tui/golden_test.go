package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
)

// goldenNow is the instant of the golden snapshot.
var goldenNow = time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)

// goldenSnapshot is a cluster with a node in every state the dashboard
// tells apart, and jobs in every tier.
func goldenSnapshot(_ context.Context, q Query) (*Snapshot, error) {
	ago := func(d time.Duration) time.Time { return goldenNow.Add(-d) }
	const gib = 1 << 30
	nodes := []*engine.Node{
		{Name: "alpha", State: engine.NodeOnline, MaxLoad: 8, Load: 6.5, Running: 5, MaxJobs: 200, Weight: 100,
			Warmup: engine.Duration(10 * time.Minute), StartedAt: ago(time.Hour), LastSeen: ago(time.Second),
			LoadAvg: 3.2, MaxLoadAvg: 16, MemAvailable: 12 * gib, Cores: 8, Dispatcher: true,
			RunningUsage: []engine.LiveUsage{{JobID: 1041, Attempt: 2, CPUSeconds: 1800, Cores: 3.2, Memory: 812 << 20}}},
		{Name: "beta", State: engine.NodeMaintenance, Maintenance: true, MaxLoad: 4, Load: 1, Running: 1, MaxJobs: 200,
			Weight: 100, StartedAt: ago(2 * time.Hour), LastSeen: ago(2 * time.Second), LoadAvg: 0.5, MemAvailable: gib / 2, Cores: 4},
		{Name: "gamma", State: engine.NodeOnline, MaxLoad: 4, Load: 0, MaxJobs: 200, Weight: 100,
			Warmup: engine.Duration(10 * time.Minute), StartedAt: ago(5 * time.Minute), LastSeen: ago(time.Second),
			LoadAvg: 9.5, MaxLoadAvg: 8, MemAvailable: 3 * gib, Cores: 4},
		{Name: "delta", State: engine.NodeOnline, MaxLoad: 2, Load: 2, Running: 2, MaxJobs: 2, Weight: 50,
			StartedAt: ago(time.Hour), LastSeen: ago(30 * time.Second), LoadAvg: 1, MemAvailable: 8 * gib, Cores: 2},
		{Name: "epsilon", State: engine.NodeOffline, MaxLoad: 4, MaxJobs: 200, Weight: 100, StartedAt: ago(3 * time.Hour), LastSeen: ago(time.Hour)},
	}
	jobs := goldenJobs()
	var shown []*engine.Job
	matching := 99000
	if q.Node != "" {
		matching = -1 // as a Source tells it
	}
	for _, j := range jobs {
		if q.Node == "" || j.Node == q.Node {
			shown = append(shown, j)
		}
	}
	return &Snapshot{
		At:       goldenNow,
		CountsAt: goldenNow,
		Database: "postgres://jobctl@db.example:5432/jobs",
		Lease:    engine.Lease{Owner: "alpha", ExpiresAt: goldenNow.Add(4500 * time.Millisecond), Now: goldenNow},
		Nodes:    nodes,
		Counts: map[engine.Status]int{engine.StatusQueued: 812, engine.StatusRestart: 3, engine.StatusRunning: 7,
			engine.StatusPaused: 1, engine.StatusCancelling: 1, engine.StatusFinished: 98120, engine.StatusFailed: 56},
		Jobs:     shown,
		Query:    q,
		Matching: matching,
		LoadsOff: []engine.TypeUsage{{Type: "encode", DeclaredLoad: 2, Runs: 40, CoresP50: 2.9, CoresP95: 3.2,
			Verdict: engine.LoadUsesMore, Note: "encode: declared load 2, uses 3.2 cores p95 over 40 runs"}},
	}, nil
}

// goldenJobs are the jobs of the golden snapshot, one in every tier.
func goldenJobs() []*engine.Job {
	ago := func(d time.Duration) time.Time { return goldenNow.Add(-d) }
	at := func(d time.Duration) *time.Time { t := ago(d); return &t }
	code := func(c int) *int { return &c }
	jobs := []*engine.Job{
		{ID: 1041, Type: "encode", Status: engine.StatusRunning, Node: "alpha", Load: 2, Progress: 75, ProgressMessage: "pass 2 of 2",
			Args: []string{"ffmpeg", "-i", "in file.mp4", "out.webm"}, Attempt: 2, MaxAttempts: 3, Key: "media",
			CreatedAt: ago(12 * time.Minute), StartedAt: at(10 * time.Minute), Creator: "alice@host1"},
		{ID: 1040, Type: "encode", Status: engine.StatusPaused, Node: "alpha", Load: 2, Progress: 30, Operation: "thumbnails",
			Attempt: 1, MaxAttempts: 1, CreatedAt: ago(14 * time.Minute), StartedAt: at(13 * time.Minute)},
		{ID: 1038, Type: "sleep", Status: engine.StatusCancelling, Node: "beta", Load: 1, Progress: 5, Attempt: 1, MaxAttempts: 1,
			Message: engine.MessageCancelled, CreatedAt: ago(time.Hour), StartedAt: at(59 * time.Minute), Creator: "bob@host2"},
		{ID: 1050, Type: "exec", Status: engine.StatusQueued, Load: 1, Args: []string{"make", "test"}, MaxAttempts: 1,
			CreatedAt: ago(20 * time.Second)},
		{ID: 1049, Type: "encode", Status: engine.StatusRestart, Load: 2, Attempt: 1, MaxAttempts: 3, CreatedAt: ago(3 * time.Minute)},
		{ID: 1037, Type: "noop", Status: engine.StatusFinished, Node: "gamma", Load: 1, Progress: 100, ExitCode: code(0),
			Attempt: 1, MaxAttempts: 1, CreatedAt: ago(2 * time.Hour), StartedAt: at(2 * time.Hour), FinishedAt: at(2 * time.Hour)},
		{ID: 1036, Type: "exec", Status: engine.StatusFailed, Node: "delta", Load: 1, Progress: 40, ExitCode: code(3),
			Args: []string{"./deploy.sh", "v2"}, Attempt: 1, MaxAttempts: 1, Message: "exit status 3",
			CreatedAt: ago(3 * time.Hour), StartedAt: at(3 * time.Hour), FinishedAt: at(170 * time.Minute)},
	}
	for _, j := range jobs {
		j.Priority = engine.DefaultPriority
	}
	jobs[3].Priority = 90 // an urgent one waits in the queue
	return jobs
}

// goldenInspect reads a job of the golden snapshot: bob cancelled 1038,
// and 1041 has a log over two attempts, with a terminal escape and a tab
// to clean.
func goldenInspect(_ context.Context, q InspectQuery) (*Inspection, error) {
	for _, j := range goldenJobs() {
		if j.ID != q.ID {
			continue
		}
		in := &Inspection{At: goldenNow, Job: j}
		if j.ID == 1038 {
			in.EndedBy = &engine.Event{ID: 7, At: goldenNow.Add(-time.Minute), Who: "bob@host2", Verb: "cancel", JobID: &j.ID,
				Type: j.Type, Detail: "RUNNING → CANCELLING", Reason: "ran into the backup window"}
		}
		if q.Explain {
			in.Explanation = &dispatch.Explanation{Job: j, Now: goldenNow, Conclusion: "running on " + j.Node}
		}
		var log []engine.LogChunk
		if j.ID == 1041 {
			log = []engine.LogChunk{
				{Seq: 1, JobID: j.ID, Attempt: 1, Data: []byte("probing in file.mp4\nerror: disk full\n")},
				{Seq: 2, JobID: j.ID, Attempt: 2, Data: []byte("probing in file.mp4\n\x1b[32mpass 1\x1b[0m\tdone\n")},
				{Seq: 3, JobID: j.ID, Attempt: 2, Data: []byte("pass 2: frame 1200 of 1600\npass 2: frame 14")},
			}
		}
		for _, c := range log {
			if c.Seq > q.AfterSeq {
				in.Log = append(in.Log, c)
			}
		}
		return in, nil
	}
	return nil, &engine.NotFoundError{What: "job", ID: fmt.Sprint(q.ID)}
}

// goldenActions explain every job the same way and refuse the rest: the
// golden screens show what the dashboard draws, not what the engine does
// (the model tests cover that on a real store).
type goldenActions struct{}

func (goldenActions) JobVerb(context.Context, int64, engine.Verb, string) (*engine.Job, error) {
	return nil, errors.New("not in golden tests")
}
func (goldenActions) NodeMaintenance(context.Context, string, bool, string) error {
	return errors.New("not in golden tests")
}
func (goldenActions) NodeDrain(context.Context, string, string) (int, error) {
	return 0, errors.New("not in golden tests")
}
func (goldenActions) Explain(_ context.Context, id int64) (*dispatch.Explanation, error) {
	return &dispatch.Explanation{
		Job:          &engine.Job{ID: id, Type: "exec", Load: 1, Status: engine.StatusQueued},
		Now:          goldenNow,
		Dispatchable: true,
		Selector:     "loadfactor",
		Nodes: []dispatch.NodeVerdict{
			{Node: "alpha", State: engine.NodeOnline, Eligible: true, Rank: 1, Reason: "fits: load 6.5 + 1 of 8", Load: 6.5, MaxLoad: 8, Running: 5, MaxJobs: 200},
			{Node: "beta", State: engine.NodeMaintenance, Reason: "in maintenance", Load: 1, MaxLoad: 4, Running: 1, MaxJobs: 200},
			{Node: "gamma", State: engine.NodeOnline, Reason: "overloaded: load average 9.5 above 8", MaxLoad: 4, MaxJobs: 200},
		},
		Conclusion: "dispatchable: the next round offers it to alpha",
	}, nil
}

// probe wraps the dashboard so a test can ask the running program what
// its screen shows: a probeMsg is answered on screens after every message
// sent before it, so waiting on it waits for the keys to take effect.
type probe struct {
	Model
	screens chan string
}

type probeMsg struct{}

func (p probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(probeMsg); ok {
		p.screens <- p.render()
		return p, nil
	}
	m, cmd := p.Model.Update(msg)
	p.Model = m.(Model)
	return p, cmd
}

// waitScreen asks the program for its screen until it shows want.
func waitScreen(t *testing.T, tm *teatest.TestModel, screens chan string, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		tm.Send(probeMsg{})
		select {
		case last = <-screens:
			if strings.Contains(last, want) {
				return
			}
		case <-time.After(time.Until(deadline)):
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the screen never showed %q; last:\n%s", want, last)
}

// TestGolden drives the whole program at 80x24, and at 120x40, with
// colour off and compares the final screen with
// testdata/TestGolden/*.golden; run with -update to write them anew.
func TestGolden(t *testing.T) {
	const big = 1 // the index of the larger terminal
	sizes := [][2]int{{80, 24}, {120, 40}}
	cases := []struct {
		name  string
		term  int // index in sizes
		keys  []string
		size  *tea.WindowSizeMsg
		until string // what the screen shows once the keys took effect
	}{
		{name: "browse", until: "Nodes (5)"},
		{name: "jobs_pane", keys: []string{"tab", "down", "down"}, until: "▸ 1038"},
		{name: "node_scope", keys: []string{"enter"}, until: "Jobs on node alpha"},
		{name: "confirm_cancel", keys: []string{"tab", "c", "o", "l", "d"}, until: "reason (optional): old"},
		{name: "confirm_maintenance", keys: []string{"down", "m"}, until: "enter: go ahead"},
		{name: "filter", keys: []string{"/", "r", "u", "n"}, until: "/run"},
		{name: "help", keys: []string{"?"}, until: "Keys"},
		{name: "explain", keys: []string{"tab", "down", "down", "down", "e"}, until: "Explain job 1050"},
		{name: "sorted_by_load", keys: []string{"s", "s", "s", "s", "s", "S"}, until: "LOAD▼"},
		{name: "detail_cancelled", keys: []string{"tab", "down", "down", "enter"}, until: "cancelled by bob@host2"},
		{name: "logs", keys: []string{"tab", "l"}, until: "pass 2: frame 14"},
		{name: "resize_100x30", size: &tea.WindowSizeMsg{Width: 100, Height: 30}, until: "Nodes (5)"},
		{name: "browse_120x40", term: big, until: "Nodes (5)"},
		{name: "detail_120x40", term: big, keys: []string{"tab", "enter"}, until: "pass 2: frame 14"},
		{name: "logs_120x40", term: big, keys: []string{"tab", "l"}, until: "pass 2: frame 14"},
		{name: "help_120x40", term: big, keys: []string{"?"}, until: "Keys"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := New(Options{Fetch: goldenSnapshot, Inspect: goldenInspect, Actions: goldenActions{}, Interval: time.Hour,
				Styles: NewStyles(false), Clock: engine.NewVirtualClock(goldenNow)})
			screens := make(chan string, 1)
			w, h := sizes[c.term][0], sizes[c.term][1]
			tm := teatest.NewTestModel(t, probe{Model: m, screens: screens}, teatest.WithInitialTermSize(w, h))
			waitScreen(t, tm, screens, "Nodes (5)")
			for _, k := range c.keys {
				tm.Send(keyPress(k))
			}
			if c.size != nil {
				tm.Send(*c.size)
			}
			waitScreen(t, tm, screens, c.until)
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(probe)
			golden.RequireEqual(t, final.render())
		})
	}
}
