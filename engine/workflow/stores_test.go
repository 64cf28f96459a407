package workflow

import (
	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/memstore"
)

// Every store, and every transaction of one, is each store a workflow
// works on.
var (
	_ Reader      = (*dbstore.Store)(nil)
	_ Reader      = (*memstore.Store)(nil)
	_ Reader      = engine.TxStore(nil)
	_ CancelStore = (*dbstore.Store)(nil)
	_ CancelStore = (*memstore.Store)(nil)
	_ StepStore   = (*dbstore.Store)(nil)
	_ StepStore   = (*memstore.Store)(nil)
)
