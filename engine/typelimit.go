package engine

import (
	"context"
	"fmt"
)

// MaxTypeLimit is the largest cap a type limit takes: it fits every
// backend's 32-bit INT column.
const MaxTypeLimit = 1_000_000_000

// ValidateTypeLimitSet checks a type limit before it is written: the type
// follows the rules of a job's type, and the cap is at least one job (a
// type that must not run at all is held or paused, not limited to 0). It
// returns an *InvalidError naming each problem.
func ValidateTypeLimitSet(p TypeLimitSetParams) error {
	var problems []string
	if problem := NameProblem("type", p.Type, true); problem != "" {
		problems = append(problems, problem)
	}
	if p.MaxRunning < 1 || p.MaxRunning > MaxTypeLimit {
		problems = append(problems, fmt.Sprintf("max running %d is not between 1 and %d", p.MaxRunning, MaxTypeLimit))
	}
	if problems != nil {
		return &InvalidError{What: "type limit", Problems: problems}
	}
	return nil
}

// TypeLimitNotFound is the error of a type that has no limit.
func TypeLimitNotFound(typ string) error { return &NotFoundError{What: "limit of type", ID: typ} }

// TypeLimitLister reads the type limits (Store.TypeLimitList).
type TypeLimitLister interface {
	TypeLimitList(ctx context.Context) ([]TypeLimit, error)
}

// TypeLimitOf is the limit of typ as store lists it, with its running
// jobs; nil when typ has none.
func TypeLimitOf(ctx context.Context, store TypeLimitLister, typ string) (*TypeLimit, error) {
	limits, err := store.TypeLimitList(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range limits {
		if l.Type == typ {
			return &l, nil
		}
	}
	return nil, nil
}
