package node

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-shellwords"
	"go.yaml.in/yaml/v3"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
	"github.com/jobctl/jobctl/engine/endpoint"
	"github.com/jobctl/jobctl/engine/placement"
)

// Config is everything `jobctl serve` takes.
type Config struct {
	Name              string
	Listen            string // host:port to bind; port 0 picks a free one
	Advertise         string // URL other nodes use; derived from the bound address when empty
	MaxLoad           float64
	MaxJobs           int
	Weight            int
	Warmup            time.Duration
	AcceptExceeding   bool
	Exec              bool // run `exec` jobs: arbitrary commands from job input
	Services          []Service
	Preferred         []placement.Preferred // nodes a job type goes to first, per type
	DispatchInterval  time.Duration         // 0: not a dispatch candidate
	LeaseTTL          time.Duration         // 0: 3 × DispatchInterval
	Retain            time.Duration         // the lease holder prunes jobs ended longer ago; 0: never
	HeartbeatInterval time.Duration
	Selector          string
	PollInterval      time.Duration // how often running jobs are checked for operator requests
	CancelGrace       time.Duration // SIGTERM → SIGKILL
	ShutdownGrace     time.Duration // how long running jobs may finish on shutdown
	MaxLoadAvg        float64       // overloaded above this load average; 0: no limit
	ReservedMemory    int64         // overloaded with less free memory (bytes)
	LogCap            int64         // bytes of log kept per job attempt
	NodeLease         time.Duration // a node silent in the store this long stops its runs
	StateDir          string        // where the node keeps what must outlive it (results not yet recorded)
	PassEnv           []string      // names of the node's environment variables its jobs get
	JobUser           string        // USER[:GROUP] every job process runs as; "": the node's own user
	MetricsAuth       bool          // /metrics asks for the cluster token too
	// Enforce holds each job's process tree, in its own cgroup, to a CPU
	// share from its load and to its memory limit (serve --enforce).
	Enforce bool
	TLS     endpoint.TLS
}

// Service maps a job type to the command that runs it.
type Service struct {
	Type    string
	Argv    []string
	Load    float64       // default load of jobs of this type; 0: 1.0
	Timeout time.Duration // default timeout; 0: engine.DefaultJobTimeout
	User    string        // USER[:GROUP] its jobs run as; "": the node's --job-user
	// Memory is the memory limit, in bytes, of the type's jobs that set
	// none of their own; 0: none.
	Memory int64
}

// Defaults returns the configuration of a node with nothing set.
func Defaults() Config {
	host, _ := os.Hostname()
	return Config{
		Name:              host,
		Listen:            "127.0.0.1:7420",
		MaxLoad:           float64(runtime.NumCPU()),
		MaxJobs:           200,
		Weight:            100,
		Warmup:            10 * time.Minute,
		AcceptExceeding:   true,
		DispatchInterval:  2 * time.Second,
		HeartbeatInterval: 60 * time.Second,
		Selector:          "loadfactor",
		PollInterval:      500 * time.Millisecond,
		CancelGrace:       10 * time.Second,
		ShutdownGrace:     30 * time.Second,
		LogCap:            10 << 20,
		NodeLease:         engine.DefaultNodeLease,
		MaxLoadAvg:        engine.DefaultMaxLoadAvg(runtime.NumCPU()),
	}
}

