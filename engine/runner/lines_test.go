package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func TestLineParserAcrossWrites(t *testing.T) {
	t.Parallel()
	out := newRecordingOutput()
	p := &lineParser{out: out}
	writes := []string{
		"plain\njobctl:pro", "gress 4", "0 copying\r\n",
		"jobctl:warning\tlow disk\n",
		"jobctl:progress\n", // no number: log only
		"jobctl:progress x5\n",
		"jobctl:progress 7%\n",
		"jobctl:warning",
	}
	for _, w := range writes {
		if n, err := p.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	p.flush()

	if got, want := out.logText(), strings.Join(writes, ""); got != want {
		t.Errorf("log = %q, want every byte as written %q", got, want)
	}
	if got, want := out.streamText(engine.LogProtocol),
		"jobctl:progress 40 copying\r\njobctl:warning\tlow disk\njobctl:progress 7%\njobctl:warning"; got != want {
		t.Errorf("protocol stream %q, want the lines that took effect %q", got, want)
	}
	if got, want := out.streamText(engine.LogOutput), "plain\njobctl:progress\njobctl:progress x5\n"; got != want {
		t.Errorf("output stream %q, want %q", got, want)
	}
	wantProgress := []progress{{40, "copying"}, {7, ""}}
	if got := out.progressCalls(); !slices.Equal(got, wantProgress) {
		t.Errorf("progress = %v, want %v", got, wantProgress)
	}
	wantWarnings := []string{"low disk", ""}
	if got := out.warningCalls(); !slices.Equal(got, wantWarnings) {
		t.Errorf("warnings = %q, want %q", got, wantWarnings)
	}
}

func TestLineParserSkipsOverlongLines(t *testing.T) {
	t.Parallel()
	out := newRecordingOutput()
	p := &lineParser{out: out}
	long := "jobctl:warning " + strings.Repeat("x", maxControlLine)
	_, _ = p.Write([]byte(long[:100]))
	_, _ = p.Write([]byte(long[100:] + "\njobctl:progress 3 next\n"))
	p.flush()
	if got := out.warningCalls(); len(got) != 0 {
		t.Errorf("an overlong line was parsed as a warning")
	}
	if got, want := out.progressCalls(), []progress{{3, "next"}}; !slices.Equal(got, want) {
		t.Errorf("progress = %v, want %v: the line after an overlong one must parse", got, want)
	}
}

// TestLineParserHoldsOnlyWhatMayBeProtocol: output passes on at once; a
// line is held while it may still be a protocol line, and let go as output
// the moment it cannot be one.
func TestLineParserHoldsOnlyWhatMayBeProtocol(t *testing.T) {
	t.Parallel()
	out := newRecordingOutput()
	p := &lineParser{out: out}
	for _, step := range []struct{ write, output, protocol string }{
		{"plain start", "plain start", ""},
		{" and end\n", "plain start and end\n", ""},
		{"jobc", "plain start and end\n", ""},
		{"tl:progre", "plain start and end\n", ""},
		{"ss 5 five\n", "plain start and end\n", "jobctl:progress 5 five\n"},
		{"job", "plain start and end\n", "jobctl:progress 5 five\n"},
		{"s done", "plain start and end\njobs done", "jobctl:progress 5 five\n"},
		{"\njobctl:progressive\n", "plain start and end\njobs done\njobctl:progressive\n", "jobctl:progress 5 five\n"},
		{"jobctl:warning ", "plain start and end\njobs done\njobctl:progressive\n", "jobctl:progress 5 five\n"},
	} {
		if _, err := p.Write([]byte(step.write)); err != nil {
			t.Fatal(err)
		}
		if got := out.streamText(engine.LogOutput); got != step.output {
			t.Errorf("after %q: output %q, want %q", step.write, got, step.output)
		}
		if got := out.streamText(engine.LogProtocol); got != step.protocol {
			t.Errorf("after %q: protocol %q, want %q", step.write, got, step.protocol)
		}
	}
	p.flush()
	if got := out.streamText(engine.LogProtocol); got != "jobctl:progress 5 five\njobctl:warning " {
		t.Errorf("at the end: protocol %q; want the unfinished warning line too", got)
	}
	if got := out.warningCalls(); !slices.Equal(got, []string{""}) {
		t.Errorf("warnings %q", got)
	}
}
