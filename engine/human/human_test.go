package human

import (
	"math"
	"testing"
	"time"
)

func TestAge(t *testing.T) {
	t.Parallel()
	cases := map[time.Duration]string{
		-time.Second:                    "0s",
		0:                               "0s",
		999 * time.Millisecond:          "0s",
		59 * time.Second:                "59s",
		60 * time.Second:                "1m",
		90 * time.Second:                "1m30s",
		5 * time.Minute:                 "5m",
		9*time.Minute + 59*time.Second:  "9m59s",
		10*time.Minute + 30*time.Second: "10m",
		42*time.Minute + 10*time.Second: "42m",
		2*time.Hour + 5*time.Minute:     "2h5m",
		3 * time.Hour:                   "3h",
		7*time.Hour + 59*time.Minute:    "7h59m",
		8*time.Hour + 30*time.Minute:    "8h",
		30 * time.Hour:                  "30h",
		47*time.Hour + 59*time.Minute:   "47h",
		72 * time.Hour:                  "3d",
		math.MaxInt64:                   "106751d",
	}
	for d, want := range cases {
		if got := Age(d); got != want {
			t.Errorf("Age(%s) = %q; want %q", d, got, want)
		}
	}
}

func TestAgeFitsFiveCellsForTwentySevenYears(t *testing.T) {
	t.Parallel()
	for d := time.Duration(0); d < 27*365*24*time.Hour; d += d/7 + time.Second {
		if got := Age(d); len(got) > 5 {
			t.Fatalf("Age(%s) = %q, %d cells; want at most 5", d, got, len(got))
		}
	}
}

func TestBytes(t *testing.T) {
	t.Parallel()
	const kib, mib, gib, tib = 1 << 10, 1 << 20, 1 << 30, 1 << 40
	cases := map[int64]string{
		-1:                "",
		0:                 "",
		1:                 "1B",
		1023:              "1023B",
		kib:               "1KiB",
		640 * kib:         "640KiB",
		mib - 1:           "1023KiB",
		mib:               "1MiB",
		64 * mib:          "64MiB",
		105*mib + mib/2:   "105MiB",
		gib - 1:           "1023MiB",
		gib:               "1.0GiB",
		gib + gib/2:       "1.5GiB",
		8 * gib:           "8.0GiB",
		22*gib + 3*gib/10: "22.3GiB",
		100*gib - mib:     "100GiB",
		123 * gib:         "123GiB",
		1023 * gib:        "1023GiB",
		3 * tib / 2:       "1.5TiB",
		math.MaxInt64:     "8.0EiB",
	}
	for b, want := range cases {
		if got := Bytes(b); got != want {
			t.Errorf("Bytes(%d) = %q; want %q", b, got, want)
		}
	}
}

func TestBytesFitsSevenCells(t *testing.T) {
	t.Parallel()
	for b := int64(1); b > 0 && b < math.MaxInt64/2; b += b/13 + 1 {
		if got := Bytes(b); len(got) > 7 {
			t.Fatalf("Bytes(%d) = %q, %d cells; want at most 7", b, got, len(got))
		}
	}
}