// Validate reports the first setting that cannot work.
func (c *Config) Validate() error {
	switch {
	case c.Name == "":
		return errors.New("--node must not be empty")
	case c.MaxLoad <= 0 || math.IsNaN(c.MaxLoad) || math.IsInf(c.MaxLoad, 0):
		return fmt.Errorf("--max-load must be a positive number, not %v", c.MaxLoad)
	case c.MaxJobs < 1:
		return fmt.Errorf("--max-jobs must be at least 1, not %d", c.MaxJobs)
	case c.Weight < 1:
		return fmt.Errorf("--weight must be at least 1, not %d", c.Weight)
	case c.DispatchInterval < 0:
		return errors.New("--dispatch-interval must not be negative")
	case c.HeartbeatInterval <= 0:
		return errors.New("--heartbeat-interval must be positive")
	case c.Retain < 0 || (c.Retain > 0 && c.Retain < dispatch.MinRetain):
		return fmt.Errorf("--retain must be 0 (keep every job) or at least %s, not %s", dispatch.MinRetain, c.Retain)
	case c.NodeLease < engine.MinNodeLease:
		return fmt.Errorf("--node-lease must be at least %s, not %s", engine.MinNodeLease, c.NodeLease)
	case c.DispatchInterval > 0 && c.LeaseTTL != 0 && c.LeaseTTL <= c.DispatchInterval:
		// A TTL no longer than the interval lets the lease lapse between renewals.
		return fmt.Errorf("--lease-timeout %s must be longer than --dispatch-interval %s", c.LeaseTTL, c.DispatchInterval)
	}
	if _, err := placement.ParseSelector(c.Selector); err != nil {
		return fmt.Errorf("--selector: %w", err)
	}
	if c.MaxLoadAvg < 0 || math.IsNaN(c.MaxLoadAvg) || math.IsInf(c.MaxLoadAvg, 0) {
		return fmt.Errorf("--max-load-avg must be a number >= 0, not %v", c.MaxLoadAvg)
	}
	if c.ReservedMemory < 0 {
		return fmt.Errorf("--reserved-memory must not be negative")
	}
	if c.PollInterval <= 0 || c.CancelGrace < 0 || c.ShutdownGrace < 0 {
		return errors.New("--poll-interval must be positive, --cancel-grace and --shutdown-grace not negative")
	}
	if _, err := c.TLS.ServerConfig(); err != nil {
		return err
	}
	if _, err := c.TLS.ClientConfig(); err != nil {
		return err
	}
	preferred := map[string]bool{}
	for _, p := range c.Preferred {
		switch {
		case p.Type == "" || len(p.Nodes) == 0:
			return errors.New("--prefer needs a job type and at least one node")
		case !(p.Threshold > 0) || math.IsInf(p.Threshold, 0):
			return fmt.Errorf("--prefer %s: the threshold must be a load factor above 0, not %v", p.Type, p.Threshold)
		case preferred[p.Type]:
			return fmt.Errorf("--prefer %s is given twice", p.Type)
		}
		preferred[p.Type] = true
	}
	seen := map[string]bool{}
	for _, s := range c.Services {
		if seen[s.Type] {
			return fmt.Errorf("service %q is configured twice", s.Type)
		}
		seen[s.Type] = true
	}
	return nil
}

// leaseTTL is the configured TTL or three dispatch intervals.
func (c *Config) leaseTTL() time.Duration {
	if c.LeaseTTL > 0 {
		return c.LeaseTTL
	}
	return 3 * c.DispatchInterval
}

// ParseServiceFlag reads one `--service TYPE=COMMAND`. The command is the
// operator's own configuration, split into words like a shell would but
// never run through one; job arguments are appended as separate words.
func ParseServiceFlag(v string) (Service, error) {
	typ, cmd, ok := strings.Cut(v, "=")
	if !ok || typ == "" || cmd == "" {
		return Service{}, fmt.Errorf("--service %q: want TYPE=COMMAND", v)
	}
	argv, err := shellwords.Parse(cmd)
	if err != nil || len(argv) == 0 {
		return Service{}, fmt.Errorf("--service %q: cannot split the command into words", v)
	}
	if reservedType(typ) {
		return Service{}, fmt.Errorf("--service %q: %q is a built-in type", v, typ)
	}
	return Service{Type: typ, Argv: argv}, nil
}

// DefaultPreferThreshold is the load factor under which a preferred node
// goes first when --prefer names none: while it is not full.
const DefaultPreferThreshold = 1.0

// ParsePreferFlag reads one `--prefer TYPE=NODE[,NODE…][@THRESHOLD]`: jobs of
// TYPE go to the listed nodes first while their load factor is under the
// threshold.
func ParsePreferFlag(v string) (placement.Preferred, error) {
	typ, rest, ok := strings.Cut(v, "=")
	if !ok || typ == "" || rest == "" {
		return placement.Preferred{}, fmt.Errorf("--prefer %q: want TYPE=NODE[,NODE...][@THRESHOLD]", v)
	}
	p := placement.Preferred{Type: typ, Threshold: DefaultPreferThreshold}
	if names, threshold, ok := strings.Cut(rest, "@"); ok {
		f, err := strconv.ParseFloat(threshold, 64)
		if err != nil {
			return placement.Preferred{}, fmt.Errorf("--prefer %q: threshold %q is not a number", v, threshold)
		}
		rest, p.Threshold = names, f
	}
	for _, n := range strings.Split(rest, ",") {
		if n = strings.TrimSpace(n); n != "" {
			p.Nodes = append(p.Nodes, n)
		}
	}
	if len(p.Nodes) == 0 {
		return placement.Preferred{}, fmt.Errorf("--prefer %q: name at least one node", v)
	}
	return p, nil
}

func reservedType(t string) bool {
	return t == engine.TypeNoop || t == engine.TypeSleep || t == engine.TypeExec || t == engine.TypeWorkflow
}

