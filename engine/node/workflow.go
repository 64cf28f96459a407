package node

import (
	"context"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/runner"
	"github.com/jobctl/jobctl/engine/workflow"
)

// workflowStep is the builtin of type workflow: one step of a workflow,
// run against the node's own store. What it judged goes to the job's log;
// a workflow it stops, or a step it cannot take, fails the job with the
// reason as its message: for good when another attempt would meet the
// same (workflow.Final), else to be tried again.
func workflowStep(store engine.Store) runner.Builtin {
	return func(ctx context.Context, s runner.Spec, gate *runner.Gate, out runner.Output) error {
		if err := gate.Wait(ctx); err != nil {
			return err
		}
		res, err := workflow.RunStep(ctx, store, s.JobID, s.Attempt)
		for _, line := range res.Log {
			out.Log(engine.LogOutput, []byte(line+"\n"))
		}
		if err != nil && workflow.Final(err) {
			return runner.Final(err)
		}
		if err != nil {
			return err
		}
		if res.Warning != "" {
			out.Warning(res.Warning)
		}
		return nil
	}
}
