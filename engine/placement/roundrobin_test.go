package placement

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine"
)

func firsts(s Selector, nodes []*engine.Node, calls int, now time.Time) string {
	var b strings.Builder
	for range calls {
		b.WriteString(s.Order(nil, nodes, now)[0].Name)
	}
	return b.String()
}

func TestRoundRobinNginxSequence(t *testing.T) {
	t.Parallel()
	nodes := []*engine.Node{mk("a", weight(5)), mk("b", weight(1)), mk("c", weight(1))}
	// nginx's smooth weighted round-robin for weights 5, 1, 1.
	const cycle = "aabacaa"
	if got := firsts(NewRoundRobin(), nodes, 14, t0); got != cycle+cycle {
		t.Errorf("sequence = %s, want %s", got, cycle+cycle)
	}
	reversed := slices.Clone(nodes)
	slices.Reverse(reversed)
	if got := firsts(NewRoundRobin(), reversed, 7, t0); got != cycle {
		t.Errorf("sequence with reversed input = %s, want %s", got, cycle)
	}
}

func TestRoundRobinFallbackOrder(t *testing.T) {
	t.Parallel()
	rr := &RoundRobin{} // the zero value works
	nodes := []*engine.Node{mk("c", weight(1)), mk("b", weight(1)), mk("a", weight(5))}
	in := slices.Clone(nodes)
	// After the first pick a has -2, b and c have 1: b and c next, by name.
	if got := names(rr.Order(nil, nodes, t0)); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("order = %v, want [a b c]", got)
	}
	// Second call: a 3-7=-4, b 2, c 2.
	if got := names(rr.Order(nil, nodes, t0)); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("second order = %v, want [a b c]", got)
	}
	// Third: a 1, b 3-7=-4, c 3.
	if got := names(rr.Order(nil, nodes, t0)); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Errorf("third order = %v, want [b c a]", got)
	}
	if !slices.Equal(in, nodes) {
		t.Errorf("Order changed its input")
	}
}

func TestRoundRobinEqualZeroWeightsStillRotate(t *testing.T) {
	t.Parallel()
	nodes := []*engine.Node{mk("a", weight(0)), mk("b", weight(0)), mk("c", weight(0))}
	if got := firsts(NewRoundRobin(), nodes, 6, t0); got != "abcabc" {
		t.Errorf("sequence = %s, want abcabc", got)
	}
}

func TestRoundRobinForgetsDepartedNodes(t *testing.T) {
	t.Parallel()
	rr := NewRoundRobin()
	all := []*engine.Node{mk("a", weight(5)), mk("b", weight(1)), mk("c", weight(1))}
	rr.Order(nil, all, t0)
	rr.Order(nil, all[:2], t0.Add(roundRobinForget)) // c missing, not yet forgotten
	if _, ok := rr.peers["c"]; !ok {
		t.Fatalf("c forgotten too early")
	}
	rr.Order(nil, all[:2], t0.Add(roundRobinForget+time.Second))
	if _, ok := rr.peers["c"]; ok {
		t.Fatalf("c still remembered after %v", roundRobinForget)
	}
	if len(rr.peers) != 2 {
		t.Fatalf("peers = %d, want 2", len(rr.peers))
	}
}

func TestRoundRobinIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	rr := NewRoundRobin()
	nodes := []*engine.Node{mk("a", weight(5)), mk("b", weight(1)), mk("c", weight(1))}
	const workers, callsEach = 4, 7 * 25
	var mu sync.Mutex
	count := map[string]int{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range callsEach {
				n := rr.Order(nil, nodes, t0)[0].Name
				mu.Lock()
				count[n]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Every call is atomic, so whole cycles of 7 picks come out 5/1/1
	// however the calls interleave.
	total := count["a"] + count["b"] + count["c"]
	if total%7 != 0 || count["a"] != total*5/7 || count["b"] != total/7 || count["c"] != total/7 {
		t.Errorf("picks %v over %d calls, want 5:1:1", count, total)
	}
}

func TestRoundRobinWarmUp(t *testing.T) {
	t.Parallel()
	// Two equal nodes, one just started: while it warms up (weight 1
	// against 100) it is picked about once in 101 calls.
	nodes := []*engine.Node{mk("cold", warm(0, time.Hour)), mk("warm")}
	got := firsts(NewRoundRobin(), nodes, 101, t0)
	if n := strings.Count(got, "cold"); n != 1 {
		t.Errorf("cold node picked %d times in 101, want 1", n)
	}
}
