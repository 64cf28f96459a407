package simulate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// InputError is a workload or node list that cannot be simulated: one line
// saying what is wrong and where.
type InputError struct {
	Source string // the file or flag it came from
	Err    error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("%s: %s", e.Source, strings.ReplaceAll(e.Err.Error(), "\n", "; "))
}

func (e *InputError) Unwrap() error { return e.Err }

// Node defaults, the same as `jobctl serve`'s where it has one.
const (
	DefaultMaxJobs = 200
	DefaultWeight  = 100
	DefaultWarmup  = 10 * time.Minute
)

// DefaultServices are the job types a node offers when its entry names
// none: the builtins every `jobctl serve` runs.
var DefaultServices = []string{engine.TypeNoop, engine.TypeSleep}

// NodeSpec is one simulated node as a nodes file describes it.
type NodeSpec struct {
	Name            string    `yaml:"name"`
	MaxLoad         float64   `yaml:"max_load"`
	MaxJobs         int       `yaml:"max_jobs"`
	Weight          int       `yaml:"weight"`
	Services        []string  `yaml:"services"`
	StartedAgo      Duration  `yaml:"started_ago"`
	Warmup          *Duration `yaml:"warmup"`
	AcceptExceeding *bool     `yaml:"accept_exceeding"`
	// Reported health, fixed for the whole run; zero is unknown and never
	// held against the node.
	LoadAvg float64 `yaml:"load_avg"`
	Cores   int     `yaml:"cpu"`
	Memory  Bytes   `yaml:"memory"`
	// MaxLoadAvg nil is serve's default limit: twice cpu, none without it.
	MaxLoadAvg     *float64 `yaml:"max_load_avg"`
	ReservedMemory Bytes    `yaml:"reserved_memory"`
}

// JobSpec is one job of a workload.
type JobSpec struct {
	// ID names the job in the output; 0 means its 1-based place in the list.
	ID   int64  `yaml:"id"`
	Type string `yaml:"type"` // default sleep
	// Load nil takes the service's configured load, else 1, as submit does.
	Load *float64 `yaml:"load"`
	// Priority orders the queue as submit --priority does (0: the default).
	Priority int `yaml:"priority"`
	// Duration is how long it runs once started; 0 means it never ends.
	Duration Duration `yaml:"duration"`
	SubmitAt Duration `yaml:"submit_at"`
	Parent   int64    `yaml:"parent"`
	Key      string   `yaml:"key"`
	// runningOn names the node a job of a live cluster runs on now; the
	// run starts with it there (FromCluster).
	runningOn string
}

// ReadNodes parses a nodes file (YAML or JSON: a list of NodeSpec) and
// checks it; source names it in errors.
func ReadNodes(r io.Reader, source string) ([]NodeSpec, error) {
	var nodes []NodeSpec
	if err := decodeList(r, &nodes); err != nil {
		return nil, &InputError{Source: source, Err: err}
	}
	if err := CheckNodes(nodes); err != nil {
		return nil, &InputError{Source: source, Err: err}
	}
	return nodes, nil
}

// ReadJobs parses a jobs file (YAML or JSON: a list of JobSpec) and checks
// it; source names it in errors.
func ReadJobs(r io.Reader, source string) ([]JobSpec, error) {
	var jobs []JobSpec
	if err := decodeList(r, &jobs); err != nil {
		return nil, &InputError{Source: source, Err: err}
	}
	if err := CheckJobs(jobs); err != nil {
		return nil, &InputError{Source: source, Err: err}
	}
	return jobs, nil
}

// CheckNodes fills in defaults and refuses nodes that cannot be simulated.
func CheckNodes(nodes []NodeSpec) error {
	if len(nodes) == 0 {
		return errors.New("no nodes")
	}
	seen := map[string]bool{}
	for i := range nodes {
		n := &nodes[i]
		where := fmt.Sprintf("node %d", i+1)
		if n.Name != "" {
			where = fmt.Sprintf("node %q", n.Name)
		}
		switch {
		case strings.TrimSpace(n.Name) == "":
			return fmt.Errorf("%s has no name", where)
		case seen[n.Name]:
			return fmt.Errorf("%s is listed twice", where)
		case !(n.MaxLoad > 0) || math.IsInf(n.MaxLoad, 0):
			return fmt.Errorf("%s: max_load must be a positive number", where)
		case n.MaxJobs < 0:
			return fmt.Errorf("%s: max_jobs must not be negative", where)
		case n.Weight < 0:
			return fmt.Errorf("%s: weight must not be negative", where)
		case n.LoadAvg < 0 || n.Cores < 0 || n.Memory < 0 || (n.MaxLoadAvg != nil && *n.MaxLoadAvg < 0):
			return fmt.Errorf("%s: load_avg, max_load_avg, cpu and memory must not be negative", where)
		}
		seen[n.Name] = true
		if n.MaxJobs == 0 {
			n.MaxJobs = DefaultMaxJobs
		}
		if n.Weight == 0 {
			n.Weight = DefaultWeight
		}
		if len(n.Services) == 0 {
			n.Services = DefaultServices
		}
		if n.Warmup == nil {
			w := Duration(DefaultWarmup)
			n.Warmup = &w
		}
		if n.AcceptExceeding == nil {
			n.AcceptExceeding = engine.Ptr(true)
		}
	}
	return nil
}

// CheckJobs fills in ids and types and refuses a workload that cannot be
// simulated: duplicate ids, or a parent that is not submitted before its
// child.
func CheckJobs(jobs []JobSpec) error {
	index := make(map[int64]int, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		if j.ID == 0 {
			j.ID = int64(i + 1)
		}
		if j.Type == "" {
			j.Type = engine.TypeSleep
		}
		if _, dup := index[j.ID]; dup {
			return fmt.Errorf("job %d is listed twice", j.ID)
		}
		if j.ID < 0 {
			return fmt.Errorf("job %d: id must be positive", j.ID)
		}
		if j.Load != nil && (*j.Load < 0 || math.IsNaN(*j.Load) || *j.Load > engine.MaxJobLoad) {
			return fmt.Errorf("job %d: load %v is not a number between 0 and %g", j.ID, *j.Load, engine.MaxJobLoad)
		}
		if problem := engine.PriorityProblem(j.Priority); problem != "" {
			return fmt.Errorf("job %d: %s", j.ID, problem)
		}
		index[j.ID] = i
	}
	for i, j := range jobs {
		if j.Parent == 0 {
			continue
		}
		p, ok := index[j.Parent]
		switch {
		case !ok:
			return fmt.Errorf("job %d: parent %d is not in the workload", j.ID, j.Parent)
		case jobs[p].SubmitAt > j.SubmitAt || (jobs[p].SubmitAt == j.SubmitAt && p > i):
			return fmt.Errorf("job %d: parent %d must be submitted before it", j.ID, j.Parent)
		}
	}
	return nil
}

// submitOrder is the order jobs reach the store: by submit time, ties in
// list order. Jobs already running are not in it: they are there from the
// start.
func submitOrder(jobs []JobSpec) []int {
	order := make([]int, 0, len(jobs))
	for i := range jobs {
		if jobs[i].runningOn == "" {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return jobs[order[a]].SubmitAt < jobs[order[b]].SubmitAt })
	return order
}
