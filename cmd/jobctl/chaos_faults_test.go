package main_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Fault kinds the driver injects.
const (
	faultKillHolder = "kill-holder" // SIGKILL the lease holder, restart it at once
	faultKillWorker = "kill-worker" // SIGKILL another node, restart it at once
	faultStop       = "stop"        // SIGSTOP a node for longer than its node lease
	faultPause      = "pause"       // SIGSTOP a node for a third of its node lease: it must lose nothing
	faultCutAll     = "cut-all"     // every node loses the database
	faultCutOne     = "cut-one"     // one node loses the database
	// faultLapse is no fault the driver injects: a node, starved on a
	// busy machine, could not record its liveness within its node lease
	// and stopped its runs itself, as its log says.
	faultLapse = "lapse"
)

// fault is one injected fault. For a kill, Start and End are the moment the
// process was gone; for the others, when the node lost and got back what
// it was denied. Node is "" when the fault hit every node.
type fault struct {
	Kind       string
	Node       string
	Start, End int64 // Unix nanoseconds
}

func (f fault) hits(node string) bool { return f.Node == "" || f.Node == node }

func (f fault) String() string {
	who := f.Node
	if who == "" {
		who = "all nodes"
	}
	if f.Start == f.End {
		return fmt.Sprintf("%s %s at %s", f.Kind, who, nanoClock(f.Start))
	}
	return fmt.Sprintf("%s %s from %s to %s", f.Kind, who, nanoClock(f.Start), nanoClock(f.End))
}

// faultLog is the driver's record of what it did and when.
type faultLog struct {
	mu     sync.Mutex
	faults []fault
}

func (l *faultLog) add(f fault) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.faults = append(l.faults, f)
}

func (l *faultLog) all() []fault {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]fault(nil), l.faults...)
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// chaosDriver injects faults in a fixed cycle until stop is closed or it
// went through the cycle as often as it was told, waiting between faults
// for the cluster to be whole again.
type chaosDriver struct {
	cc        *chaosCluster
	log       *faultLog
	nodeLease time.Duration
	cuts      bool // cut the database (through the proxies) as well
	cycles    int  // times through the cycle before it stops; 0 for no end
	loads     *loadSampler
	lastHit   *chaosNode // the node the last fault hit alone
}

// cycle is the order of the faults.
func (d *chaosDriver) cycle() []string {
	cycle := []string{faultKillHolder, faultKillWorker, faultStop, faultPause}
	if d.cuts {
		cycle = append(cycle, faultCutAll, faultCutOne)
	}
	return cycle
}

func (d *chaosDriver) run(stop <-chan struct{}) {
	cycle := d.cycle()
	for i := 0; d.cycles == 0 || i < d.cycles*len(cycle); {
		d.settle(stop)
		select {
		case <-stop:
			return
		default:
		}
		kind := cycle[i%len(cycle)]
		err := d.inject(kind, i/len(cycle))
		if errors.Is(err, errNoHolder) {
			// The lease changed hands between settling and the fault, as
			// it may under faults: settle again and inject this one then,
			// so that every kind is injected however the run goes.
			d.cc.t.Logf("chaos %s: %s: %v; trying again once the cluster is whole", time.Now().Format("15:04:05.000"), kind, err)
			continue
		}
		if err != nil {
			d.cc.t.Errorf("chaos: %s: %v", kind, err)
		}
		i++
	}
}

// errNoHolder is a fault on the lease holder finding no node holding it.
var errNoHolder = errors.New("no node holds the lease")

