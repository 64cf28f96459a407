package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/jobctl/jobctl/engine"
	"go.yaml.in/yaml/v3"
)

// What an operation does when its job did not succeed.
const (
	OnFailureStop     = "stop"     // the workflow ends FAILED (the default)
	OnFailureContinue = "continue" // the next operation runs; the workflow ends WARNING
)

// Spec is a workflow as its file describes it. Its JSON form is kept in
// the root job's payload, so every step reads the same spec.
type Spec struct {
	Name string `json:"name"`
	// Priority is every job's of the workflow, its steps' too (0: the
	// default); an operation may give its own.
	Priority   int         `json:"priority,omitempty"`
	Operations []Operation `json:"operations"`
	// Deprecated says, one line each, where the file uses a field's old
	// name; the workflow is the same as with the new one.
	Deprecated []string `json:"-"`
}

// Operation is one job of a workflow.
type Operation struct {
	Name        string          `json:"name"`
	Type        string          `json:"type"`
	Args        []string        `json:"args,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Load        *float64        `json:"load,omitempty"`     // nil: the service's configured load, else 1
	Priority    int             `json:"priority,omitempty"` // 0: the workflow's
	OnFailure   string          `json:"on_failure"`
	MaxAttempts int             `json:"max_attempts,omitempty"`
	Timeout     engine.Duration `json:"timeout,omitempty"` // 0: the service's configured timeout, else the default
	// Memory is the job's memory limit in bytes; nil: the service's, else none.
	Memory *int64 `json:"memory,omitempty"`
}

// Stops reports whether the workflow ends when this operation fails.
func (o Operation) Stops() bool { return o.OnFailure != OnFailureContinue }

// fileSpec and fileOperation are the YAML shape; unknown fields are
// refused, so a misspelt one is not silently ignored.
type fileSpec struct {
	Name       string          `yaml:"name"`
	Priority   int             `yaml:"priority"`
	Operations []fileOperation `yaml:"operations"`
}

type fileOperation struct {
	Name        string    `yaml:"name"`
	Type        string    `yaml:"type"`
	Args        []string  `yaml:"args"`
	Payload     yaml.Node `yaml:"payload"`
	Load        *float64  `yaml:"load"`
	Priority    int       `yaml:"priority"`
	OnFailure   string    `yaml:"on_failure"`
	MaxAttempts int       `yaml:"max_attempts"`
	RunTimeout  string    `yaml:"run_timeout"`
	Timeout     string    `yaml:"timeout"` // the old name of run_timeout
	Memory      string    `yaml:"memory"`
	line        int
}

// Parse reads a workflow file (YAML; JSON is YAML too) and validates it.
// Any problem is an *engine.InvalidError naming the line where it can.
func Parse(data []byte) (*Spec, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		return nil, invalid(yamlProblem(err)...)
	}
	var fs fileSpec
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	if err := strict.Decode(&fs); err != nil {
		return nil, invalid(yamlProblem(err)...)
	}
	if lines := operationLines(&root); len(lines) == len(fs.Operations) {
		for i := range fs.Operations {
			fs.Operations[i].line = lines[i]
		}
	}
	spec := &Spec{Name: strings.TrimSpace(fs.Name), Priority: fs.Priority}
	var problems []string
	for i, fo := range fs.Operations {
		if fo.Timeout != "" && fo.RunTimeout == "" {
			spec.Deprecated = append(spec.Deprecated, fmt.Sprintf(`%s: "timeout" is deprecated; name the run limit "run_timeout"`, fo.where(i)))
		}
		op, err := fo.operation(i)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		spec.Operations = append(spec.Operations, op)
	}
	if len(problems) > 0 {
		return nil, invalid(problems...)
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return spec, nil
}

// operationLines finds the line of each item of the operations list.
func operationLines(doc *yaml.Node) []int {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "operations" && m.Content[i+1].Kind == yaml.SequenceNode {
			var lines []int
			for _, item := range m.Content[i+1].Content {
				lines = append(lines, item.Line)
			}
			return lines
		}
	}
	return nil
}

// where names the i-th operation of the file, and its line where known.
func (fo fileOperation) where(i int) string {
	if fo.line > 0 {
		return fmt.Sprintf("line %d: operation %d", fo.line, i+1)
	}
	return fmt.Sprintf("operation %d", i+1)
}

func (fo fileOperation) operation(i int) (Operation, error) {
	where := fo.where(i)
	op := Operation{Name: fo.Name, Type: fo.Type, Args: fo.Args, Load: fo.Load, Priority: fo.Priority, OnFailure: fo.OnFailure,
		MaxAttempts: fo.MaxAttempts}
	if fo.Payload.Kind != 0 {
		var v any
		if err := fo.Payload.Decode(&v); err != nil {
			return op, fmt.Errorf("%s: payload: %v", where, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return op, fmt.Errorf("%s: payload cannot be JSON: %v", where, err)
		}
		op.Payload = b
	}
	field, limit := "run_timeout", fo.RunTimeout
	switch {
	case fo.Timeout != "" && fo.RunTimeout != "":
		return op, fmt.Errorf(`%s: "timeout" is the old name of "run_timeout"; give one of them`, where)
	case fo.Timeout != "":
		field, limit = "timeout", fo.Timeout
	}
	if limit != "" {
		d, err := time.ParseDuration(limit)
		if err != nil || d <= 0 {
			return op, fmt.Errorf("%s: %s %q is not a positive duration such as 10m", where, field, limit)
		}
		op.Timeout = engine.Duration(d)
	}
	if fo.Memory != "" {
		mem, err := engine.ParseMemoryLimit(fo.Memory)
		if err != nil {
			return op, fmt.Errorf("%s: memory: %v", where, err)
		}
		op.Memory = &mem
	}
	return op, nil
}

// yamlLine finds "line N: " in the YAML decoder's messages.
var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// unknownField is how the YAML decoder names a field the shape has not.
var unknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)

// wrongKind is the YAML decoder's message for a value of the wrong kind:
// its YAML tag, the value when a scalar, and the Go type it did not fit.
var wrongKind = regexp.MustCompile("cannot unmarshal !!(\\w+) (`[^`]*` )?into (\\S+)")

// yamlKinds and goKinds name the kinds in an operator's words.
var (
	yamlKinds = map[string]string{"seq": "list", "map": "mapping", "str": "text", "int": "number",
		"float": "number", "bool": "true or false", "null": "null"}
	goKinds = map[string]string{"float64": "a number", "int": "a whole number", "string": "text",
		"[]string": "a list of words, such as [echo, hi]", "workflow.fileSpec": "a mapping with name and operations",
		"[]workflow.fileOperation": "a list of operations", "workflow.fileOperation": "an operation (a mapping)"}
)

// yamlProblem turns the YAML decoder's error into lines an operator reads
// without knowing the Go types behind them.
func yamlProblem(err error) []string {
	if errors.Is(err, io.EOF) {
		return []string{"the file is empty; it needs a list of operations"}
	}
	var te *yaml.TypeError
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		m = unknownField.ReplaceAllString(m, "unknown field $1")
		m = wrongKind.ReplaceAllStringFunc(m, func(s string) string {
			sub := wrongKind.FindStringSubmatch(s)
			what := strings.TrimSpace(sub[2])
			if what == "" {
				what = "a " + yamlKinds[sub[1]]
			}
			want, ok := goKinds[sub[3]]
			if !ok {
				want = "what belongs here"
			}
			return what + " is not " + want
		})
		if sub := yamlLine.FindStringSubmatch(m); sub != nil {
			m = "line " + sub[1] + ": " + sub[2]
		}
		out = append(out, m)
	}
	return out
}

