package commands

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestLease(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()

	if err := e.run(t, "lease", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var free leaseView
	if err := json.Unmarshal(e.stdout.Bytes(), &free); err != nil {
		t.Fatal(err)
	}
	if free.Owner != "" || free.Valid || free.RemainingSeconds != 0 {
		t.Errorf("fresh lease = %+v; want nobody holding it", free)
	}

	if ok, err := e.store.LeaseAcquire(ctx, "n1", time.Minute); err != nil || !ok.Held() {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	for _, args := range [][]string{{"lease", "-o", "json"}, {"lease", "show", "-o", "json"}} {
		if err := e.run(t, args...); err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		if err := json.Unmarshal(e.stdout.Bytes(), &raw); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"owner", "expires_at", "valid", "remaining_seconds"} {
			if _, ok := raw[f]; !ok {
				t.Errorf("%v lacks %q", args, f)
			}
		}
		rem, _ := raw["remaining_seconds"].(float64)
		if raw["owner"] != "n1" || raw["valid"] != true || rem <= 50 || rem > 60 {
			t.Errorf("%v = %v; want n1 holding it for about a minute", args, raw)
		}
	}

	if err := e.run(t, "lease"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.stdout.String(), "owner\tn1\n") || !strings.Contains(e.stdout.String(), "valid\tyes\n") {
		t.Errorf("lease printed %q", e.stdout.String())
	}

	if err := e.run(t, "lease", "release"); err != nil {
		t.Fatal(err)
	}
	if got := e.stdout.String(); got != "released the lease held by n1\n" {
		t.Errorf("release printed %q", got)
	}
	l, err := e.store.LeaseGet(ctx)
	if err != nil || l.Valid() {
		t.Errorf("lease after release: %+v %v; want it free", l, err)
	}
	if err := e.run(t, "lease", "release"); err != nil {
		t.Fatal(err)
	}
	if got := e.stdout.String(); got != "the lease was not held; nothing to release\n" {
		t.Errorf("second release printed %q", got)
	}
}
