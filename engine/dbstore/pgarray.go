package dbstore

import "strconv"

// pgArray writes the text of a PostgreSQL array parameter, the form
// array_in reads, element by element into one buffer. lib/pq's array types
// build the same text, but its generic one (for arrays with NULLs) converts
// each element through reflection and a value of its own: for the batched
// transitions, a tenth of a node's CPU.
type pgArray struct {
	b []byte
}

// newPGArray starts an array of n elements of about width bytes each.
func newPGArray(n, width int) *pgArray {
	b := make([]byte, 1, 2+n*(width+1))
	b[0] = '{'
	return &pgArray{b: b}
}

// next separates an element from the one before.
func (a *pgArray) next() {
	if len(a.b) > 1 {
		a.b = append(a.b, ',')
	}
}

func (a *pgArray) null() {
	a.next()
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

// optText writes *s, or NULL for nil.
func (a *pgArray) optText(s *string) {
	if s == nil {
		a.null()
		return
	}
	a.text(*s)
}

// String ends the array. It is a string, not bytes: lib/pq would send
// bytes as bytea.
func (a *pgArray) String() string {
	return string(append(a.b, '}'))
}
