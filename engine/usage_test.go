package engine

import (
	"math"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	values := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tc := range []struct {
		p    float64
		want float64
	}{{50, 5}, {95, 10}, {90, 9}, {10, 1}, {0, 1}, {100, 10}} {
		if got := Percentile(values, tc.p); got != tc.want {
			t.Errorf("Percentile(1..10, %v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := Percentile(nil, 95); got != 0 {
		t.Errorf("Percentile of nothing = %v, want 0", got)
	}
}

func TestJudgeLoad(t *testing.T) {
	for _, tc := range []struct {
		declared, p95 float64
		runs          int
		want          LoadVerdict
	}{
		{1, 3.2, 40, LoadUsesMore},
		{1, 1.5, 40, LoadMatches}, // at the bound: not far
		{1, 1.51, 40, LoadUsesMore},
		{4, 1.9, 10, LoadUsesLess},
		{4, 2, 10, LoadMatches},
		{1, 3.2, LoadCheckMinRuns - 1, LoadFewRuns},
		{0, 0.2, 40, LoadMatches}, // a sliver of a core for a load-0 job is no news
		{0, 0.3, 40, LoadUsesMore},
		{0.2, 0.05, 40, LoadMatches}, // far in ratio, not in cores
	} {
		if got := JudgeLoad(tc.declared, tc.p95, tc.runs); got != tc.want {
			t.Errorf("JudgeLoad(%v, %v, %d) = %s, want %s", tc.declared, tc.p95, tc.runs, got, tc.want)
		}
	}
}

func TestSummarizeUsage(t *testing.T) {
	var attempts []AttemptUsage
	for i := range 40 {
		// transcode: load 1, using 2 to 3.95 cores; the 95th percentile is
		// the 38th of 40: 2 + 37×0.05 = 3.85.
		attempts = append(attempts, AttemptUsage{Type: "transcode", Load: 1,
			Usage: Usage{CPUSeconds: (2 + float64(i)*0.05) * 10, WallSeconds: 10, PeakMemory: int64(i+1) << 20}})
	}
	attempts = append(attempts,
		AttemptUsage{Type: "mail", Load: 1, Usage: Usage{CPUSeconds: 1, WallSeconds: 2, OOMKilled: true}},
		AttemptUsage{Type: "mail", Load: 1, Usage: Usage{CPUSeconds: 0, WallSeconds: 0}})
	got := SummarizeUsage(attempts)
	if len(got) != 2 || got[0].Type != "mail" || got[1].Type != "transcode" {
		t.Fatalf("SummarizeUsage types: %+v, want mail then transcode", got)
	}
	mail, tc := got[0], got[1]
	if mail.Runs != 2 || mail.Verdict != LoadFewRuns || mail.Note != "" || mail.OOMKilled != 1 || mail.CoresP95 != 0.5 {
		t.Errorf("mail: %+v", mail)
	}
	if tc.Runs != 40 || tc.DeclaredLoad != 1 || math.Abs(tc.CoresP95-3.85) > 1e-9 || math.Abs(tc.CoresP50-2.95) > 1e-9 ||
		tc.MemoryP95 != 38<<20 || tc.WallP50 != 10 || tc.Verdict != LoadUsesMore {
		t.Errorf("transcode: %+v", tc)
	}
	if want := "transcode: declared load 1, uses 3.85 cores p95 over 40 runs"; tc.Note != want {
		t.Errorf("note %q, want %q", tc.Note, want)
	}
}

func TestUsageCores(t *testing.T) {
	if c := (Usage{CPUSeconds: 3, WallSeconds: 2}).Cores(); c != 1.5 {
		t.Errorf("Cores = %v, want 1.5", c)
	}
	if c := (Usage{CPUSeconds: 3}).Cores(); c != 0 {
		t.Errorf("Cores without wall time = %v, want 0", c)
	}
}

func TestFormatSize(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{{64 << 20, "64MiB"}, {2 << 30, "2GiB"}, {1536 << 10, "1536KiB"}, {1000, "1000B"}, {0, "0B"}, {1 << 50, "1PiB"}} {
		if got := FormatSize(tc.in); got != tc.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tc.in, got, tc.want)
		}
		if back, err := ParseBytes(FormatSize(tc.in)); err != nil || back != tc.in {
			t.Errorf("ParseBytes(FormatSize(%d)) = %d, %v", tc.in, back, err)
		}
	}
	if got := MessageOutOfMemory(2 << 30); got != "killed: out of memory, limit 2GiB" {
		t.Errorf("MessageOutOfMemory = %q", got)
	}
}

func TestEndedAttemptKeepsUsage(t *testing.T) {
	before := &Job{ID: 1, Attempt: 2, Node: "n1", Status: StatusRunning}
	after := &Job{ID: 1, Attempt: 2, Status: StatusFinished, Usage: &Usage{CPUSeconds: 1, WallSeconds: 2, PeakMemory: 3}}
	a := EndedAttempt(before, after, time.Unix(0, 0))
	if a.Usage == nil || *a.Usage != *after.Usage || a.Usage == after.Usage {
		t.Errorf("EndedAttempt usage = %v, want a copy of %v", a.Usage, after.Usage)
	}
}

func TestOutcomeUpdateCarriesUsage(t *testing.T) {
	j := &Job{ID: 1, Status: StatusRunning, Version: 3, Attempt: 1, MaxAttempts: 1}
	used := &Usage{CPUSeconds: 1, WallSeconds: 2, PeakMemory: 3, OOMKilled: true}
	u := OutcomeUpdate(j, RunResult{ExitCode: -1, Outcome: RunFailed, Reason: MessageOutOfMemory(64 << 20), Usage: used}, false, func() float64 { return 0.5 })
	if u.Usage == nil || *u.Usage != *used || u.To != StatusFailed || *u.Message != "killed: out of memory, limit 64MiB" {
		t.Errorf("OutcomeUpdate = %+v", u)
	}
	if u := OutcomeUpdate(j, RunResult{Outcome: RunSucceeded}, false, func() float64 { return 0.5 }); u.Usage != nil {
		t.Errorf("an unmeasured run's update has usage %+v", *u.Usage)
	}
}
