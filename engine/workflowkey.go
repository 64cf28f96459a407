package engine

import (
	"strconv"
	"strings"
)

// workflowKeyPrefix starts the key every job of one workflow shares, so
// its operations and steps run one after another in the order its steps
// create them.
const workflowKeyPrefix = "workflow:"

// WorkflowKey is the key of the jobs of the workflow whose root step job
// is root.
func WorkflowKey(root int64) string { return workflowKeyPrefix + strconv.FormatInt(root, 10) }

// WorkflowKeyRoot reports the workflow a key belongs to, if it is a
// workflow's key.
func WorkflowKeyRoot(key string) (int64, bool) {
	rest, ok := strings.CutPrefix(key, workflowKeyPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != rest {
		return 0, false
	}
	return id, true
}