// FileConfig is what a --config file sets.
type FileConfig struct {
	Services  []Service
	Preferred []placement.Preferred
	// DB is the database, used when neither --db nor JOBCTL_DB names one;
	// the same key sets the default database of the user's config file.
	DB string
}

// fileConfig is the --config file:
//
//	db: postgres://jobctl@db/jobctl   # unless --db or JOBCTL_DB is given
//	services:
//	  transcode:
//	    command: ["/usr/local/bin/transcode", "--fast"]   # or one string, split into words
//	    load: 2.5
//	    timeout: 1h
//	    user: media          # USER[:GROUP] its jobs run as, instead of serve --job-user
//	    memory: 2GiB         # limit of its jobs that set none, under serve --enforce
//	preferred:
//	  transcode:
//	    nodes: [big1, big2]
//	    threshold: 0.8      # load factor; default 1 (while not full)
type fileConfig struct {
	DB       string `yaml:"db"`
	Services map[string]struct {
		Command yaml.Node `yaml:"command"`
		Load    float64   `yaml:"load"`
		Timeout string    `yaml:"timeout"`
		User    string    `yaml:"user"`
		Memory  string    `yaml:"memory"`
	} `yaml:"services"`
	Preferred map[string]struct {
		Nodes     []string `yaml:"nodes"`
		Threshold *float64 `yaml:"threshold"`
	} `yaml:"preferred"`
}

// LoadConfigFile reads the services and node preferences of a YAML file.
func LoadConfigFile(path string) (FileConfig, error) {
	var out FileConfig
	data, err := os.ReadFile(path)
	if err != nil {
		return out, err
	}
	var fc fileConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil {
		return out, fmt.Errorf("%s: %w", path, err)
	}
	out.DB = fc.DB
	for typ, sc := range fc.Services {
		if reservedType(typ) {
			return out, fmt.Errorf("%s: service %q is a built-in type", path, typ)
		}
		if problem := engine.NameProblem("the type", typ, true); problem != "" {
			return out, fmt.Errorf("%s: service %q: %s", path, typ, problem)
		}
		s := Service{Type: typ, Load: sc.Load, User: sc.User}
		switch sc.Command.Kind {
		case yaml.ScalarNode:
			s.Argv, err = shellwords.Parse(sc.Command.Value)
		case yaml.SequenceNode:
			err = sc.Command.Decode(&s.Argv)
		default:
			err = errors.New("command must be a string or a list")
		}
		if err == nil && len(s.Argv) > 0 && strings.TrimSpace(s.Argv[0]) == "" {
			err = errors.New("the program to run is empty")
		}
		if err != nil || len(s.Argv) == 0 {
			return out, fmt.Errorf("%s: service %q: a command is required (%v)", path, typ, err)
		}
		// The limits a job of the type is held to, so a service's defaults
		// never make its jobs invalid.
		if !(sc.Load >= 0 && sc.Load <= engine.MaxJobLoad) {
			return out, fmt.Errorf("%s: service %q: load must be a number from 0 to %g", path, typ, engine.MaxJobLoad)
		}
		if sc.Timeout != "" {
			if s.Timeout, err = time.ParseDuration(sc.Timeout); err != nil || s.Timeout <= 0 || s.Timeout > engine.MaxJobTimeout {
				return out, fmt.Errorf("%s: service %q: timeout %q is not a positive duration of at most %s", path, typ, sc.Timeout, engine.MaxJobTimeout)
			}
		}
		if s.User != "" && !validUserSpec(s.User) {
			return out, fmt.Errorf("%s: service %q: user %q: want USER or USER:GROUP", path, typ, s.User)
		}
		if sc.Memory != "" {
			if s.Memory, err = engine.ParseMemoryLimit(sc.Memory); err != nil {
				return out, fmt.Errorf("%s: service %q: memory: %v", path, typ, err)
			}
		}
		out.Services = append(out.Services, s)
	}
	slices.SortFunc(out.Services, func(a, b Service) int { return strings.Compare(a.Type, b.Type) })
	for typ, pc := range fc.Preferred {
		p := placement.Preferred{Type: typ, Nodes: pc.Nodes, Threshold: DefaultPreferThreshold}
		if pc.Threshold != nil {
			p.Threshold = *pc.Threshold
		}
		if len(p.Nodes) == 0 {
			return out, fmt.Errorf("%s: preferred %q: list at least one node", path, typ)
		}
		out.Preferred = append(out.Preferred, p)
	}
	slices.SortFunc(out.Preferred, func(a, b placement.Preferred) int { return strings.Compare(a.Type, b.Type) })
	return out, nil
}
