package main

import (
	"bytes"
	"os"
	"path/filepath"
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
