package storetest

import (
	"encoding/hex"
	"sync"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

var tokenTests = []subtest{
	{"ClusterTokenStable", testClusterTokenStable},
	{"ClusterTokenConcurrent", testClusterTokenConcurrent},
}

func testClusterTokenStable(t *testing.T, s engine.Store) {
	tok, err := s.ClusterToken(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(tok)
	if err != nil || len(raw) != 32 {
		t.Errorf("token %q: want 32 bytes in hex", tok)
	}
	again, err := s.ClusterToken(t.Context())
	if err != nil || again != tok {
		t.Errorf("second ClusterToken = %q, %v; want the same %q", again, err, tok)
	}
}

// testClusterTokenConcurrent has nodes starting together create the token:
// every one of them gets the same.
func testClusterTokenConcurrent(t *testing.T, s engine.Store) {
	const callers = 8
	var (
		wg       sync.WaitGroup
		startGun = make(chan struct{})
		tokens   = make([]string, callers)
		errs     = make([]error, callers)
	)
	for i := range callers {
		wg.Go(func() {
			<-startGun
			tokens[i], errs[i] = s.ClusterToken(t.Context())
		})
	}
	close(startGun)
	wg.Wait()
	for i := range callers {
		if errs[i] != nil {
			t.Errorf("caller %d: %v", i, errs[i])
		} else if tokens[i] != tokens[0] {
			t.Errorf("caller %d got %q, caller 0 %q", i, tokens[i], tokens[0])
		}
	}
}
