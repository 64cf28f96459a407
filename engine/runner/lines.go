package runner

import (
	"bytes"
	"strconv"
	"strings"
)

// maxControlLine bounds what is kept of an unfinished stdout line. A longer
// line is still logged in full, but cannot be a progress or warning line.
const maxControlLine = 4096

// Prefixes of the stdout lines a job reports through.
const (
	progressPrefix = "jobctl:progress"
	warningPrefix  = "jobctl:warning"
)

// lineParser is the process's stdout: it logs every byte as it arrives and
// reports the progress and warning lines among them.
type lineParser struct {
	out      Output
	line     []byte
	overlong bool // dropping the rest of a line longer than maxControlLine
}

// Write logs p and parses the lines it completes.
func (l *lineParser) Write(p []byte) (int, error) {
	l.out.Log(p)
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.keep(p)
			break
		}
		l.keep(p[:i])
		l.endLine()
		p = p[i+1:]
	}
	return n, nil
}

// flush parses a last line that had no newline.
func (l *lineParser) flush() {
	if len(l.line) > 0 {
		l.endLine()
	}
}

func (l *lineParser) keep(p []byte) {
	if l.overlong {
		return
	}
	if len(l.line)+len(p) > maxControlLine {
		l.overlong, l.line = true, l.line[:0]
		return
	}
	l.line = append(l.line, p...)
}

func (l *lineParser) endLine() {
	if !l.overlong {
		parseControlLine(string(bytes.TrimSuffix(l.line, []byte{'\r'})), l.out)
	}
	l.line, l.overlong = l.line[:0], false
}

// parseControlLine reports a "jobctl:progress N [text]" or "jobctl:warning
// text" line; any other line, or a progress line without a number, is only log.
func parseControlLine(line string, out Output) {
	if rest, ok := cutKeyword(line, progressPrefix); ok {
		number, text := rest, ""
		if i := strings.IndexAny(rest, " \t"); i >= 0 {
			number, text = rest[:i], rest[i+1:]
		}
		percent, err := strconv.Atoi(strings.TrimSuffix(number, "%"))
		if err != nil {
			return
		}
		out.Progress(min(max(percent, 0), 100), strings.TrimSpace(text))
		return
	}
	if rest, ok := cutKeyword(line, warningPrefix); ok {
		out.Warning(rest)
	}
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

// logWriter is the process's stderr: log only.
type logWriter struct{ out Output }

func (w logWriter) Write(p []byte) (int, error) {
	w.out.Log(p)
	return len(p), nil
}
