package commands

import (
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/memstore"
)

// Every store is each store the commands' helpers work on.
var (
	_ jobReader        = (*dbstore.Store)(nil)
	_ jobReader        = (*memstore.Store)(nil)
	_ nodeReader       = (*dbstore.Store)(nil)
	_ nodeReader       = (*memstore.Store)(nil)
	_ eventReader      = (*dbstore.Store)(nil)
	_ eventReader      = (*memstore.Store)(nil)
	_ logReader        = (*dbstore.Store)(nil)
	_ logReader        = (*memstore.Store)(nil)
	_ statsReader      = (*dbstore.Store)(nil)
	_ statsReader      = (*memstore.Store)(nil)
	_ maintenanceStore = (*dbstore.Store)(nil)
	_ maintenanceStore = (*memstore.Store)(nil)
	_ nodeRemoveStore  = (*dbstore.Store)(nil)
	_ nodeRemoveStore  = (*memstore.Store)(nil)
	_ submitStore      = (*dbstore.Store)(nil)
	_ submitStore      = (*memstore.Store)(nil)
)
