package bench

import (
	"context"
	"fmt"
	"sync"

	"github.com/jobctl/jobctl/engine/node"
)

// fleet is the benchmark's own nodes: real node runtimes in this process,
// each on its own HTTP endpoint on the loopback, each a dispatch candidate,
// so whichever holds the lease offers work to the others over HTTP exactly
// as it would to remote nodes.
type fleet struct {
	names []string
	stop  context.CancelFunc
	wg    sync.WaitGroup
	// failed receives the error of a node that stopped on its own.
	failed chan error
}

// nodeConfig is one benchmark node. Its max load equals its max jobs and
// every job has load 1, so one setting sizes it; the load-average gate is
// off, as the benchmark itself loads the machine and would otherwise hold
// its own nodes back.
func nodeConfig(cfg *Config, name string) node.Config {
	c := node.Defaults()
	c.Name = name
	c.Listen = "127.0.0.1:0"
	c.Advertise = ""
	c.MaxJobs = cfg.MaxJobs
	c.MaxLoad = float64(cfg.MaxJobs) * JobLoad
	c.MaxLoadAvg = 0
	c.DispatchInterval = cfg.DispatchInterval
	c.LeaseTTL = 0
	return c
}

// startFleet binds every node's endpoint first, so a bad configuration or a
// bind error stops the run before anything is registered, then runs them.
func startFleet(cfg *Config) (*fleet, error) {
	runtimes := make([]*node.Runtime, cfg.Nodes)
	f := &fleet{failed: make(chan error, cfg.Nodes)}
	for i := range runtimes {
		name := fmt.Sprintf("%s-%d", cfg.NodePrefix, i+1)
		rt, err := node.New(nodeConfig(cfg, name), cfg.Store, cfg.Clock, cfg.Log, node.WithSharedStore())
		if err == nil {
			err = rt.Listen()
		}
		if err != nil {
			return nil, fmt.Errorf("benchmark node %s: %w", name, err)
		}
		runtimes[i] = rt
		f.names = append(f.names, name)
	}
	ctx, stop := context.WithCancel(context.Background())
	f.stop = stop
	for i, rt := range runtimes {
		f.wg.Go(func() {
			err := rt.Run(ctx)
			if ctx.Err() == nil {
				if err == nil {
					err = fmt.Errorf("benchmark node %s stopped", f.names[i])
				}
				f.failed <- err
			}
		})
	}
	return f, nil
}

// shutdown stops every node the way SIGTERM stops `jobctl serve`: no new
// work, the lease handed back, running jobs let finish; it returns once all
// have stopped and gone OFFLINE.
func (f *fleet) shutdown() {
	f.stop()
	f.wg.Wait()
}
