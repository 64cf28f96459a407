package engine

import (
	"errors"
	"fmt"
)

// ErrNotFound matches every *NotFoundError with errors.Is.
var ErrNotFound = errors.New("not found")

// ErrConflict means a guarded update lost a race: the row changed since it
// was read. Callers re-read and decide again; nothing was overwritten.
var ErrConflict = errors.New("changed concurrently")

// NotFoundError names the missing thing, e.g. "job 42 not found".
type NotFoundError struct {
	What string // "job", "node", "schedule"
	ID   string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %s not found", e.What, e.ID) }

// Is lets errors.Is(err, ErrNotFound) match.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// ErrNodeOnline is returned by RegisterNode when a live node already uses
// the name, and by the operations that need a node gone while it is live.
var ErrNodeOnline = errors.New("node name already online")
