// Package workflow runs an ordered list of operations as jobs.
//
// A workflow is started by one job of type workflow, its root (operation
// "start"); the workflow's id is the root's id. Every node runs workflow
// jobs in process (they need the store, which job processes never get).
// Each such job is one step: step 0 is the root, step i judges operation
// i (counted from 1). In one transaction a step reads how its operation
// ended; when it failed and the operation says on_failure: stop, the step
// fails naming it and creates nothing more; otherwise it creates the next
// operation's job and the next step's job, both children of the root and
// both with the workflow's key (engine.WorkflowKey), unless they exist
// already, so a step run again after its node died creates nothing twice.
// The key rule runs a workflow's jobs one at a time in the order they were
// created: the next step waits for its operation to end.
//
// The workflow's state is never stored: Derive reads it from the root and
// its children.
package workflow
