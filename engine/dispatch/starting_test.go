package dispatch_test

import (
	"context"

	"github.com/jobctl/jobctl/engine"
)

// startingNodes accepts every offer and starts the batch in one
// JobUpdateMany, as a node's acceptance does, without recording anything.
type startingNodes struct{ store engine.Store }

func (n startingNodes) OfferBatch(ctx context.Context, node *engine.Node, offers []engine.DispatchOffer) []engine.OfferResult {
	us := make([]engine.JobUpdate, len(offers))
	for i, o := range offers {
		us[i] = engine.StartOfferUpdate(o, node.Name)
	}
	out := make([]engine.OfferResult, len(offers))
	results, err := n.store.JobUpdateMany(ctx, us)
	for i := range out {
		if err != nil || results[i].Err != nil {
			out[i] = engine.OfferResult{Verdict: engine.OfferGone}
		}
	}
	return out
}
