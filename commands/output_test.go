package commands

import (
	"testing"
)

func TestFormatFloat(t *testing.T) {
	cases := map[float64]string{0: "0", 1: "1", 0.5: "0.5", 2.25: "2.25", 10: "10", 1.0 / 3: "0.33"}
	for f, want := range cases {
		if got := formatFloat(f); got != want {
			t.Errorf("formatFloat(%v) = %q; want %q", f, got, want)
		}
	}
}

func TestPipedCellsStayInColumns(t *testing.T) {
	ios, stdout, _ := TestIO("")
	tb := newTable(ios, "A", "B")
	tb.addRow("1", "two\twords\nand lines")
	if err := tb.render(); err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); got != "1\ttwo words and lines\n" {
		t.Errorf("piped row %q; want tabs and newlines inside a cell replaced", got)
	}
}

func TestColorOnlyOnColorTerminal(t *testing.T) {
	ios, _, _ := TestIO("")
	if p := newPalette(ios); p.red("x") != "x" {
		t.Error("colour on piped output")
	}
	ios.OutIsTerminal = true
	p := newPalette(ios)
	for got, want := range map[string]string{
		p.red("x"): "\x1b[31mx\x1b[m", p.green("x"): "\x1b[32mx\x1b[m", p.yellow("x"): "\x1b[33mx\x1b[m",
		p.gray("x"): "\x1b[90mx\x1b[m", p.bold("x"): "\x1b[1mx\x1b[m",
	} {
		if got != want {
			t.Errorf("on a terminal painted %q; want %q (basic ANSI colours)", got, want)
		}
	}
	ios.NoColor = true
	if p := newPalette(ios); p.red("x") != "x" {
		t.Error("colour despite NO_COLOR")
	}
}

func TestTrimTrailingBlanks(t *testing.T) {
	cases := map[string]string{
		"a  b   ":                     "a  b",
		"a":                           "a",
		"\x1b[1mAGE\x1b[22m  \x1b[0m": "\x1b[1mAGE\x1b[0m",
		"x \x1b[31mred\x1b[0m":        "x \x1b[31mred\x1b[0m",
		"   ":                         "",
	}
	for in, want := range cases {
		if got := trimTrailingBlanks(in); got != want {
			t.Errorf("trimTrailingBlanks(%q) = %q; want %q", in, got, want)
		}
	}
}
