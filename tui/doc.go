// Package tui is the `jobctl top` dashboard: a live view of the cluster's
// nodes and jobs, and the keys to steer them.
//
// A root Model holds the screen's state (browsing, filtering, confirming an
// action, reading help, an explanation, a job's detail or its log) and
// small components, each with New, Update, View and SetSize: the header,
// the nodes table, the jobs pane, the help line, the confirm dialog, the
// filter input, the explain view, the detail view and the log view. Data
// arrives only as messages from commands: Snapshot messages from a
// FetchFunc run by a ticking command, and, while a job's detail or log is
// open, Inspection messages from an InspectFunc run at the same ticks.
// Actions run as commands against Actions, which record each change as an
// event naming the operator and the reason typed. Update and View never do
// I/O, and time comes from an injected clock, so the model can be driven
// and rendered in tests as it is.
package tui
