package simulate

import (
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/memstore"
)

// Every store is a cluster a simulation can start from.
var (
	_ ClusterSource = (*dbstore.Store)(nil)
	_ ClusterSource = (*memstore.Store)(nil)
)
