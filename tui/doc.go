// Package tui is the `jobctl top` dashboard: a live view of the cluster's
// nodes and jobs, and the keys to steer them.
//
// A root Model holds the screen's state (browsing, filtering, confirming an
// action, reading help or an explanation) and small components, each with
// New, Update, View and SetSize: the header, the nodes table, the jobs pane,
// the help line, the confirm dialog, the filter input and the explain view.
// Data arrives only as Snapshot messages from a FetchFunc run by a ticking
// command, and actions run as commands against Actions; Update and View
// never do I/O, so the model can be driven and rendered in tests as it is.
package tui
