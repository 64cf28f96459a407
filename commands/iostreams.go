package commands

import (
	"bytes"
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// IOStreams are the standard streams of a command, with what is known
// about the terminal, so output can be decorated for people and kept plain
// for scripts.
type IOStreams struct {
	In            io.Reader
	Out, ErrOut   io.Writer
	OutIsTerminal bool
	// ErrIsTerminal says stderr is a terminal: progress is drawn there,
	// and only then.
	ErrIsTerminal bool
	// NoColor turns colour off even on a terminal (NO_COLOR, TERM=dumb).
	NoColor bool
	// Location is the zone times are shown in on a terminal and read in
	// from the command line; nil means the local zone.
	Location *time.Location
	// Headers is --headers or --no-headers of the command running; the
	// zero value leaves the choice to each table (see table.showHeader).
	Headers HeaderChoice
}

// HeaderChoice says whether tables print their header row.
type HeaderChoice int

const (
	// HeadersAuto: a listing's header on a terminal only, a report's
	// always.
	HeadersAuto HeaderChoice = iota
	// HeadersOn: every table's header, piped too (--headers).
	HeadersOn
	// HeadersOff: no table's header, on a terminal too (--no-headers).
	HeadersOff
)

// SystemIO returns the process's standard streams.
func SystemIO() *IOStreams {
	return &IOStreams{
		In:            os.Stdin,
		Out:           os.Stdout,
		ErrOut:        os.Stderr,
		OutIsTerminal: term.IsTerminal(int(os.Stdout.Fd())),
		ErrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		NoColor:       os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb",
	}
}

// TestIO returns streams backed by buffers: stdin reads in, and the
// returned buffers collect stdout and stderr. The output counts as piped.
func TestIO(in string) (ios *IOStreams, stdout, stderr *bytes.Buffer) {
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: bytes.NewBufferString(in), Out: stdout, ErrOut: stderr}, stdout, stderr
}

// Zone is the reader's time zone: Location, else the local zone.
func (s *IOStreams) Zone() *time.Location {
	if s.Location != nil {
		return s.Location
	}
	return time.Local
}

// ColorEnabled reports whether stdout may carry ANSI colour.
func (s *IOStreams) ColorEnabled() bool { return s.OutIsTerminal && !s.NoColor }
