package schedule

import (
	"errors"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func mustParse(t *testing.T, expr, tz string) Spec {
	t.Helper()
	s, err := Parse(expr, tz)
	if err != nil {
		t.Fatalf("Parse(%q, %q): %v", expr, tz, err)
	}
	return s
}

func TestNext(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for _, c := range []struct {
		expr, tz string
		after    time.Time
		want     time.Time
	}{
		// @every keeps whole seconds: the first after a late fire is still on the grid.
		{"@every 1s", "UTC", time.Date(2030, 1, 1, 0, 0, 0, 900e6, time.UTC), time.Date(2030, 1, 1, 0, 0, 1, 0, time.UTC)},
		{"@every 1m", "UTC", time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 1, 0, 1, 0, 0, time.UTC)},
		{"@hourly", "UTC", time.Date(2030, 1, 1, 5, 10, 0, 0, time.UTC), time.Date(2030, 1, 1, 6, 0, 0, 0, time.UTC)},
		// Fields are wall-clock times of the zone.
		{"30 2 * * *", "Europe/Berlin", time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC), time.Date(2030, 1, 2, 1, 30, 0, 0, time.UTC)},
		{"30 2 * * *", "Europe/Berlin", time.Date(2030, 7, 1, 12, 0, 0, 0, time.UTC), time.Date(2030, 7, 2, 0, 30, 0, 0, time.UTC)},
		// 02:30 does not exist on the day the clocks go forward: that day is skipped.
		{"30 2 * * *", "Europe/Berlin", time.Date(2030, 3, 30, 12, 0, 0, 0, berlin), time.Date(2030, 4, 1, 2, 30, 0, 0, berlin)},
		// An hourly schedule goes on across the change, one fire an hour of real time.
		{"0 * * * *", "Europe/Berlin", time.Date(2030, 3, 31, 1, 30, 0, 0, berlin), time.Date(2030, 3, 31, 3, 0, 0, 0, berlin)},
		// 02:30 comes twice the night the clocks go back: it fires at the
		// first, and next on the day after.
		{"30 2 * * *", "Europe/Berlin", time.Date(2030, 10, 27, 0, 0, 0, 0, berlin), time.Date(2030, 10, 27, 0, 30, 0, 0, time.UTC)},
		{"30 2 * * *", "Europe/Berlin", time.Date(2030, 10, 27, 0, 30, 0, 0, time.UTC), time.Date(2030, 10, 28, 1, 30, 0, 0, time.UTC)},
		{"@daily", "America/Havana", time.Date(2030, 11, 2, 12, 0, 0, 0, time.UTC), time.Date(2030, 11, 3, 4, 0, 0, 0, time.UTC)},
		{"@daily", "America/Havana", time.Date(2030, 11, 3, 4, 0, 0, 0, time.UTC), time.Date(2030, 11, 4, 5, 0, 0, 0, time.UTC)},
		{"15 1,2 * * *", "Europe/Berlin", time.Date(2030, 10, 27, 0, 15, 0, 0, time.UTC), time.Date(2030, 10, 28, 0, 15, 0, 0, time.UTC)},
		// An hourly schedule fires in the repeated hour too: every hour of real time.
		{"0 * * * *", "Europe/Berlin", time.Date(2030, 10, 27, 0, 0, 0, 0, time.UTC), time.Date(2030, 10, 27, 1, 0, 0, 0, time.UTC)},
		{"*/30 * * * *", "Europe/Berlin", time.Date(2030, 10, 27, 0, 30, 0, 0, time.UTC), time.Date(2030, 10, 27, 1, 0, 0, 0, time.UTC)},
		{"0 9 * * 1", "America/New_York", time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 7, 14, 0, 0, 0, time.UTC)},
	} {
		got := mustParse(t, c.expr, c.tz).Next(c.after)
		if !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("Next(%q in %s after %s) = %s, want %s in UTC", c.expr, c.tz, c.after, got, c.want.UTC())
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range [][2]string{
		{"61 * * * *", "UTC"},
		{"* * * *", "UTC"},
		{"@fortnightly", "UTC"},
		{"", "UTC"},
		{"0 0 30 2 *", "UTC"}, // never
		{"CRON_TZ=UTC 0 * * * *", "UTC"},
		{"@hourly", "Mars/Base"},
		{"@hourly", "Local"},
		{"@hourly", ""},
		// The parser would fire each of these every second.
		{"@every -1s", "UTC"},
		{"@every 0s", "UTC"},
		{"@every 1ns", "UTC"},
		{"@every 999ms", "UTC"},
		{"@every 1500ms", "UTC"}, // and this every 1s
	} {
		if _, err := Parse(c[0], c[1]); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("Parse(%q, %q) = %v, want an invalid-input error", c[0], c[1], err)
		}
	}
}