// inject runs one fault; round alternates which node a stop or a cut hits.
func (d *chaosDriver) inject(kind string, round int) error {
	cc := d.cc
	holder := d.holder()
	// A long enough outage fences the node: its runs stop, and it is
	// then silent for good reason.
	outage := d.nodeLease + d.nodeLease/2
	switch kind {
	case faultKillHolder:
		if holder == nil {
			return errNoHolder
		}
		return d.kill(kind, holder)
	case faultKillWorker:
		return d.kill(kind, d.busiest(holder))
	case faultStop, faultPause:
		n := d.busiest(holder)
		if round%2 == 1 && holder != nil {
			n = holder
		}
		frozen := outage
		if kind == faultPause {
			frozen = d.nodeLease / 3
		}
		d.lastHit = n
		start := time.Now()
		if err := n.signal(syscall.SIGSTOP); err != nil {
			return err
		}
		cc.t.Logf("chaos %s: SIGSTOP %s (%s)", start.Format("15:04:05.000"), n.name, kind)
		time.Sleep(frozen)
		err := n.signal(syscall.SIGCONT)
		end := time.Now()
		d.log.add(fault{Kind: kind, Node: n.name, Start: start.UnixNano(), End: end.UnixNano()})
		cc.t.Logf("chaos %s: SIGCONT %s", end.Format("15:04:05.000"), n.name)
		return err
	case faultCutAll, faultCutOne:
		victims := cc.nodes
		name := ""
		if kind == faultCutOne {
			n := d.busiest(holder)
			if round%2 == 1 && holder != nil {
				n = holder
			}
			victims, name, d.lastHit = []*chaosNode{n}, n.name, n
		}
		start := time.Now()
		for _, n := range victims {
			n.proxy.Cut()
		}
		cc.t.Logf("chaos %s: database cut for %s", start.Format("15:04:05.000"), fault{Node: name}.who())
		time.Sleep(outage)
		for _, n := range victims {
			n.proxy.Restore()
		}
		end := time.Now()
		d.log.add(fault{Kind: kind, Node: name, Start: start.UnixNano(), End: end.UnixNano()})
		cc.t.Logf("chaos %s: database back for %s", end.Format("15:04:05.000"), fault{Node: name}.who())
	}
	return nil
}

func (f fault) who() string {
	if f.Node == "" {
		return "all nodes"
	}
	return f.Node
}

// kill SIGKILLs the node and restarts it under its name at once.
func (d *chaosDriver) kill(kind string, n *chaosNode) error {
	d.lastHit = n
	if err := n.signal(syscall.SIGKILL); err != nil {
		return err
	}
	at := time.Now()
	d.log.add(fault{Kind: kind, Node: n.name, Start: at.UnixNano(), End: at.UnixNano()})
	d.cc.t.Logf("chaos %s: SIGKILL %s (%s), restarting it", at.Format("15:04:05.000"), n.name, kind)
	if err := d.cc.restart(n, 60*time.Second); err != nil {
		return fmt.Errorf("a node restarted under its name right after a crash must start at once: %v", err)
	}
	d.cc.t.Logf("chaos %s: %s serves again", time.Now().Format("15:04:05.000"), n.name)
	return nil
}

// holder is the node that holds the lease now, or nil.
func (d *chaosDriver) holder() *chaosNode {
	out, err := d.cc.jobctl(10*time.Second, "lease", "-o", "json")
	if err != nil {
		return nil
	}
	var l struct {
		Owner string `json:"owner"`
		Valid bool   `json:"valid"`
	}
	if json.Unmarshal([]byte(out), &l) != nil || !l.Valid {
		return nil
	}
	return d.cc.node(l.Owner)
}

// busiest is the node with the most load now, so that a fault hits running
// jobs, among those other than the holder and the last node hit (while
// another is left), so that faults go round the nodes.
func (d *chaosDriver) busiest(holder *chaosNode) *chaosNode {
	var best *chaosNode
	bestLoad := -1.0
	last := d.loads.latest()
	for _, n := range d.cc.nodes {
		if n == holder || (n == d.lastHit && len(d.cc.nodes) > 2) {
			continue
		}
		if l := last[n.name]; l > bestLoad {
			best, bestLoad = n, l
		}
	}
	return best
}

// settle waits, with a bound, until every node serves, a node holds the
// lease and the cluster has finished some more jobs, so that each fault
// starts from a whole cluster at work.
func (d *chaosDriver) settle(stop <-chan struct{}) {
	deadline := time.Now().Add(60 * time.Second)
	before, _ := d.cc.ended()
	for time.Now().Before(deadline) {
		whole := d.holder() != nil
		for _, n := range d.cc.nodes {
			if !n.alive() {
				d.cc.t.Errorf("chaos %s: node %s died on its own after it started; starting it again", time.Now().Format("15:04:05.000"), n.name)
				if err := d.cc.restart(n, 30*time.Second); err != nil {
					d.cc.t.Errorf("chaos: %v", err)
				}
			}
			whole = whole && n.alive() && d.cc.serving(n)
		}
		ended, err := d.cc.ended()
		if whole && err == nil && ended >= before+chaosProgressBetweenFaults {
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	d.cc.t.Errorf("chaos: the cluster was not whole again (every node ONLINE, the lease held) within 60s of a fault")
}
