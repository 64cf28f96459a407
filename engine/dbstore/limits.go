package dbstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jobctl/jobctl/engine"
)

// TypeLimitSet sets or replaces the limit of p.Type.
func (s *Store) TypeLimitSet(ctx context.Context, p engine.TypeLimitSetParams) error {
	if err := engine.ValidateTypeLimitSet(p); err != nil {
		return err
	}
	if _, err := s.exec(ctx, s.q, qTypeLimitSet, args{"type": p.Type, "max_running": p.MaxRunning}); err != nil {
		return fmt.Errorf("set the limit of type %s: %w", p.Type, err)
	}
	return nil
}

// TypeLimitList returns every limit with its type's running jobs, ordered
// by type in byte order, which no backend's collation is sure to give.
func (s *Store) TypeLimitList(ctx context.Context) ([]engine.TypeLimit, error) {
	var rows []struct {
		Type       string `db:"type"`
		MaxRunning int    `db:"max_running"`
		UpdatedAt  dbTime `db:"updated_at"`
		Running    int    `db:"running"`
	}
	if err := s.selectRows(ctx, s.withKept(s.q), &rows, qTypeLimitList, nil, false); err != nil {
		return nil, fmt.Errorf("list type limits: %w", err)
	}
	out := make([]engine.TypeLimit, len(rows))
	for i, r := range rows {
		out[i] = engine.TypeLimit{Type: r.Type, MaxRunning: r.MaxRunning, Running: r.Running, UpdatedAt: r.UpdatedAt.Time}
	}
	slices.SortFunc(out, func(a, b engine.TypeLimit) int { return strings.Compare(a.Type, b.Type) })
	return out, nil
}

// TypeLimitDelete removes the limit of typ; a *NotFoundError when it has none.
func (s *Store) TypeLimitDelete(ctx context.Context, typ string) error {
	n, err := s.exec(ctx, s.q, qTypeLimitDelete, args{"type": typ})
	if err != nil {
		return fmt.Errorf("remove the limit of type %s: %w", typ, err)
	}
	if n == 0 {
		return engine.TypeLimitNotFound(typ)
	}
	return nil
}
