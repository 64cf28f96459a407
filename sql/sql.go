// Package sql holds jobctl's database schema and queries as .sql files,
// embedded in the binary.
//
// Migrations are numbered per dialect: migrations/DIALECT/NNN_name.up.sql
// and the matching .down.sql. Queries live one per file in queries/; a file
// of the same name in queries/DIALECT/ replaces the shared one for that
// dialect only, so each query has a single copy wherever the dialects agree.
// Queries are text/template sources: the store fills in the dialect's
// fragments (such as {{now}}) and shared pieces ({{template "job_columns"}}).
package sql

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

//go:embed migrations queries
var files embed.FS

// Migration is one numbered schema change of a dialect.
type Migration struct {
	Version int
	Name    string // e.g. "init"
	Up      string // the SQL that applies it
	Down    string // the SQL that reverts it
}

// Dialects lists the dialects that have migrations, sorted.
func Dialects() []string {
	entries, err := fs.ReadDir(files, "migrations")
	if err != nil {
		// The directory is embedded at build time; it cannot be missing.
		panic(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

func checkDialect(dialect string) error {
	if !slices.Contains(Dialects(), dialect) {
		return fmt.Errorf("no SQL for dialect %q (known: %s)", dialect, strings.Join(Dialects(), ", "))
	}
	return nil
}

var migrationFile = regexp.MustCompile(`^(\d{3})_([a-z0-9_]+)\.(up|down)\.sql$`)

// Migrations returns the dialect's migrations ordered by version. It
// refuses gaps in the numbering and a migration without both halves, so a
// misnamed file cannot be skipped silently.
func Migrations(dialect string) ([]Migration, error) {
	if err := checkDialect(dialect); err != nil {
		return nil, err
	}
	dir := path.Join("migrations", dialect)
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, err
	}
	byVersion := map[int]*Migration{}
	for _, e := range entries {
		m := migrationFile.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("%s/%s: migration files are named NNN_name.up.sql or NNN_name.down.sql", dir, e.Name())
		}
		version, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(files, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		mig := byVersion[version]
		if mig == nil {
			mig = &Migration{Version: version, Name: m[2]}
			byVersion[version] = mig
		}
		if mig.Name != m[2] {
			return nil, fmt.Errorf("%s: migration %03d is named both %q and %q", dir, version, mig.Name, m[2])
		}
		if m[3] == "up" {
			mig.Up = string(body)
		} else {
			mig.Down = string(body)
		}
	}
	out := make([]Migration, 0, len(byVersion))
	for v := 1; v <= len(byVersion); v++ {
		mig := byVersion[v]
		if mig == nil {
			return nil, fmt.Errorf("%s: migration %03d is missing (versions must run 1, 2, 3, … without gaps)", dir, v)
		}
		if strings.TrimSpace(mig.Up) == "" || strings.TrimSpace(mig.Down) == "" {
			return nil, fmt.Errorf("%s: migration %03d_%s needs a non-empty .up.sql and .down.sql", dir, v, mig.Name)
		}
		out = append(out, *mig)
	}
	return out, nil
}

// Queries returns every query and shared fragment for a dialect, keyed by
// file name without ".sql": the shared files of queries/ with the
// dialect's own files of queries/DIALECT/ in place of those of the same name.
func Queries(dialect string) (map[string]string, error) {
	if err := checkDialect(dialect); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, dir := range []string{"queries", path.Join("queries", dialect)} {
		entries, err := fs.ReadDir(files, dir)
		if err != nil {
			if dir != "queries" && errors.Is(err, fs.ErrNotExist) {
				continue // a dialect with no overrides
			}
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			name, ok := strings.CutSuffix(e.Name(), ".sql")
			if !ok {
				return nil, fmt.Errorf("%s/%s: query files end in .sql", dir, e.Name())
			}
			body, err := fs.ReadFile(files, path.Join(dir, e.Name()))
			if err != nil {
				return nil, err
			}
			out[name] = string(body)
		}
	}
	return out, nil
}
