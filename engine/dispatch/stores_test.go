package dispatch_test

import (
	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/memstore"
)

// Every store is each store the dispatcher's parts work on.
var (
	_ dispatch.Store             = (*dbstore.Store)(nil)
	_ dispatch.Store             = (*memstore.Store)(nil)
	_ dispatch.HousekeepingStore = (*dbstore.Store)(nil)
	_ dispatch.HousekeepingStore = (*memstore.Store)(nil)
	_ dispatch.LeaseStore        = (*dbstore.Store)(nil)
	_ dispatch.LeaseStore        = (*memstore.Store)(nil)
	_ dispatch.MonitorStore      = (*dbstore.Store)(nil)
	_ dispatch.MonitorStore      = (*memstore.Store)(nil)
	_ dispatch.ExplainStore      = (*dbstore.Store)(nil)
	_ dispatch.ExplainStore      = (*memstore.Store)(nil)
	_ engine.PruneStore          = (*dbstore.Store)(nil)
	_ engine.PruneStore          = (*memstore.Store)(nil)
)
