package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"
)

// Output formats of listing and show commands.
const (
	formatTable = "table"
	formatWide  = "wide"
	formatJSON  = "json"
)

// formatValue is the -o flag; it refuses unknown formats while flags are
// parsed, so a typo is a usage error before anything runs.
type formatValue struct{ o *outputOptions }

func (v formatValue) String() string { return v.o.Format }
func (v formatValue) Type() string   { return "format" }
func (v formatValue) Set(s string) error {
	switch s {
	case formatTable, formatWide, formatJSON:
	default:
		return fmt.Errorf("must be table, wide or json")
	}
	if v.o.JQ != "" && s != formatJSON {
		return fmt.Errorf("--jq filters JSON; it cannot be combined with -o %s", s)
	}
	v.o.Format, v.o.formatSet = s, true
	return nil
}

// outputOptions are the -o, --jq and -q flags shared by listing and show
// commands.
type outputOptions struct {
	Format string
	Quiet  bool
	JQ     string // the --jq expression; Format is json when set

	formatSet bool // -o was given
}

// addOutputFlags registers -o, --jq and, when quiet is true, -q on cmd,
// and checks after parsing that they are not combined. JSON written with
// writeJSON goes through the --jq filter (see bindJQ).
func addOutputFlags(cmd *cobra.Command, o *outputOptions, quiet bool) {
	o.Format = formatTable
	cmd.Flags().VarP(formatValue{o}, "output", "o", "output format: table, wide or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]string{formatTable, formatWide, formatJSON}, cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().Var(&jqValue{o: o}, "jq", jqFlagUsage)
	_ = cmd.RegisterFlagCompletionFunc("jq", cobra.NoFileCompletions)
	if quiet {
		cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", false, "print only ids, one per line")
	}
}

// addHeaderFlags registers --headers and --no-headers on a command that
// prints tables; they reach its tables through the streams (see
// bindHeaders).
func addHeaderFlags(cmd *cobra.Command) {
	cmd.Flags().Bool(headersFlag, false, "print tables' header rows when piped too")
	cmd.Flags().Bool(noHeadersFlag, false, "print tables without their header rows, on a terminal too")
}

// The flags that say whether tables print their header rows.
const (
	headersFlag   = "headers"
	noHeadersFlag = "no-headers"
)

// bindHeaders sets ios.Headers from the command's --headers or
// --no-headers, and back to HeadersAuto without them, so one set of
// streams serves command after command. It runs before every command.
func bindHeaders(ios *IOStreams, cmd *cobra.Command) error {
	ios.Headers = HeadersAuto
	on := func(name string) bool {
		f := cmd.Flags().Lookup(name)
		return f != nil && f.Value.String() == "true"
	}
	switch {
	case on(headersFlag) && on(noHeadersFlag):
		return usageErrorf(cmd, "--headers and --no-headers cannot be combined; choose one")
	case on(headersFlag):
		ios.Headers = HeadersOn
	case on(noHeadersFlag):
		ios.Headers = HeadersOff
	}
	return nil
}

// check refuses -q together with -o json or --jq.
func (o *outputOptions) check(cmd *cobra.Command) error {
	if o.Quiet && o.JQ != "" {
		return usageErrorf(cmd, "-q and --jq cannot be combined; choose one")
	}
	if o.Quiet && o.Format == formatJSON {
		return usageErrorf(cmd, "-q and -o json cannot be combined; choose one")
	}
	return nil
}

func (o *outputOptions) wide() bool { return o.Format == formatWide }

// writeJSON prints v as indented JSON followed by a newline, or what the
// --jq filter makes of it.
func writeJSON(w io.Writer, v any) error {
	if jw, ok := w.(*jqWriter); ok {
		return jw.emit(v)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONLine prints v as JSON on one line (a stream of objects, as
// watching prints them), or what the --jq filter makes of it.
func writeJSONLine(w io.Writer, v any) error {
	if jw, ok := w.(*jqWriter); ok {
		return jw.emit(v)
	}
	return json.NewEncoder(w).Encode(v)
}

// table collects rows and prints them for the reader at hand: aligned
// columns under a header (bold on a colour terminal) for a person, plain
// tab-separated lines for a script. A listing's header is left out when
// piped, so a script reads rows alone; a report's is kept, so its figures
// say what they are. --headers and --no-headers decide for either.
type table struct {
	ios    *IOStreams
	header []string
	report bool // the header is printed when piped too
	rows   [][]string
}

// newTable starts a listing's table.
func newTable(ios *IOStreams, header ...string) *table {
	return &table{ios: ios, header: header}
}

// newReportTable starts a report's table: its header is printed when
// piped too, unless --no-headers.
func newReportTable(ios *IOStreams, header ...string) *table {
	return &table{ios: ios, header: header, report: true}
}

// showHeader says whether the header row is printed.
func (t *table) showHeader() bool {
	switch t.ios.Headers {
	case HeadersOn:
		return len(t.header) > 0
	case HeadersOff:
		return false
	}
	return len(t.header) > 0 && (t.ios.OutIsTerminal || t.report)
}

// addRow appends one row; cells may carry colour from a palette.
func (t *table) addRow(cells ...string) { t.rows = append(t.rows, cells) }

// render prints the table.
func (t *table) render() error {
	if !t.ios.OutIsTerminal {
		var b strings.Builder
		if t.showHeader() {
			for i, h := range t.header {
				if i > 0 {
					b.WriteByte('\t')
				}
				b.WriteString(plainCell(h))
			}
			b.WriteByte('\n')
		}
		for _, row := range t.rows {
			for i, c := range row {
				if i > 0 {
					b.WriteByte('\t')
				}
				b.WriteString(plainCell(c))
			}
			b.WriteByte('\n')
		}
		_, err := io.WriteString(t.ios.Out, b.String())
		return err
	}
	var buf bytes.Buffer
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Formatting: tw.CellFormatting{AutoFormat: tw.Off},
			},
			Row: tw.CellConfig{
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone},
			},
		}),
		tablewriter.WithPadding(tw.Padding{Right: "  ", Overwrite: true}),
	)
	if t.showHeader() {
		header := make([]string, len(t.header))
		p := newPalette(t.ios)
		for i, h := range t.header {
			header[i] = p.bold(h)
		}
		tbl.Header(header)
	}
	for _, row := range t.rows {
		cells := make([]string, len(row))
		for i, c := range row {
			if c == "" {
				c = "-"
			}
			cells[i] = c
		}
		if err := tbl.Append(cells); err != nil {
			return err
		}
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	// The renderer pads the last column too; trailing blanks only get in
	// the way of copying from the terminal.
	var out strings.Builder
	for line := range strings.Lines(buf.String()) {
		out.WriteString(trimTrailingBlanks(strings.TrimSuffix(line, "\n")))
		out.WriteByte('\n')
	}
	_, err := io.WriteString(t.ios.Out, out.String())
	return err
}

