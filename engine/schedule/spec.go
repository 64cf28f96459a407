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
	s := Spec{sched: sched, loc: loc}
	if s.Next(time.Now()).IsZero() {
		return bad("cron expression %q names no time in the next five years", expr)
	}
	return s, nil
}

// Next is the first fire time after t, in UTC; zero when there is none
// within five years. Fields are read as wall-clock times of the zone: a
// time that does not exist on a day (the hour clocks skip forward) does
// not fire that day, and one that comes twice (the hour clocks go back)
// fires at both.
func (s Spec) Next(t time.Time) time.Time {
	n := s.sched.Next(t.In(s.loc))
	if n.IsZero() {
		return n
	}
	return n.UTC()
}
