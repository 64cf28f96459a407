package placement

import (
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"loadfactor", "random", "roundrobin", "lowerweight"} {
		for _, spelled := range []string{name, strings.ToUpper(name), " " + name + " "} {
			s, err := ParseSelector(spelled)
			if err != nil {
				t.Fatalf("ParseSelector(%q): %v", spelled, err)
			}
			if s.Name() != name {
				t.Errorf("ParseSelector(%q).Name() = %q", spelled, s.Name())
			}
		}
	}
	a, _ := ParseSelector("roundrobin")
	b, _ := ParseSelector("roundrobin")
	if a == b {
		t.Errorf("ParseSelector shares state between calls")
	}
	_, err := ParseSelector("fastest")
	want := `unknown selector "fastest" (valid: loadfactor, random, roundrobin, lowerweight)`
	if err == nil || err.Error() != want {
		t.Errorf("ParseSelector(fastest) error = %v, want %q", err, want)
	}
	if _, err := ParseSelector(""); err == nil {
		t.Errorf("ParseSelector(\"\") accepted an empty name")
	}
}
