package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// NodeRegistrar is what RegisterNode needs of a store.
type NodeRegistrar interface {
	Now(ctx context.Context) (time.Time, error)
	NodeGet(ctx context.Context, name string) (*Node, error)
	NodeClaim(ctx context.Context, p NodeClaimParams) (*Node, error)
}

// registerAttempts bounds how often RegisterNode judges a row that changed
// between its read and its claim.
const registerAttempts = 3

// RegisterNode inserts a starting node's row, or takes the existing row of
// its name over when it is free (NodeFree): once its holder has been
// silent past its GoneAfter, whatever its state, or before that when the
// holder ran on the same host and p.ProcessGone says it no longer exists.
// The takeover is guarded on what was judged (the holder's process and,
// for a silent holder, its silence), so of two restarts racing for the
// name one wins. A takeover keeps the maintenance flag, so a node an
// operator holds out of dispatch stays out across a restart. A name that
// is not free is an error matching ErrNodeOnline that names the holder's
// host and pid and how long until the name is free.
func RegisterNode(ctx context.Context, s NodeRegistrar, p NodeRegisterParams) (*Node, error) {
	claim := NodeClaimParams{Node: p.Node}
	if err := ValidateNodeClaim(claim); err != nil {
		return nil, err
	}
	var refusal error
	for range registerAttempts {
		n, err := s.NodeClaim(ctx, claim)
		switch {
		case err == nil:
			return n, nil
		case errors.Is(err, ErrNotFound) && claim.Former != nil:
			claim.Former = nil // removed since: insert again
			continue
		case !errors.Is(err, ErrConflict):
			return nil, err
		}
		held, err := s.NodeGet(ctx, p.Node.Name)
		if errors.Is(err, ErrNotFound) {
			claim.Former = nil // removed since: insert again
			continue
		}
		if err != nil {
			return nil, err
		}
		now, err := s.Now(ctx)
		if err != nil {
			return nil, err
		}
		refusal = NodeOnlineError(held, now)
		if claim.Former != nil && !claim.Former.Process.Same(held.Process) {
			// Another process took the name between the judgement and
			// the claim: it is that process's now.
			return nil, refusal
		}
		free, byIdentity := NodeFree(held, p.Node.Process, now, p.ProcessGone)
		if !free {
			return nil, refusal
		}
		claim.Former = &NodeFormer{Process: held.Process}
		if !byIdentity {
			claim.Former.SilentFor = held.GoneAfter()
		}
	}
	if refusal == nil {
		refusal = fmt.Errorf("register node %s: its row kept changing: %w", p.Node.Name, ErrConflict)
	}
	return nil, refusal
}
