package simulate

import (
	"fmt"

	"github.com/jobctl/jobctl/engine"
)

// resumeRunning puts the jobs a live cluster runs now back on their nodes
// at the run's start, through the handshake a dispatch uses (offered as
// queued, started by the node's acceptance), so the run starts from the
// cluster's load and keys rather than from idle nodes.
func (s *sim) resumeRunning() error {
	for i := range s.cfg.Jobs {
		spec := &s.cfg.Jobs[i]
		if spec.runningOn == "" {
			continue
		}
		var row *engine.Node
		for _, r := range s.rows {
			if r.Name == spec.runningOn {
				row = r
			}
		}
		if row == nil {
			return fmt.Errorf("job %d runs on node %s, which is not simulated", spec.ID, spec.runningOn)
		}
		job, err := s.submit(i)
		if err != nil {
			return err
		}
		res := s.Offer(s.ctx, row, engine.OfferOf(job, engine.LeaseTerm{}))
		if res.Verdict != engine.OfferAccepted {
			return fmt.Errorf("job %d cannot go on running on node %s: %s", spec.ID, row.Name, res.Reason)
		}
		s.resumed++
	}
	return s.err
}
