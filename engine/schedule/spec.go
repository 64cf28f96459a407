// Package schedule runs jobctl's schedules: it reads cron expressions
// (github.com/robfig/cron/v3: five fields, or a descriptor such as @hourly
// or @every 5m) in a time zone, and fires due schedules on the lease
// holder, each fire one transaction that creates the job and moves the
// next fire time on, so a failover neither repeats nor drops a fire.
//
// Fire times are judged on the database clock, as the lease is. Fires
// missed while no node held the lease are made up by one job, not one per
// missed time: the next fire time is always the first after the job just
// created.
package schedule

import (
	"fmt"
	"strings"
	"time"
	// Every node reads zones from the same embedded database, so nodes
	// with different or missing system zone files agree on fire times.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"

	"github.com/jobctl/jobctl/engine"
)

// DefaultTZ is the zone of a schedule that names none: the same on every
// node, whatever their local zones.
const DefaultTZ = "UTC"

// parser reads the standard five fields and the descriptors, @every included.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Spec is a parsed cron expression in its zone.
type Spec struct {
	sched cron.Schedule
	loc   *time.Location
}

// Parse reads a cron expression in the zone tz (an IANA name such as
// Europe/Berlin, or UTC). A bad expression or zone, or one that never
// names a time, is an *engine.InvalidError.
func Parse(expr, tz string) (Spec, error) {
	bad := func(format string, a ...any) (Spec, error) {
		return Spec{}, &engine.InvalidError{What: "schedule", Problems: []string{fmt.Sprintf(format, a...)}}
	}
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return bad("cron expression %q names its zone; give the zone on its own", expr)
	}
	if tz == "" || tz == "Local" {
		// Local is each machine's own zone: nodes would disagree.
		return bad("time zone %q is not an IANA zone name such as UTC or Europe/Berlin", tz)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return bad("time zone %q is not an IANA zone name such as UTC or Europe/Berlin", tz)
	}
	sched, err := parser.Parse(expr)
	if err != nil {
		return bad("cron expression %q: %v", expr, err)
	}
	if every, ok := strings.CutPrefix(expr, "@every "); ok {
		// The parser rounds an interval under a second up to one and cuts
		// the fraction off any other: -1s would fire every second.
		d, _ := time.ParseDuration(strings.TrimSpace(every))
		switch {
		case d < time.Second:
			return bad("cron expression %q: the interval must be at least 1s", expr)
		case d%time.Second != 0:
			return bad("cron expression %q: the interval must be whole seconds", expr)
		}
	}
	s := Spec{sched: sched, loc: loc}
	if s.Next(time.Now()).IsZero() {
		return bad("cron expression %q names no time in the next five years", expr)
	}
	return s, nil
}

// Next is the first fire time after t, in UTC; zero when there is none
// within five years. Fields are read as wall-clock times of the zone: a
// time that does not exist on a day (the hour clocks skip forward) does
// not fire that day. A time of day that comes twice (the clocks go back)
// fires once, at its first coming, when the hour field names hours; with
// * as the hour (every hour, every few minutes) it goes on by the clock,
// through the repeated hour too, as cron does.
func (s Spec) Next(t time.Time) time.Time {
	n := s.sched.Next(t.In(s.loc))
	for !n.IsZero() && s.secondComing(n) {
		n = s.sched.Next(n)
	}
	if n.IsZero() {
		return n
	}
	return n.UTC()
}

// cronStar marks a field of a cron.SpecSchedule given as *, as the
// library sets it.
const cronStar = 1 << 63

// secondComing reports whether n, a fire time of a schedule that names its
// hours, shows a wall-clock time its day has shown before: the clocks went
// back by up to two hours (half an hour in some zones) since.
func (s Spec) secondComing(n time.Time) bool {
	spec, ok := s.sched.(*cron.SpecSchedule)
	if !ok || spec.Hour&cronStar != 0 {
		return false
	}
	wall := func(t time.Time) [6]int {
		y, mo, d := t.Date()
		h, mi, sec := t.Clock()
		return [6]int{y, int(mo), d, h, mi, sec}
	}
	for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		if wall(n.Add(-back).In(s.loc)) == wall(n) {
			return true
		}
	}
	return false
}
