package sql

import (
	"slices"
	"strings"
	"testing"
)

func TestDialects(t *testing.T) {
	d := Dialects()
	for _, want := range []string{"postgres", "sqlite"} {
		if !slices.Contains(d, want) {
			t.Errorf("Dialects() = %v, want it to include %s", d, want)
		}
	}
}

// TestMigrationsAgreeAcrossDialects: a version means the same change on
// every backend, so a database's version says the same thing everywhere.
func TestMigrationsAgreeAcrossDialects(t *testing.T) {
	var first []Migration
	for _, d := range Dialects() {
		ms, err := Migrations(d)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if len(ms) == 0 {
			t.Fatalf("%s: no migrations", d)
		}
		for i, m := range ms {
			if m.Version != i+1 {
				t.Errorf("%s: migration %d has version %d", d, i, m.Version)
			}
			if !strings.Contains(m.Up, "CREATE") && !strings.Contains(m.Up, "ALTER") && !strings.Contains(m.Up, "DROP") &&
				!unchangedHere(m.Up) {
				t.Errorf("%s %03d_%s: the up migration changes no schema", d, m.Version, m.Name)
			}
		}
		if first == nil {
			first = ms
			continue
		}
		if len(ms) != len(first) {
			t.Errorf("%s has %d migrations, %s %d", d, len(ms), Dialects()[0], len(first))
			continue
		}
		for i := range ms {
			if ms[i].Name != first[i].Name {
				t.Errorf("%s migration %d is %q, elsewhere %q", d, ms[i].Version, ms[i].Name, first[i].Name)
			}
		}
	}
}

func TestQueriesOverridePerDialect(t *testing.T) {
	sqlite, err := Queries("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := Queries("postgres")
	if err != nil {
		t.Fatal(err)
	}
	if sqlite["job_get"] == "" || sqlite["job_get"] != pg["job_get"] {
		t.Error("a shared query should be the same file for every dialect")
	}
	if sqlite["schema_migrations_create"] == pg["schema_migrations_create"] {
		t.Error("a dialect's own file should replace the shared one")
	}
	if _, ok := sqlite["migrate_tx_lock"]; ok {
		t.Error("postgres's own query leaked into sqlite")
	}
	if _, ok := pg["migrate_tx_lock"]; !ok {
		t.Error("postgres lacks its own migrate_tx_lock")
	}
}

func TestUnknownDialect(t *testing.T) {
	if _, err := Migrations("oracle"); err == nil || !strings.Contains(err.Error(), "sqlite") {
		t.Errorf("Migrations(oracle) = %v, want an error listing the known dialects", err)
	}
	if _, err := Queries("oracle"); err == nil {
		t.Error("Queries(oracle) succeeded")
	}
}

// unchangedHere reports whether a migration is one that changes nothing on
// its dialect, on purpose: its only statement is SELECT 1, which keeps the
// version of a change that other dialects make.
func unchangedHere(up string) bool {
	var stmt []string
	for line := range strings.Lines(up) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "--") {
			stmt = append(stmt, line)
		}
	}
	return strings.Join(stmt, " ") == "SELECT 1;"
}
