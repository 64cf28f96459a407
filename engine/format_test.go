package engine

import "testing"

func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"314572800", 314572800},
		{"300MiB", 300 << 20},
		{" 300 MiB ", 300 << 20},
		{"1.5GiB", 3 << 29},
		{"16GiB", 16 << 30},
		{"2TiB", 2 << 40},
		{"1PiB", 1 << 50},
		{"4KiB", 4096},
		{"512MB", 512e6},
		{"1GB", 1e9},
		{"10KB", 1e4},
		{"1TB", 1e12},
		{"2PB", 2e15},
		{"100B", 100},
	} {
		if got, err := ParseBytes(c.in); err != nil || got != c.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "-1GiB", "lots", "3 apples", "1e30TiB", "NaN", "Inf", "1XiB", "1 GiB GiB"} {
		if got, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d; want an error", in, got)
		}
	}
}
