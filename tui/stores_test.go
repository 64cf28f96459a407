package tui

import (
	"github.com/jobctl/jobctl/engine/dbstore"
	"github.com/jobctl/jobctl/engine/memstore"
)

// Every store is the dashboard's source and the store of its actions.
var (
	_ SourceStore = (*dbstore.Store)(nil)
	_ SourceStore = (*memstore.Store)(nil)
	_ ActionStore = (*dbstore.Store)(nil)
	_ ActionStore = (*memstore.Store)(nil)
)
