package schedule

import (
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/memstore"
)

// Every store is a Firer's store.
var (
	_ FireStore = (*dbstore.Store)(nil)
	_ FireStore = (*memstore.Store)(nil)
)
