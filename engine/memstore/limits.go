package memstore

import (
	"context"
	"slices"
	"strings"

	"github.com/jobctl/jobctl/engine"
)

// TypeLimitSet sets or replaces the limit of p.Type.
func (s *Store) TypeLimitSet(ctx context.Context, p engine.TypeLimitSetParams) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.TypeLimitSet(ctx, p)
}

// TypeLimitSet sets or replaces the limit of p.Type.
func (tx *txStore) TypeLimitSet(_ context.Context, p engine.TypeLimitSetParams) error {
	if err := tx.check(); err != nil {
		return err
	}
	if err := engine.ValidateTypeLimitSet(p); err != nil {
		return err
	}
	s := tx.s
	if s.typeLimits == nil {
		s.typeLimits = map[string]engine.TypeLimit{}
	}
	was, had := s.typeLimits[p.Type]
	s.typeLimits[p.Type] = engine.TypeLimit{Type: p.Type, MaxRunning: p.MaxRunning, UpdatedAt: s.now()}
	tx.onUndo(func() { tx.restoreTypeLimit(p.Type, was, had) })
	return nil
}

// restoreTypeLimit puts back the limit of typ as it was, or none.
func (tx *txStore) restoreTypeLimit(typ string, was engine.TypeLimit, had bool) {
	if had {
		tx.s.typeLimits[typ] = was
	} else {
		delete(tx.s.typeLimits, typ)
	}
}

// TypeLimitList returns every limit with its type's running jobs, ordered
// by type. The running jobs are counted from the load-holding index, which
// holds only the jobs on nodes, however long the queues are.
func (s *Store) TypeLimitList(context.Context) ([]engine.TypeLimit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]engine.TypeLimit, 0, len(s.typeLimits))
	if len(s.typeLimits) == 0 {
		return out, nil
	}
	running := map[string]int{}
	for _, set := range s.jobs.loadHolding {
		set.Ascend(func(id int64) bool {
			if typ := s.jobs.byID[id].Type; s.typeLimits[typ].MaxRunning > 0 {
				running[typ]++
			}
			return true
		})
	}
	for typ, l := range s.typeLimits {
		l.Running = running[typ]
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b engine.TypeLimit) int { return strings.Compare(a.Type, b.Type) })
	return out, nil
}

// TypeLimitDelete removes the limit of typ; a *NotFoundError when it has none.
func (s *Store) TypeLimitDelete(ctx context.Context, typ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.TypeLimitDelete(ctx, typ)
}

// TypeLimitDelete removes the limit of typ; a *NotFoundError when it has none.
func (tx *txStore) TypeLimitDelete(_ context.Context, typ string) error {
	if err := tx.check(); err != nil {
		return err
	}
	was, ok := tx.s.typeLimits[typ]
	if !ok {
		return engine.TypeLimitNotFound(typ)
	}
	delete(tx.s.typeLimits, typ)
	tx.onUndo(func() { tx.restoreTypeLimit(typ, was, true) })
	return nil
}
