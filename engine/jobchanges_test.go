package engine

import (
	"context"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/waitfor"
)

func TestJobChangeFeed(t *testing.T) {
	t.Parallel()
	var f JobChangeFeed
	f.Signal() // nobody listens: nothing to do, nothing kept

	ctx, cancel := context.WithCancel(t.Context())
	a, b := f.Subscribe(ctx), f.Subscribe(t.Context())
	select {
	case <-a:
		t.Fatal("a subscriber got a change made before it subscribed")
	default:
	}
	for range 3 {
		f.Signal() // never blocks, though nobody reads
	}
	for name, c := range map[string]<-chan struct{}{"a": a, "b": b} {
		select {
		case <-c:
		default:
			t.Fatalf("subscriber %s got no signal", name)
		}
		select {
		case <-c:
			t.Fatalf("subscriber %s got three signals, want them coalesced into one", name)
		default:
		}
	}

	cancel()
	if !waitfor.Within(10*time.Second, func() bool { return f.Subscribers() == 1 }) {
		t.Fatalf("%d subscribers after one context ended, want 1", f.Subscribers())
	}
	f.Signal()
	select {
	case <-a:
		t.Error("a subscriber whose context ended still gets signals")
	default:
	}
	select {
	case <-b:
	default:
		t.Error("the remaining subscriber got no signal")
	}
}
