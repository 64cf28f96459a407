package commands

import (
	"fmt"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

// What the store learns of the nodes as it inserts a job tells exactly
// whether the nodes themselves would warn: over clusters of nodes in every
// state, offering the type or not, large or small, taking oversized jobs
// or not, a job surelyRunnable passes gets no warning from the nodes, and
// one it does not pass gets one. The largest ONLINE node offering the type
// decides.
func TestSurelyRunnableAgreesWithTheNodes(t *testing.T) {
	states := []struct {
		state       engine.NodeState
		maintenance bool
	}{{engine.NodeOnline, false}, {engine.NodeOnline, true}, {engine.NodeOffline, false}, {engine.NodeError, false}}
	var shapes []*engine.Node
	for _, st := range states {
		for _, maxLoad := range []float64{0, 2, 4} {
			for _, offers := range []bool{true, false} {
				for _, exceeding := range []bool{true, false} {
					n := &engine.Node{State: st.state, Maintenance: st.maintenance, MaxLoad: maxLoad, MaxJobs: 10,
						AcceptExceeding: exceeding, Services: []engine.NodeService{{Type: "other"}}}
					if st.maintenance {
						n.State = engine.NodeMaintenance // as NodeList shows it
					}
					if offers {
						n.Services = append(n.Services, engine.NodeService{Type: "encode"})
					}
					shapes = append(shapes, n)
				}
			}
		}
	}
	cases := 0
	for i, a := range shapes {
		for _, b := range shapes[i:] {
			for _, nodes := range [][]*engine.Node{nil, {a}, {a, b}} {
				named := make([]*engine.Node, len(nodes))
				for k, n := range nodes {
					c := *n
					c.Name = fmt.Sprintf("n%d", k)
					named[k] = &c
				}
				for _, load := range []float64{0, 1, 3, 5} {
					cases++
					_, sub := engine.SubmitDefaults(named, engine.JobSubmitParams{
						JobInsertParams: engine.JobInsertParams{Type: "encode", Load: load}})
					sure, doubt := surelyRunnable(sub, "encode"), doubtAbout(named, "encode", load)
					if sure && doubt != "" {
						t.Fatalf("load %v on %+v: surely runnable, but the nodes say %q", load, describeNodes(named), doubt)
					}
					if !sure && doubt == "" {
						t.Fatalf("load %v on %+v: not surely runnable, but the nodes see nothing to warn of", load, describeNodes(named))
					}
				}
			}
		}
	}
	t.Logf("%d clusters and loads agree", cases)
}

func describeNodes(nodes []*engine.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = fmt.Sprintf("%s max %v offers %v exceeding %v", n.State, n.MaxLoad, n.Offers("encode"), n.AcceptExceeding)
	}
	return out
}
