package commands

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// timeDirection says which way a time given without a date or as a bare
// offset points: ahead for a start time, back for a listing's window.
type timeDirection int

const (
	towardFuture timeDirection = iota // submit --at
	towardPast                        // list --since / --until
)

// timeSpecHelp names the forms parseTimeSpec reads, for flag errors.
const (
	futureTimeForms = "RFC 3339 (2030-01-02T15:04:05Z), a date (2030-01-02), a clock time (15:04, the next one) or an offset (+10m)"
	pastTimeForms   = "RFC 3339 (2030-01-02T15:04:05Z), a date (2030-01-02), a clock time (15:04, the last one) or a duration ago (90m, 2d)"
)

// localLayouts are the wall-clock forms read in the local zone.
var localLayouts = []string{
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
}

// parseTimeSpec reads a point in time the way an operator writes one:
// RFC 3339; a date, or a date and time, in the zone loc; a clock time
// HH:MM[:SS] in loc, the next such time toward the future or the last one
// toward the past; or an offset from now: "+10m" toward the future,
// "90m" (or "-90m") ago toward the past. Durations take Go's units plus d
// for days (2d, 1d12h).
func parseTimeSpec(s string, now time.Time, loc *time.Location, dir timeDirection) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, fmt.Errorf("empty time")
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range localLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	if t, ok := clockTime(s, now, loc, dir); ok {
		return t, nil
	}
	switch {
	case dir == towardFuture && strings.HasPrefix(s, "+"):
		if d, err := parseDays(s[1:]); err == nil && d >= 0 {
			return now.Add(d), nil
		}
	case dir == towardPast && !strings.HasPrefix(s, "+"):
		if d, err := parseDays(strings.TrimPrefix(s, "-")); err == nil && d >= 0 {
			return now.Add(-d), nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time")
}

// clockTime reads HH:MM or HH:MM:SS as the nearest such wall-clock time
// in loc in direction dir (today when it fits, else the day next to it).
func clockTime(s string, now time.Time, loc *time.Location, dir timeDirection) (time.Time, bool) {
	var c time.Time
	var err error
	if c, err = time.Parse("15:04:05", s); err != nil {
		if c, err = time.Parse("15:04", s); err != nil {
			return time.Time{}, false
		}
	}
	n := now.In(loc)
	t := time.Date(n.Year(), n.Month(), n.Day(), c.Hour(), c.Minute(), c.Second(), 0, loc)
	switch {
	case dir == towardFuture && !t.After(n):
		t = time.Date(n.Year(), n.Month(), n.Day()+1, c.Hour(), c.Minute(), c.Second(), 0, loc)
	case dir == towardPast && t.After(n):
		t = time.Date(n.Year(), n.Month(), n.Day()-1, c.Hour(), c.Minute(), c.Second(), 0, loc)
	}
	return t, true
}

// parseDays is time.ParseDuration with a leading whole number of days:
// "2d", "1d12h", "90m".
func parseDays(s string) (time.Duration, error) {
	const day = 24 * time.Hour
	var days time.Duration
	if i := strings.IndexByte(s, 'd'); i > 0 {
		// Bounded so that the days, as a Duration, cannot wrap around
		// to a short (or negative) time.
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || n < 0 || n > int64(math.MaxInt64/day) {
			return 0, fmt.Errorf("bad days %q", s[:i])
		}
		days, s = time.Duration(n)*day, s[i+1:]
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d > 0 && days > math.MaxInt64-d {
		return 0, fmt.Errorf("duration too long")
	}
	return days + d, nil
}
