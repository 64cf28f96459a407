package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// readTree returns every file under dir by its relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[rel], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestGenerateIsReproducible(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := generate(a, fixedDate); err != nil {
		t.Fatal(err)
	}
	if err := generate(b, fixedDate); err != nil {
		t.Fatal(err)
	}
	filesA, filesB := readTree(t, a), readTree(t, b)
	if len(filesA) != len(filesB) {
		t.Fatalf("two runs wrote %d and %d files", len(filesA), len(filesB))
	}
	for name, data := range filesA {
		if !bytes.Equal(data, filesB[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}

	for _, want := range []string{
		"man/jobctl.1", "man/jobctl-submit.1", "man/jobctl-nodes-drain.1", "man/jobctl-lease-release.1",
		"man/jobctl-db-migrate.1", "man/jobctl-cancel.1",
		"completions/jobctl.bash", "completions/_jobctl", "completions/jobctl.fish", "completions/jobctl.ps1",
	} {
		if len(filesA[want]) == 0 {
			t.Errorf("%s is missing or empty", want)
		}
	}
	submit := string(filesA["man/jobctl-submit.1"])
	for _, want := range []string{`"Jan 2026"`, "jobctl manual", `\fB--max-attempts\fP`, "EXAMPLE"} {
		if !strings.Contains(submit, want) {
			t.Errorf("jobctl-submit.1 lacks %q", want)
		}
	}
	if strings.Contains(submit, "Auto generated") {
		t.Error("man page carries cobra's dated footer")
	}
}

// sectionTitles lists a page's .SH titles in order.
func sectionTitles(page string) []string {
	var titles []string
	for _, line := range strings.Split(page, "\n") {
		if title, ok := strings.CutPrefix(line, ".SH "); ok {
			titles = append(titles, title)
		}
	}
	return titles
}

func TestManPagesHaveExtraSections(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir, fixedDate); err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for name, data := range readTree(t, dir) {
		if strings.HasPrefix(name, "man"+string(filepath.Separator)) {
			pages[filepath.Base(name)] = string(data)
		}
	}
	if len(pages) < 20 {
		t.Fatalf("only %d man pages written", len(pages))
	}
	for name, page := range pages {
		titles := sectionTitles(page)
		exit := slices.Index(titles, "EXIT STATUS")
		if exit < 0 || slices.Index(titles[exit+1:], "EXIT STATUS") >= 0 {
			t.Errorf("%s: want one EXIT STATUS section, sections are %q", name, titles)
			continue
		}
		// man-pages(7) order: after OPTIONS, before EXAMPLE and SEE ALSO.
		if i := slices.Index(titles, "OPTIONS"); i > exit {
			t.Errorf("%s: EXIT STATUS comes before OPTIONS: %q", name, titles)
		}
		if i := slices.Index(titles, "SEE ALSO"); i < exit {
			t.Errorf("%s: EXIT STATUS comes after SEE ALSO: %q", name, titles)
		}
		if !strings.Contains(page, "\n4    a waited\\-for job ended FAILED, CANCELLED or DELETED\n") {
			t.Errorf("%s: EXIT STATUS does not list exit code 4 as a table row", name)
		}
	}

	root := pages["jobctl.1"]
	want := []string{"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "ENVIRONMENT", "FILES", "JOB PROTOCOL", "MEASURED USE", "EXAMPLE", "SEE ALSO"}
	if got := sectionTitles(root); !slices.Equal(got, want) {
		t.Errorf("jobctl.1 sections are %q; want %q", got, want)
	}
	for _, w := range []string{
		"\nJOBCTL_DB       the database when neither \\-\\-db nor \\-\\-db\\-file is given",
		"\n/etc/jobctl/jobctl.env\n",
		"\njobctl:progress N [text]",
		"\nJOBCTL_JOB_ID     the job's id\n",
		`\-\-cancel\-grace`,
		`killed: out of memory, limit 2GiB`,
	} {
		if !strings.Contains(root, w) {
			t.Errorf("jobctl.1 lacks %q", w)
		}
	}
	serve := sectionTitles(pages["jobctl-serve.1"])
	for _, w := range []string{"EXIT STATUS", "FILES", "JOB PROTOCOL", "MEASURED USE"} {
		if !slices.Contains(serve, w) {
			t.Errorf("jobctl-serve.1 has no %s section: %q", w, serve)
		}
	}
	if slices.Contains(sectionTitles(pages["jobctl-submit.1"]), "ENVIRONMENT") {
		t.Error("jobctl-submit.1 repeats jobctl(1)'s ENVIRONMENT")
	}
}

func TestTopicRoff(t *testing.T) {
	text := "A paragraph with --flags\nand a second line.\n\n  0    done\n  .x   a dot\n\n.starts with a dot, 'quoted', back\\slash"
	want := ".PP\nA paragraph with \\-\\-flags\nand a second line.\n" +
		".PP\n.nf\n0    done\n\\&.x   a dot\n.fi\n" +
		".PP\n\\&.starts with a dot, 'quoted', back\\eslash\n"
	if got := topicRoff(text); got != want {
		t.Errorf("topicRoff =\n%s\nwant\n%s", got, want)
	}
}

func TestGenerateRemovesStalePages(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "man", "jobctl-gone.1")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := generate(dir, fixedDate); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the page of a removed command survived: %v", err)
	}
}

func TestSourceDate(t *testing.T) {
	if d, err := sourceDate(""); err != nil || !d.Equal(fixedDate) {
		t.Errorf("sourceDate(\"\") = %v, %v; want the fixed date", d, err)
	}
	if d, err := sourceDate("1700000000"); err != nil || !d.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("sourceDate(1700000000) = %v, %v", d, err)
	}
	if _, err := sourceDate("yesterday"); err == nil {
		t.Error("sourceDate(\"yesterday\") succeeded; want an error")
	}
}
