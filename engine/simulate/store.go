package simulate

import (
	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
)

// newStore is the store a run keeps its cluster in: a fresh in-memory one
// on the run's virtual clock.
func newStore(clock engine.Clock) *memstore.Store { return memstore.New(clock) }
