package bench

import (
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/memstore"
)

// Every store is a run's store and a feeder's.
var (
	_ runStore    = (*dbstore.Store)(nil)
	_ runStore    = (*memstore.Store)(nil)
	_ jobInserter = (*dbstore.Store)(nil)
	_ jobInserter = (*memstore.Store)(nil)
)
