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
	db := postgresServer(t)
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

	// A sparse array writes the NULLs it held back once a value comes,
	// and is empty when none does.
	late := newPGSparse(4, 4)
	late.null()
	late.nonZeroText("")
	late.nonZeroText("x")
	late.null()
	if got, w := readBack(late, "text"), `[null,null,"x",null]`; got != w {
		t.Errorf("sparse text array read back as %s; want %s", got, w)
	}
	flags := newPGSparse(3, 1)
	flags.flag(false)
	flags.flag(true)
	flags.flag(false)
	if got, w := readBack(flags, "boolean"), "[null,true,null]"; got != w {
		t.Errorf("sparse flags read back as %s; want %s", got, w)
	}
	unset := newPGSparse(3, 4)
	for range 3 {
		unset.null()
	}
	if got := unset.String(); got != "{}" {
		t.Errorf("a sparse array of NULLs alone is %s; want {}", got)
	}
	// The array is ended once: asked again, it is the same text.
	if got, w := flags.String(), "{NULL,t,NULL}"; got != w {
		t.Errorf("the sparse flags asked again are %s; want %s", got, w)
	}
}

// TestPGSparseArrayIsNullInEveryRow: unnest gives every row a NULL of an
// empty sparse array beside a full one, as the batched statements read it.
func TestPGSparseArrayIsNullInEveryRow(t *testing.T) {
	t.Parallel()
	db := postgresServer(t)
	ids, unset := newPGArray(3, 1), newPGSparse(3, 4)
	for i := range 3 {
		ids.int(int64(i + 1))
		unset.null()
	}
	var got string
	if err := db.GetContext(t.Context(), &got, `SELECT json_agg(json_build_array(x.id, x.node) ORDER BY x.id)::text
		FROM unnest(CAST($1 AS bigint[]), CAST($2 AS text[])) AS x(id, node)`, ids.String(), unset.String()); err != nil {
		t.Fatal(err)
	}
	if w := "[[1, null], [2, null], [3, null]]"; got != w {
		t.Errorf("rows %s; want %s", got, w)
	}
}

// postgresServer is a connection to the test server itself, for what
// PostgreSQL makes of a parameter.
func postgresServer(t *testing.T) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("postgres", postgresBaseDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
