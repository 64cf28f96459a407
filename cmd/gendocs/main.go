// Command gendocs writes jobctl's man pages into man/ and its shell
// completions into completions/, generated from the command tree so they
// never drift from the code. Besides what cobra writes from a command's
// help, every page gets an EXIT STATUS section and jobctl(1) ENVIRONMENT,
// FILES, JOB PROTOCOL and MEASURED USE, from the help topics of the same
// names (usage for the last). The
// output is reproducible: the date in the pages comes from
// SOURCE_DATE_EPOCH, else a fixed date.
//
//	go run ./cmd/gendocs [-dir DIR]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/jobctl/jobctl/commands"
)

// fixedDate dates the man pages when SOURCE_DATE_EPOCH is not set, so two
// runs on different days write the same files.
var fixedDate = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

func main() {
	dir := flag.String("dir", ".", "directory to write man/ and completions/ into")
	flag.Parse()
	date, err := sourceDate(os.Getenv("SOURCE_DATE_EPOCH"))
	if err == nil {
		err = generate(*dir, date)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

// sourceDate reads SOURCE_DATE_EPOCH (seconds since 1970), the
// reproducible-builds convention; empty means fixedDate.
func sourceDate(epoch string) (time.Time, error) {
	if epoch == "" {
		return fixedDate, nil
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid SOURCE_DATE_EPOCH %q: want seconds since 1970", epoch)
	}
	return time.Unix(secs, 0).UTC(), nil
}

// generate writes dir/man/*.1 and dir/completions/*, replacing what an
// earlier run left, so pages of removed commands do not linger.
func generate(dir string, date time.Time) error {
	ios := &commands.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	// The version only decides whether --version is documented; its value
	// appears nowhere in the output.
	root := commands.NewRootCmd(commands.NewFactory(ios), "dev")
	disableAutoGenTag(root)

	manDir := filepath.Join(dir, "man")
	if err := resetDir(manDir, "jobctl*.1"); err != nil {
		return err
	}
	header := &doc.GenManHeader{Section: "1", Source: "jobctl", Manual: "jobctl manual", Date: &date}
	sections, err := manSections(root)
	if err != nil {
		return err
	}
	if err := genManTree(root, header, manDir, sections); err != nil {
		return fmt.Errorf("writing man pages: %w", err)
	}

	compDir := filepath.Join(dir, "completions")
	if err := os.MkdirAll(compDir, 0o755); err != nil {
		return err
	}
	shells := []struct {
		file string
		gen  func(io.Writer) error
	}{
		{"jobctl.bash", func(w io.Writer) error { return root.GenBashCompletionV2(w, true) }},
		{"_jobctl", root.GenZshCompletion},
		{"jobctl.fish", func(w io.Writer) error { return root.GenFishCompletion(w, true) }},
		{"jobctl.ps1", root.GenPowerShellCompletionWithDesc},
	}
	for _, s := range shells {
		if err := writeFile(filepath.Join(compDir, s.file), s.gen); err != nil {
			return fmt.Errorf("writing %s completion: %w", s.file, err)
		}
	}
	return nil
}

// manSection is a part of a man page that cobra does not write.
type manSection struct {
	title string
	text  string // help-topic text: paragraphs, and indented blocks kept as they are
}

// filesHelp is the FILES section: where jobctl and its packages keep things.
const filesHelp = `  $XDG_STATE_HOME/jobctl/jobctl.db, ~/.local/state/jobctl/jobctl.db
      the SQLite database when no other is named; created on first use
  $XDG_STATE_HOME/jobctl/nodes/NAME, ~/.local/state/jobctl/nodes/NAME
      node NAME's state directory (serve --state-dir): results/ keeps
      the results of finished jobs the database has not taken yet
  $XDG_CONFIG_HOME/jobctl/config.yaml, ~/.config/jobctl/config.yaml
      the user's config file: db names the database when nothing before
      it does; it has the format of jobctl serve --config
  /etc/jobctl/db
      the packaged service's database, one line, root's alone (0600);
      the unit hands it to the node as the systemd credential jobctl-db
  /etc/jobctl/jobctl.env
      the packaged service's environment, root's alone (0600): the flags
      of jobctl serve (JOBCTL_SERVE_FLAGS), and JOBCTL_DB if set
  /usr/lib/systemd/system/jobctl.service
      the packaged systemd unit that runs jobctl serve as the user jobctl
      and its jobs as the user jobctl-job
  /var/lib/jobctl
      the service's state directory, jobctl's alone (0700): its default
      SQLite database and the node's state
  /var/lib/jobctl-job
      the home of the user jobctl-job, where the service's jobs start`

// manSections says which extra sections each page gets, by command path:
// "" for every page.
func manSections(root *cobra.Command) (map[string][]manSection, error) {
	topic := func(name string) (string, error) {
		c, _, err := root.Find([]string{name})
		if err != nil || c.Name() != name || c.Long == "" {
			return "", fmt.Errorf("no help topic %q to write a man section from", name)
		}
		return c.Long, nil
	}
	exit, err := topic(commands.TopicExitCodes)
	if err != nil {
		return nil, err
	}
	env, err := topic(commands.TopicEnvironment)
	if err != nil {
		return nil, err
	}
	protocol, err := topic(commands.TopicJobProtocol)
	if err != nil {
		return nil, err
	}
	audit, err := topic(commands.TopicAudit)
	if err != nil {
		return nil, err
	}
	usage, err := topic(commands.TopicUsage)
	if err != nil {
		return nil, err
	}
	files := manSection{"FILES", filesHelp}
	jobProtocol := manSection{"JOB PROTOCOL", protocol}
	measured := manSection{"MEASURED USE", usage}
	return map[string][]manSection{
		"":                             {{"EXIT STATUS", exit}},
		root.CommandPath():             {{"ENVIRONMENT", env}, files, jobProtocol, measured},
		root.CommandPath() + " serve":  {files, jobProtocol, measured},
		root.CommandPath() + " events": {{"AUDIT TRAIL", audit}},
	}, nil
}

// genManTree is doc.GenManTree with the extra sections: each page is
// rendered by cobra, then the sections go in before EXAMPLE (else SEE
// ALSO), the order of man-pages(7).
func genManTree(cmd *cobra.Command, header *doc.GenManHeader, dir string, sections map[string][]manSection) error {
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := genManTree(c, header, dir, sections); err != nil {
			return err
		}
	}
	var page bytes.Buffer
	h := *header // GenMan fills in the title
	if err := doc.GenMan(cmd, &h, &page); err != nil {
		return err
	}
	extra := append(slices.Clone(sections[""]), sections[cmd.CommandPath()]...)
	var roff bytes.Buffer
	for _, s := range extra {
		roff.WriteString(".SH " + s.title + "\n")
		roff.WriteString(topicRoff(s.text))
	}
	out := page.Bytes()
	at := len(out)
	for _, next := range []string{"\n.SH EXAMPLE\n", "\n.SH SEE ALSO\n"} {
		if i := bytes.Index(out, []byte(next)); i >= 0 {
			at = i + 1
			break
		}
	}
	out = slices.Concat(out[:at], roff.Bytes(), out[at:])
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-") + "." + header.Section
	return os.WriteFile(filepath.Join(dir, name), out, 0o644)
}

// topicRoff turns help-topic text into roff: a block of lines indented by
// two spaces keeps its layout (tables of codes and variables), set at the
// page's indent instead of the two spaces; any other block is a filled
// paragraph.
func topicRoff(text string) string {
	var b strings.Builder
	for _, block := range strings.Split(strings.Trim(text, "\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		indented := true
		for _, l := range lines {
			indented = indented && strings.HasPrefix(l, "  ")
		}
		b.WriteString(".PP\n")
		if indented {
			b.WriteString(".nf\n")
		}
		for _, l := range lines {
			if indented {
				l = l[2:]
			}
			b.WriteString(roffEscape(l) + "\n")
		}
		if indented {
			b.WriteString(".fi\n")
		}
	}
	return b.String()
}

// roffEscape makes a line of text print as written: a backslash is the
// escape character, a line starting with a dot or quote would be a
// request, and a plain "-" may be set as a hyphen that breaks a pasted
// flag.
func roffEscape(line string) string {
	line = strings.ReplaceAll(line, `\`, `\e`)
	line = strings.ReplaceAll(line, "-", `\-`)
	if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
		line = `\&` + line
	}
	return line
}

// disableAutoGenTag drops cobra's "auto generated on DATE" footer from
// every page.
func disableAutoGenTag(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, sub := range c.Commands() {
		disableAutoGenTag(sub)
	}
}

// resetDir creates dir and removes the files in it matching pattern.
func resetDir(dir, pattern string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path string, gen func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := gen(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
