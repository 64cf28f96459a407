// Command gendocs writes jobctl's man pages into man/ and its shell
// completions into completions/, generated from the command tree so they
// never drift from the code. The output is reproducible: the date in the
// pages comes from SOURCE_DATE_EPOCH, else a fixed date.
//
//	go run ./cmd/gendocs [-dir DIR]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	if err := doc.GenManTree(root, header, manDir); err != nil {
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
