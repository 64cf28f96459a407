// Package waitfor is how tests wait for something to come true: they poll
// a condition until it holds, and fail when it still does not after a
// generous limit. The limit only bounds a hang on a busy machine; it
// asserts nothing about speed, which benchmarks measure.
package waitfor

import (
	"testing"
	"time"
)

// The first poll comes at once; the pauses between polls then grow by half
// from firstPause up to maxPause, so a condition that comes true soon is
// seen soon and a slow one costs few polls.
const (
	firstPause = 5 * time.Millisecond
	maxPause   = 100 * time.Millisecond
)

// Until polls cond until it holds, and fails the test, naming what it
// waited for, if it does not hold within the limit. Like t.Fatal, it must
// be called from the test's own goroutine.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Within(within, cond) {
		t.Fatalf("waited %s in vain for %s", within, what)
	}
}

// Within polls cond until it holds or the limit passes, and reports
// whether it held: for callers that go on after a wait in vain.
func Within(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	pause := firstPause
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(min(pause, max(time.Until(deadline), time.Millisecond)))
		pause = min(pause+pause/2, maxPause)
	}
	return true
}
