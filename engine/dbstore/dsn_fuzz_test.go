package dbstore

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// Any DSN parses or is refused as invalid input (exit 2), never a panic;
// what parses names a backend and gives its driver something to open.
func FuzzParseDSN(f *testing.F) {
	for _, s := range []string{
		"sqlite:", "sqlite:/var/lib/jobctl/jobctl.db", "sqlite:~/x.db", "sqlite://x", "sqlite::memory:", "sqlite:a?b",
		"postgres://bob:pw@db:5432/jobs?sslmode=disable", "postgresql://db/jobs?pool_max_conns=4", "postgres:///jobs?host=/run/pg",
		"postgres://db/jobs?pool_max_conns=0", "postgres://a b@%zz/x",
		"mysql://root@127.0.0.1:3306/test", "mysql://u:p@h/db?timeout=5s", "mysql://h/", "mysql://h/a/b", "mysql://h/db?bogus=%",
		"nosuchdb:x", "", ":", "x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		tgt, err := parseDSN(dsn)
		if err != nil {
			var de *DSNError
			if !errors.As(err, &de) || !errors.Is(err, engine.ErrInvalid) {
				t.Fatalf("%q: error %T %v is not a *DSNError", dsn, err, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: error of more than one line: %q", dsn, err)
			}
			return
		}
		if tgt.dialect == nil || tgt.driverDSN == "" || tgt.display == "" || tgt.maxConns < 1 {
			t.Fatalf("%q: parsed into %+v", dsn, tgt)
		}
		if (tgt.dialect == sqliteDialect) != (tgt.sqlitePath != "") {
			t.Fatalf("%q: dialect %s with sqlite path %q", dsn, tgt.dialect.name, tgt.sqlitePath)
		}
	})
}

// A password never shows where a DSN is named: not in what a store says it
// is on, not in an error about the DSN.
func FuzzDSNHidesPassword(f *testing.F) {
	for _, c := range [][4]string{
		{"postgres", "bob", "s3cret-pw", "db:5432/jobs?sslmode=disable"},
		{"mysql", "root", "p@ss:w/rd", "127.0.0.1/test"},
		{"postgresql", "u", "pass word", "h/db?pool_max_conns=x"},
		{"mysql", "u", "secret%41", "h/"},
		{"postgres", "u", "hunter22", "%zz/x"},
	} {
		f.Add(c[0], c[1], c[2], c[3])
	}
	f.Fuzz(func(t *testing.T, scheme, user, password, rest string) {
		if scheme != "postgres" && scheme != "postgresql" && scheme != "mysql" {
			return
		}
		// A password short or common enough to occur in the rest of the
		// DSN by chance (or once control characters are escaped) proves
		// nothing.
		if len(password) < 6 || strings.Contains(scheme+user+rest+strconv.Quote(rest), password) {
			return
		}
		// The user and password encoded as a URL needs them; the rest as
		// it comes, so the DSN around them may be anything.
		dsn := func(password string) string {
			return scheme + "://" + url.UserPassword(user, password).String() + "@" + rest
		}
		_, escaped, _ := strings.Cut(url.UserPassword(user, password).String(), ":")
		shown := shownDSN(dsn(password))
		if !strings.Contains(shown, password) && !strings.Contains(shown, escaped) {
			return
		}
		// The rest of the DSN, once escaped, may spell the password by
		// chance ("0 1" shows as "0%201"): only a password that shows
		// where another in its place would not is a leak.
		other := shownDSN(dsn(strings.Repeat("Z", len(password))))
		if !strings.Contains(other, password) && !strings.Contains(other, escaped) {
			t.Fatalf("%q: the password shows in %q", dsn(password), shown)
		}
	})
}

// shownDSN is how jobctl names a DSN: what its store says it is on, or its
// error about the DSN.
func shownDSN(dsn string) string {
	tgt, err := parseDSN(dsn)
	if err != nil {
		return err.Error()
	}
	return tgt.display
}

// DSNs written without encoding their special characters, whose password
// url.Parse puts in a fragment, a port or an opaque part.
func TestDSNErrorHidesUnencodedPassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://#:pw-s3cret@0",
		"postgres://u:pw#s3cret@h/db",
		"postgres://u:pw-s3cret#x@h/db",
		"postgres:u:pw-s3cret@h/db",
		"mysql://u:pw/s3cret@h/db",
		"mysql://u:pw?s3cret@h/db",
	} {
		tgt, err := parseDSN(dsn)
		shown := ""
		if err != nil {
			shown = err.Error()
		} else {
			shown = tgt.display
		}
		if strings.Contains(shown, "s3cret") {
			t.Errorf("%s: the password shows in %q", dsn, shown)
		}
	}
	if _, err := parseDSN("mysql:\n"); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("a DSN with a newline: %q; want a one-line error", err)
	}
}
