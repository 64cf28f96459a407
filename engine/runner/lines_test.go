package runner

import (
	"slices"
	"strings"
	"testing"
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
