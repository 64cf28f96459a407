package simulate

import (
	"context"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/memstore"
)

// store is the store a run keeps its cluster in: a fresh in-memory one on
// the run's virtual clock. It hands out its stored jobs rather than copies
// (memstore's ShareJobs): neither the run nor the dispatcher changes a job
// it reads, and each of a run's jobs is inserted, started and ended.
type store struct {
	*memstore.Store
	nodes memstore.NodeBuffer
}

func newStore(clock engine.Clock) *store {
	s := &store{Store: memstore.New(clock)}
	s.ShareJobs()
	return s
}

// NodeList lists the nodes into the same room every time. Only the
// dispatcher lists them during a run, once at the start of each round, and
// a round keeps no node past its end, so a run does not copy every node
// afresh for each of its rounds (a million jobs take some hundred thousand
// rounds). What the run keeps of the nodes it reads from Nodes.
func (s *store) NodeList(context.Context) ([]*engine.Node, error) {
	return s.NodeListInto(&s.nodes), nil
}

// Nodes is every node as the store's own NodeList copies it: the caller's
// to keep.
func (s *store) Nodes(ctx context.Context) ([]*engine.Node, error) {
	return s.Store.NodeList(ctx)
}
