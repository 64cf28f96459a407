package commands

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func TestParseTimeSpec(t *testing.T) {
	zone := time.FixedZone("UTC+2", 2*60*60)
	now := time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC) // 17:04:05 in zone
	local := func(y int, m time.Month, d, h, min, s int) time.Time { return time.Date(y, m, d, h, min, s, 0, zone) }
	cases := []struct {
		in   string
		dir  timeDirection
		want time.Time
	}{
		{"2030-05-06T07:08:09Z", towardFuture, time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)},
		{"2030-05-06T07:08:09.5+01:00", towardPast, time.Date(2030, 5, 6, 6, 8, 9, 5e8, time.UTC)},
		{"2030-12-24", towardFuture, local(2030, 12, 24, 0, 0, 0)},
		{"2030-12-24 08:30", towardFuture, local(2030, 12, 24, 8, 30, 0)},
		{"2030-12-24T08:30:15", towardPast, local(2030, 12, 24, 8, 30, 15)},
		// A clock time: the next one for a start, the last one for a window.
		{"18:00", towardFuture, local(2030, 1, 2, 18, 0, 0)},
		{"09:00", towardFuture, local(2030, 1, 3, 9, 0, 0)},
		{"17:04:05", towardFuture, local(2030, 1, 3, 17, 4, 5)}, // now is not ahead
		{"09:00", towardPast, local(2030, 1, 2, 9, 0, 0)},
		{"18:00", towardPast, local(2030, 1, 1, 18, 0, 0)},
		// Offsets.
		{"+10m", towardFuture, now.Add(10 * time.Minute)},
		{"+1d12h", towardFuture, now.Add(36 * time.Hour)},
		{"90m", towardPast, now.Add(-90 * time.Minute)},
		{"-2d", towardPast, now.Add(-48 * time.Hour)},
	}
	for _, c := range cases {
		got, err := parseTimeSpec(c.in, now, zone, c.dir)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("parseTimeSpec(%q, %d) = %v, %v; want %v", c.in, c.dir, got, err, c.want)
		}
	}
	for _, c := range []struct {
		in  string
		dir timeDirection
	}{
		{"", towardFuture}, {"soon", towardFuture}, {"10m", towardFuture}, {"-10m", towardFuture},
		{"+-10m", towardFuture}, {"+10m", towardPast}, {"24:00", towardFuture}, {"2030-13-01", towardPast},
		{"xd", towardPast}, {"2d3", towardPast},
	} {
		if got, err := parseTimeSpec(c.in, now, zone, c.dir); err == nil {
			t.Errorf("parseTimeSpec(%q, %d) = %v; want an error", c.in, c.dir, got)
		}
	}
}

func TestSubmitAtForms(t *testing.T) {
	zone := time.FixedZone("UTC+2", 2*60*60)
	// testNow is 17:04:05 in zone.
	for in, want := range map[string]time.Time{
		"+10m":                 testNow.Add(10 * time.Minute),
		"2030-12-24":           time.Date(2030, 12, 24, 0, 0, 0, 0, zone),
		"18:00":                time.Date(2030, 1, 2, 18, 0, 0, 0, zone),
		"17:00":                time.Date(2030, 1, 3, 17, 0, 0, 0, zone),
		"2030-05-06T07:08:09Z": time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC),
	} {
		ios, _, _ := TestIO("")
		ios.Location = zone
		var got *SubmitOptions
		cmd := NewCmdSubmit(&Factory{IO: ios, Clock: fixedClock(testNow)}, func(_ context.Context, o *SubmitOptions) error {
			got = o
			return nil
		})
		if err := execParse(cmd, "--at", in, "--", "true"); err != nil {
			t.Fatalf("--at %s: %v", in, err)
		}
		if got.At == nil || !got.At.Equal(want) {
			t.Errorf("--at %s = %v; want %v", in, got.At, want)
		}
	}
}

func TestShowTimesInTheReadersZone(t *testing.T) {
	e := newTestEnv(t)
	later := time.Now().Add(time.Hour)
	j := e.insert(t, engine.JobInsertParams{RunAfter: &later})
	e.f.Clock = fixedClock(j.CreatedAt.Add(90 * time.Second))
	zone := time.FixedZone("UTC-5", -5*60*60)
	e.f.IO.Location = zone

	e.f.IO.OutIsTerminal, e.f.IO.NoColor = true, true
	if err := e.run(t, "show", fmt.Sprint(j.ID)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("created:   %s (1m30s ago)\n", j.CreatedAt.In(zone).Format(time.RFC3339)),
		fmt.Sprintf("run after: %s (in 58m)\n", j.RunAfter.In(zone).Format(time.RFC3339)),
	} {
		if !strings.Contains(e.stdout.String(), want) {
			t.Errorf("terminal show lacks %q:\n%s", want, e.stdout.String())
		}
	}

	// Piped and in JSON, times are UTC whatever the reader's zone.
	e.f.IO.OutIsTerminal = false
	if err := e.run(t, "show", fmt.Sprint(j.ID)); err != nil {
		t.Fatal(err)
	}
	if want := "run after\t" + j.RunAfter.UTC().Format(time.RFC3339Nano) + "\n"; !strings.Contains(e.stdout.String(), want) {
		t.Errorf("piped show lacks %q:\n%s", want, e.stdout.String())
	}
	if err := e.run(t, "show", fmt.Sprint(j.ID), "--jq", ".run_after"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(e.stdout.String()); !strings.HasSuffix(got, "Z") {
		t.Errorf("run_after in JSON %q; want UTC", got)
	}
}
