package dbstore

import (
	"reflect"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/jobctl/jobctl/engine"
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
		"SELECT 1 -- the id\nWHERE id = :id":      true,
		"SELECT 1 -- by :id\nWHERE id = :id":      false,
	} {
		if err := checkColons(q); (err == nil) != ok {
			t.Errorf("checkColons(%q) = %v, want ok=%v", q, err, ok)
		}
	}
}

// TestBindQuery: a compiled query has sqlx's positional text and the name
// behind each placeholder, repeats included, so gathering values by name
// binds exactly what sqlx.Named would.
func TestBindQuery(t *testing.T) {
	const text = "UPDATE t SET a = :a, b = CASE WHEN :flag THEN :b ELSE b END, c = 'a::b' WHERE id = :id AND :flag"
	for _, tc := range []struct {
		bindType int
		want     string
	}{
		{sqlx.QUESTION, "UPDATE t SET a = ?, b = CASE WHEN ? THEN ? ELSE b END, c = 'a:b' WHERE id = ? AND ?"},
		{sqlx.DOLLAR, "UPDATE t SET a = $1, b = CASE WHEN $2 THEN $3 ELSE b END, c = 'a:b' WHERE id = $4 AND $5"},
	} {
		bq, err := bindQuery(text, tc.bindType)
		if err != nil {
			t.Fatal(err)
		}
		if bq.text != tc.want {
			t.Errorf("bind type %d: text\n %s\nwant\n %s", tc.bindType, bq.text, tc.want)
		}
		got, err := bq.values(args{"a": 1, "b": 2, "flag": true, "id": 7})
		if err != nil {
			t.Fatal(err)
		}
		_, want, _ := sqlx.Named(text, args{"a": 1, "b": 2, "flag": true, "id": 7})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("values %v, want those of sqlx.Named %v", got, want)
		}
	}
	bq, _ := bindQuery("SELECT :a, :b", sqlx.QUESTION)
	if _, err := bq.values(args{"a": 1}); err == nil || !strings.Contains(err.Error(), ":b") {
		t.Errorf("a missing value: got %v, want an error naming :b", err)
	}
}

// TestJobListShapes: job_list is rendered for every sort field of the
// engine, both directions, brief or full, any status or live ones, each
// ordered by that field's column and then id.
func TestJobListShapes(t *testing.T) {
	for _, d := range []*dialect{sqliteDialect, postgresDialect, mysqlDialect} {
		qs, err := loadQueries(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range engine.JobSortFields {
			for _, desc := range []bool{false, true} {
				for _, live := range []bool{false, true} {
					for _, brief := range []bool{false, true} {
						name := jobListQueryName(engine.JobSort{Field: f.Name, Desc: desc}, live, brief)
						q, ok := qs[name]
						if !ok {
							t.Fatalf("%s: no statement %s", d.name, name)
						}
						order := q[strings.Index(q, "ORDER BY"):]
						if !strings.HasPrefix(order, "ORDER BY "+orderClause(d, f, desc)+"\nLIMIT :limit") ||
							!strings.Contains(order, f.Column) || !strings.HasSuffix(order, "id "+strings.ToUpper(direction(desc))+"\nLIMIT :limit") {
							t.Errorf("%s %s: %s", d.name, name, order)
						}
						if live != strings.Contains(q, "WHERE status IN (:statuses)") {
							t.Errorf("%s %s: live %v, but %s", d.name, name, live, q)
						}
					}
				}
			}
		}
		if q := qs[qJobList]; !strings.HasSuffix(q, "ORDER BY id DESC\nLIMIT :limit") {
			t.Errorf("%s: the unsorted listing reads %s", d.name, q)
		}
	}
}
