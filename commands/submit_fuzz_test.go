package commands

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The command line of submit, split on NUL bytes: whatever it holds,
// parsing never panics, and what it lets through is a job the engine can
// take: a type, at least one attempt, a JSON payload, a finite load, and a
// command only from after --.
func FuzzSubmitCommandLine(f *testing.F) {
	for _, args := range [][]string{
		{"--", "true"},
		{"true"},
		{"--type", "encode", "--load", "2.5", "--payload", `{"file":"a.mp4"}`},
		{"--type", "encode", "a.mp4"},
		{"--at", "+10m", "--", "make"},
		{"--at", "02:30", "--key", "web", "--", "make", "backup"},
		{"--in", "1h", "--hold", "--", "x"},
		{"--max-attempts", "3", "--backoff", "1s", "--timeout", "2m", "--type", "t"},
		{"--load", "NaN", "--", "x"},
		{"--payload", "{nope", "--type", "t"},
		{"--parent", "7", "--wait", "--wait-timeout", "5s", "--type", "t"},
		{"-o", "json", "--", "a", "--", "b"},
	} {
		f.Add(strings.Join(args, "\x00"))
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		// Reading files and stdin is readPayload's and readBatch's part,
		// fuzzed on their own; here the fuzzer would only find files.
		for _, a := range args {
			if strings.HasPrefix(a, "@") || strings.HasPrefix(a, "--batch") || strings.HasPrefix(a, "--payload=@") {
				return
			}
		}
		o, err := parseSubmit(t, "", args...)
		if err != nil || o == nil {
			return
		}
		switch {
		case strings.TrimSpace(o.Type) == "":
			t.Fatalf("%q: accepted without a type", args)
		case o.MaxAttempts < 1:
			t.Fatalf("%q: accepted %d attempts", args, o.MaxAttempts)
		case o.Payload != nil && !json.Valid(o.Payload):
			t.Fatalf("%q: accepted payload %q", args, o.Payload)
		case o.Load != nil && (math.IsNaN(*o.Load) || math.IsInf(*o.Load, 0) || *o.Load < 0):
			t.Fatalf("%q: accepted load %v", args, *o.Load)
		case len(o.Args) > 0 && !slices.Contains(args, "--"):
			t.Fatalf("%q: took %q as the command without --", args, o.Args)
		case o.At != nil && o.In != nil:
			t.Fatalf("%q: both --at and --in", args)
		}
	})
}

// --at and the listing windows: an offset lands on its side of now, a
// clock time within a day of it, and nothing panics.
func FuzzParseTimeSpec(f *testing.F) {
	for _, s := range []string{
		"2030-01-02T15:04:05Z", "2030-12-24", "2030-12-24 08:00", "02:30", "23:59:59",
		"+10m", "+1d", "+1d12h", "90m", "-2d", "+106752d", "+213505d", "213505d", "+9223372036854775807ns", "+-1h", "25:00", "",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	now := time.Date(2030, 6, 15, 12, 0, 0, 0, time.UTC)
	zone := time.FixedZone("test", 2*3600)
	f.Fuzz(func(t *testing.T, s string, future bool) {
		dir := towardPast
		if future {
			dir = towardFuture
		}
		got, err := parseTimeSpec(s, now, zone, dir)
		if err != nil {
			return
		}
		trimmed := strings.TrimSpace(s)
		if _, isClock := clockTime(trimmed, now, zone, dir); isClock {
			if d := got.Sub(now); d < -24*time.Hour || d > 24*time.Hour {
				t.Fatalf("%q: clock time %s is %s from now", s, got, d)
			}
		}
		sign := "-"
		if future {
			sign = "+"
		}
		if n, ok := strings.CutSuffix(strings.TrimPrefix(trimmed, sign), "d"); ok && future == strings.HasPrefix(trimmed, "+") {
			// Whole days: exactly that many, never a wrapped-around Duration.
			if days, err := strconv.ParseInt(n, 10, 64); err == nil {
				d := got.Sub(now)
				if !future {
					d = -d
				}
				if d%(24*time.Hour) != 0 || int64(d/(24*time.Hour)) != days {
					t.Fatalf("%q: %s from now, not %d days", s, d, days)
				}
			}
		}
		if _, rfcErr := time.Parse(time.RFC3339Nano, trimmed); rfcErr == nil {
			return
		}
		switch {
		case future && strings.HasPrefix(trimmed, "+") && got.Before(now):
			t.Fatalf("%q: offset toward the future gave %s, before now %s", s, got, now)
		case !future && !strings.HasPrefix(trimmed, "+") && !strings.ContainsAny(trimmed, ":T ") && got.After(now):
			// A duration ago, not a date (dates may lie either side).
			if _, dateErr := time.ParseInLocation("2006-01-02", trimmed, zone); dateErr != nil {
				t.Fatalf("%q: a duration ago gave %s, after now %s", s, got, now)
			}
		}
	})
}

// --payload and --load: what they accept is valid JSON and a finite,
// non-negative number.
func FuzzSubmitPayloadAndLoad(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `  [1,2] `, `"x"`, `{nope`, ``, `null`, "\"\xff\"", "1e400", "NaN", "-0", "+Inf", "0x10", "2.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s != "-" && !strings.HasPrefix(s, "@") {
			if p, err := readPayload(s, strings.NewReader("")); err == nil && !json.Valid(p) {
				t.Fatalf("payload %q accepted as %q", s, p)
			}
		}
		var v loadValue
		if err := v.Set(s); err == nil {
			if l := float64(v); math.IsNaN(l) || math.IsInf(l, 0) || l < 0 {
				t.Fatalf("load %q accepted as %v", s, l)
			}
		}
	})
}

// A --batch line: never a panic, and a request it accepts came from a
// UTF-8 line and has a type and valid JSON for its payload.
func FuzzParseBatchLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"encode","payload":{"file":"a"}}`,
		`{"args":["echo","hi"],"load":2,"in":"90s"}`,
		`{"type":"t","timeout":"-1s"}`,
		`{"type":"t","run_timeout":"1m","timeout":"1m"}`,
		"{\"args\":[\"echo\",\"\xff\"]}",
		`{"type":"t"} {"type":"u"}`,
		`{"type":"t","backoff":"1d"}`,
		`{"parent_id":-1,"type":"t"}`,
		`[]`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, _, err := parseBatchLine(line, &SubmitOptions{MaxAttempts: 1})
		if err != nil {
			return
		}
		if !utf8.Valid(line) {
			t.Fatalf("%q: accepted a line that is not UTF-8", line)
		}
		if strings.TrimSpace(r.Type) == "" {
			t.Fatalf("%q: accepted without a type", line)
		}
		if r.Payload != nil && !json.Valid(r.Payload) {
			t.Fatalf("%q: accepted payload %q", line, r.Payload)
		}
	})
}
