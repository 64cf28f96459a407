package dbstore

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/jmoiron/sqlx"
)

// TestPGArrayAsPostgreSQLReadsIt has PostgreSQL read the arrays pgArray
// writes, with every character the text form treats specially, and give
// them back as JSON.
func TestPGArrayAsPostgreSQLReadsIt(t *testing.T) {
	t.Parallel()
	db, err := sqlx.Open("postgres", postgresBaseDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	readBack := func(a *pgArray, typ string) string {
		t.Helper()
		var got string
		if err := db.GetContext(t.Context(), &got, "SELECT array_to_json(CAST($1 AS "+typ+"[]))::text", a.String()); err != nil {
			t.Fatalf("%s array %s: %v", typ, a.String(), err)
		}
		return got
	}
	want := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	texts := []string{"", "NULL", "null", `a"b`, `back\slash`, `\"`, "a,b", "{x}", " padded ", "é ☃", "tab\tnew\nline"}
	a := newPGArray(len(texts)+1, 4)
	var wantTexts []*string
	for i := range texts {
		a.text(texts[i])
		wantTexts = append(wantTexts, &texts[i])
	}
	a.optText(nil)
	wantTexts = append(wantTexts, nil)
	if got := readBack(a, "text"); got != want(wantTexts) {
		t.Errorf("text array read back as %s; want %s", got, want(wantTexts))
	}

	ints := newPGArray(4, 4)
	ints.int(0)
	ints.int(-7)
	ints.null()
	ints.int(math.MaxInt64)
	if got, w := readBack(ints, "bigint"), "[0,-7,null,9223372036854775807]"; got != w {
		t.Errorf("bigint array read back as %s; want %s", got, w)
	}

	floats := newPGArray(3, 4)
	floats.float(0.1)
	floats.float(-2.5e-7)
	floats.null()
	if got, w := readBack(floats, "double precision"), "[0.1,-2.5e-07,null]"; got != w {
		t.Errorf("float array read back as %s; want %s", got, w)
	}

	bools := newPGArray(3, 1)
	bools.bool(true)
	bools.bool(false)
	bools.null()
	if got, w := readBack(bools, "boolean"), "[true,false,null]"; got != w {
		t.Errorf("boolean array read back as %s; want %s", got, w)
	}

	if got := readBack(newPGArray(0, 0), "text"); got != "[]" {
		t.Errorf("empty array read back as %s; want []", got)
	}
}