// trailingBlanks matches the spaces and colour codes after a line's last
// visible character.
var trailingBlanks = regexp.MustCompile(`(?: |\x1b\[[0-9;]*m)+$`)

// trimTrailingBlanks drops trailing spaces; when colour codes were among
// them, one reset takes their place so no colour leaks into the next line.
func trimTrailingBlanks(line string) string {
	tail := trailingBlanks.FindString(line)
	line = line[:len(line)-len(tail)]
	if strings.Contains(tail, "\x1b") {
		line += "\x1b[0m"
	}
	return line
}

// plainCell keeps a piped cell on its line and in its column.
func plainCell(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

// keyValues prints a "key: value" block, the table form of show commands.
type keyValues struct {
	ios  *IOStreams
	rows [][2]string
}

func (kv *keyValues) add(key, value string) { kv.rows = append(kv.rows, [2]string{key, value}) }

// render aligns "key: value" lines for a terminal; piped, each line is
// key TAB value, like every other piped output.
func (kv *keyValues) render() error {
	if !kv.ios.OutIsTerminal {
		var b strings.Builder
		for _, r := range kv.rows {
			b.WriteString(r[0] + "\t" + r[1] + "\n")
		}
		_, err := io.WriteString(kv.ios.Out, b.String())
		return err
	}
	width := 0
	for _, r := range kv.rows {
		width = max(width, len(r[0]))
	}
	p := newPalette(kv.ios)
	var b strings.Builder
	for _, r := range kv.rows {
		line := fmt.Sprintf("%s%s %s", p.bold(r[0]+":"), strings.Repeat(" ", width-len(r[0])), r[1])
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(kv.ios.Out, b.String())
	return err
}
