package dbstore

import (
	"strconv"
	"unsafe"
)

// pgArray writes the text of a PostgreSQL array parameter, the form
// array_in reads, element by element into one buffer. lib/pq's array types
// build the same text, but its generic one (for arrays with NULLs) converts
// each element through reflection and a value of its own: for the batched
// transitions, a tenth of a node's CPU.
type pgArray struct {
	b []byte
	// sparse: the array is sent empty when it holds only NULLs
	// (newPGSparse). valued says whether an element is not NULL, and
	// nulls counts those held back until one is.
	sparse, valued bool
	nulls          int
	// size is the room a sparse array makes at its first element: most
	// stay empty, and make none.
	size int
	// ended is the array's text once String ended it.
	ended string
}

// newPGArray starts an array of n elements of about width bytes each.
func newPGArray(n, width int) *pgArray {
	a := &pgArray{size: 2 + n*(width+1)}
	a.open()
	return a
}

// open makes the array's room and writes its opening brace.
func (a *pgArray) open() {
	a.b = make([]byte, 1, a.size)
	a.b[0] = '{'
}

// newPGSparse starts the array of a column of a batch whose rows mostly
// leave it unset (NULL): when every row does, the array is sent empty,
// and unnest, which pads a shorter array with NULLs, gives every row its
// NULL all the same. PostgreSQL then parses none of them, and a NULL
// padded in costs it less than one read from an array. Most columns of a
// batch are unset in every row: the usage of a builtin's run, the node of
// an end, the key, parent, rollback and delay of a new job. Sent so, they
// took about an eighth off the database's time of a bulk insert.
func newPGSparse(n, width int) *pgArray {
	return &pgArray{sparse: true, size: 2 + n*(width+1)}
}

// next starts an element that is not NULL, after the NULLs held back.
func (a *pgArray) next() {
	if a.b == nil {
		a.open()
	}
	for ; a.nulls > 0; a.nulls-- {
		a.separate()
		a.b = append(a.b, "NULL"...)
	}
	a.valued = true
	a.separate()
}

// separate separates an element from the one before.
func (a *pgArray) separate() {
	if len(a.b) > 1 {
		a.b = append(a.b, ',')
	}
}

func (a *pgArray) null() {
	if a.sparse && !a.valued {
		a.nulls++
		return
	}
	a.separate()
	a.b = append(a.b, "NULL"...)
}

func (a *pgArray) int(v int64) {
	a.next()
	a.b = strconv.AppendInt(a.b, v, 10)
}

func (a *pgArray) float(v float64) {
	a.next()
	a.b = strconv.AppendFloat(a.b, v, 'f', -1, 64)
}

func (a *pgArray) bool(v bool) {
	a.next()
	if v {
		a.b = append(a.b, 't')
	} else {
		a.b = append(a.b, 'f')
	}
}

// text writes s quoted, so that no text is read as NULL, with its quotes
// and backslashes escaped.
func (a *pgArray) text(s string) {
	a.next()
	a.b = append(a.b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			a.b = append(a.b, '\\')
		}
		a.b = append(a.b, s[i])
	}
	a.b = append(a.b, '"')
}

// flag writes true for on and NULL for off, which a CASE WHEN reads as
// false: a sparse array of flags mostly off.
func (a *pgArray) flag(on bool) {
	if on {
		a.bool(true)
		return
	}
	a.null()
}

// nonZeroText writes s, or NULL for "".
func (a *pgArray) nonZeroText(s string) {
	if s == "" {
		a.null()
		return
	}
	a.text(s)
}

// nonZeroInt writes v, or NULL for 0.
func (a *pgArray) nonZeroInt(v int64) {
	if v == 0 {
		a.null()
		return
	}
	a.int(v)
}

// nonZeroFloat writes v, or NULL for 0.
func (a *pgArray) nonZeroFloat(v float64) {
	if v == 0 {
		a.null()
		return
	}
	a.float(v)
}

// optInt writes *v, or NULL for nil.
func (a *pgArray) optInt(v *int64) {
	if v == nil {
		a.null()
		return
	}
	a.int(*v)
}

// optFloat writes *v, or NULL for nil.
func (a *pgArray) optFloat(v *float64) {
	if v == nil {
		a.null()
		return
	}
	a.float(*v)
}

// optText writes *s, or NULL for nil.
func (a *pgArray) optText(s *string) {
	if s == nil {
		a.null()
		return
	}
	a.text(*s)
}

// String ends the array: empty for a sparse one of NULLs alone; nothing
// is written to it after. It is a string, not bytes: lib/pq would send
// bytes as bytea. The string is the buffer itself, not a copy, as
// strings.Builder's is: the buffer of an array of a thousand jobs takes
// tens of kilobytes, and lib/pq copies it once more as it sends it.
func (a *pgArray) String() string {
	switch {
	case a.sparse && !a.valued:
		return "{}"
	case a.ended == "":
		a.b = append(a.b, '}')
		a.ended = unsafe.String(unsafe.SliceData(a.b), len(a.b))
	}
	return a.ended
}
