package engine_test

import (
	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/memstore"
)

// Every store is each store the operations work on.
var (
	_ engine.Transactor       = (*dbstore.Store)(nil)
	_ engine.Transactor       = (*memstore.Store)(nil)
	_ engine.NodeRegistrar    = (*dbstore.Store)(nil)
	_ engine.NodeRegistrar    = (*memstore.Store)(nil)
	_ engine.NodeRemover      = (*dbstore.Store)(nil)
	_ engine.NodeRemover      = (*memstore.Store)(nil)
	_ engine.MaintenanceStore = (*dbstore.Store)(nil)
	_ engine.MaintenanceStore = (*memstore.Store)(nil)
	_ engine.OutcomeStore     = (*dbstore.Store)(nil)
	_ engine.OutcomeStore     = (*memstore.Store)(nil)
	_ engine.RepairStore      = (*dbstore.Store)(nil)
	_ engine.RepairStore      = (*memstore.Store)(nil)
	_ engine.PruneStore       = (*dbstore.Store)(nil)
	_ engine.PruneStore       = (*memstore.Store)(nil)
	_ engine.RollbackStore    = (*dbstore.Store)(nil)
	_ engine.RollbackStore    = (*memstore.Store)(nil)
	_ engine.SubmitStore      = (*dbstore.Store)(nil)
	_ engine.SubmitStore      = (*memstore.Store)(nil)
	_ engine.TypeLimitLister  = (*dbstore.Store)(nil)
	_ engine.TypeLimitLister  = (*memstore.Store)(nil)
)
