package runner

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/jobctl/jobctl/engine"
)

// maxControlLine bounds what is held of an unfinished stdout line that may
// be a protocol line. A longer line is logged in full as output, and is
// never a progress or warning line.
const maxControlLine = 4096

// Prefixes of the stdout lines a job reports through.
const (
	progressPrefix = "jobctl:progress"
	warningPrefix  = "jobctl:warning"
)

// lineParser is the process's stdout: it passes the job's bytes on as they
// arrive, except a line that may be a protocol line (it begins as one
// could), which it holds until its end: a progress or warning line then
// goes to the log as protocol, anything else as output. So the job's own
// output is never mixed with what it said to jobctl, and a line is held
// only while it could still be one.
type lineParser struct {
	out     Output
	held    []byte // the current line so far, while it may be a protocol line
	passing bool   // the current line was found not to be one: its bytes pass on
}

// Write logs p and parses the lines it completes.
func (l *lineParser) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.piece(p, false)
			break
		}
		l.piece(p[:i+1], true)
		p = p[i+1:]
	}
	return n, nil
}

// piece takes a part of one line; ends says it ends the line (with its
// newline).
func (l *lineParser) piece(p []byte, ends bool) {
	if l.passing {
		l.out.Log(engine.LogOutput, p)
		l.passing = !ends
		return
	}
	l.held = append(l.held, p...)
	switch {
	case ends:
		l.endLine()
	case !mayBeControlLine(l.held):
		l.out.Log(engine.LogOutput, l.held)
		l.held, l.passing = l.held[:0], true
	}
}

// flush ends a last line that had no newline.
func (l *lineParser) flush() {
	if len(l.held) > 0 {
		l.endLine()
	}
	l.passing = false
}

// endLine reports the held line if it is a protocol line and logs it in
// its stream.
func (l *lineParser) endLine() {
	line := strings.TrimSuffix(strings.TrimSuffix(string(l.held), "\n"), "\r")
	stream := engine.LogOutput
	if len(line) <= maxControlLine && parseControlLine(line, l.out) {
		stream = engine.LogProtocol
	}
	l.out.Log(stream, l.held)
	l.held = l.held[:0]
}

// mayBeControlLine reports whether an unfinished line could still turn out
// a protocol line: it is no longer than maxControlLine and it begins a
// keyword, or is one followed by a blank.
func mayBeControlLine(line []byte) bool {
	if len(line) > maxControlLine {
		return false
	}
	for _, keyword := range []string{progressPrefix, warningPrefix} {
		if len(line) <= len(keyword) {
			if strings.HasPrefix(keyword, string(line)) {
				return true
			}
			continue
		}
		if strings.HasPrefix(string(line), keyword) && (line[len(keyword)] == ' ' || line[len(keyword)] == '\t') {
			return true
		}
	}
	return false
}

// parseControlLine reports a "jobctl:progress N [text]" or "jobctl:warning
// text" line and says whether it was one; any other line, or a progress
// line without a number, is only log.
func parseControlLine(line string, out Output) bool {
	if rest, ok := cutKeyword(line, progressPrefix); ok {
		number, text := rest, ""
		if i := strings.IndexAny(rest, " \t"); i >= 0 {
			number, text = rest[:i], rest[i+1:]
		}
		percent, err := strconv.Atoi(strings.TrimSuffix(number, "%"))
		if err != nil {
			return false
		}
		out.Progress(min(max(percent, 0), 100), strings.TrimSpace(text))
		return true
	}
	if rest, ok := cutKeyword(line, warningPrefix); ok {
		out.Warning(rest)
		return true
	}
	return false
}

// cutKeyword returns what follows keyword and blanks, so "jobctl:progressive"
// is not taken for "jobctl:progress".
func cutKeyword(line, keyword string) (string, bool) {
	rest, ok := strings.CutPrefix(line, keyword)
	if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// logWriter is the process's stderr: output only.
type logWriter struct{ out Output }

func (w logWriter) Write(p []byte) (int, error) {
	w.out.Log(engine.LogOutput, p)
	return len(p), nil
}