func invalid(problems ...string) error {
	return &engine.InvalidError{What: "workflow", Problems: problems}
}

// Validate fills in the defaults (operation names "op N", type exec when
// args are given, on_failure stop) and refuses what could not run:
// no operations, an unknown on_failure, a bad or missing type, a negative
// load, names given twice, or a field a job could not hold.
func (s *Spec) Validate() error {
	var problems []string
	if s.Name == "" {
		s.Name = "workflow"
	}
	if problem := engine.NameProblem("name", s.Name, true); problem != "" {
		problems = append(problems, problem)
	}
	if problem := engine.PriorityProblem(s.Priority); problem != "" {
		problems = append(problems, problem)
	}
	if len(s.Operations) == 0 {
		problems = append(problems, "no operations: list at least one under 'operations:'")
	}
	seen := map[string]int{}
	for i := range s.Operations {
		op := &s.Operations[i]
		where := fmt.Sprintf("operation %d", i+1)
		bad := func(format string, a ...any) { problems = append(problems, where+": "+fmt.Sprintf(format, a...)) }
		op.Name = strings.TrimSpace(op.Name)
		if op.Name == "" {
			op.Name = fmt.Sprintf("op %d", i+1)
		}
		where = fmt.Sprintf("operation %d %q", i+1, op.Name)
		if problem := engine.NameProblem("name", op.Name, true); problem != "" {
			bad("%s", problem)
		}
		if j, dup := seen[op.Name]; dup {
			bad("the name is taken by operation %d; names must differ", j+1)
		} else {
			seen[op.Name] = i
		}
		op.Type = strings.TrimSpace(op.Type)
		if op.Type == "" && len(op.Args) > 0 {
			op.Type = engine.TypeExec
		}
		switch {
		case op.Type == "":
			bad("no type: give 'type:', or 'args:' for an exec job")
		case op.Type == engine.TypeWorkflow:
			bad("type %s cannot be an operation; a workflow's steps are its own", engine.TypeWorkflow)
		case strings.ContainsFunc(op.Type, unicode.IsSpace):
			bad("type %q is not a job type name (no blanks)", op.Type)
		default:
			if problem := engine.NameProblem("type", op.Type, true); problem != "" {
				bad("%s", problem)
			}
		}
		if op.Type == engine.TypeExec && len(op.Args) == 0 {
			bad("an exec operation needs 'args:', the command to run")
		}
		switch op.OnFailure {
		case "":
			op.OnFailure = OnFailureStop
		case OnFailureStop, OnFailureContinue:
		default:
			bad("on_failure %q is neither %s nor %s", op.OnFailure, OnFailureStop, OnFailureContinue)
		}
		if op.Load != nil && (math.IsNaN(*op.Load) || math.IsInf(*op.Load, 0) || *op.Load < 0) {
			bad("load %v is not a number >= 0", *op.Load)
		}
		if op.MaxAttempts < 0 {
			bad("max_attempts %d is negative", op.MaxAttempts)
		}
	}
	if len(problems) > 0 {
		return invalid(problems...)
	}
	// What a job itself refuses (sizes, limits), checked now so a
	// workflow never stops half-way on a job it could not create.
	for i, op := range s.Operations {
		if err := engine.ValidateJobInsert(operationParams(op, 1, nil)); err != nil {
			var ie *engine.InvalidError
			if errors.As(err, &ie) {
				for _, p := range ie.Problems {
					problems = append(problems, fmt.Sprintf("operation %d %q: %s", i+1, op.Name, p))
				}
			} else {
				problems = append(problems, err.Error())
			}
		}
	}
	if len(problems) > 0 {
		return invalid(problems...)
	}
	if b, _ := json.Marshal(rootPayload{Spec: s}); len(b) > engine.MaxPayloadBytes {
		return invalid(fmt.Sprintf("the workflow is larger than %d bytes as JSON", engine.MaxPayloadBytes))
	}
	return nil
}
