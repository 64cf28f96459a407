package dbstore

import (
	"strings"
	"testing"
)

func TestQueriesLoadForEveryDialect(t *testing.T) {
	for _, d := range []*dialect{sqliteDialect, postgresDialect, mysqlDialect} {
		qs, err := loadQueries(d)
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		for name, q := range qs {
			if strings.Contains(q, "{{") {
				t.Errorf("%s %s: unrendered template: %s", d.name, name, q)
			}
		}
		if !strings.Contains(qs[qJobGet], "finished_at") || !strings.Contains(qs[qDBNow], d.now) {
			t.Errorf("%s: fragments not filled in:\n%s\n%s", d.name, qs[qJobGet], qs[qDBNow])
		}
	}
}

func TestCheckColons(t *testing.T) {
	for q, ok := range map[string]bool{
		"SELECT 1 WHERE id = :id":                 true,
		"SELECT x::text FROM t WHERE a = :_a":     true,
		"SELECT 1 -- note: a comment":             false,
		"SELECT 1 -- unlike :limit\nLIMIT :limit": false,
		"SELECT 1 -- a comment\nWHERE id = :id":   true,
		"SELECT '12:30' WHERE id = :id":           false,
		"SELECT 1 WHERE id = :":                   false,
		"SELECT datetime('now', 'subsec') AS now": true,
	} {
		if err := checkColons(q); (err == nil) != ok {
			t.Errorf("checkColons(%q) = %v, want ok=%v", q, err, ok)
		}
	}
}
