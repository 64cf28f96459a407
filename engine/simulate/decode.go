package simulate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/jobctl/jobctl/engine"
)

// Duration reads a Go duration ("1m30s") or a number of seconds.
type Duration time.Duration

// UnmarshalYAML accepts "90s", "1m30s" or 90.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs < 0 || math.IsNaN(secs) || secs > math.MaxInt64/1e9 {
			return 0, fmt.Errorf("duration %q is not a number of seconds >= 0", s)
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("duration %q is neither a Go duration such as 1m30s nor seconds >= 0", s)
	}
	return v, nil
}

// Bytes reads a number of bytes, optionally with a unit: 17179869184,
// "16GiB", "512MB".
type Bytes int64

// UnmarshalYAML accepts a byte count with an optional unit (engine.ParseBytes).
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error {
	v, err := engine.ParseBytes(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: memory %q is not a byte count such as 17179869184 or 16GiB", n.Line, n.Value)
	}
	*b = Bytes(v)
	return nil
}

// decodeList reads one YAML document (JSON is YAML too) into a list,
// refusing unknown fields so a misspelt one is not silently ignored.
func decodeList(r io.Reader, v any) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return errors.New("is empty; expected a list")
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	err = dec.Decode(v)
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, e := range te.Errors {
			msgs[i] = plainYAMLError(e)
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

// yamlUnknownField and yamlNotList match the decoder's messages that name
// Go types, to say them in the file's terms instead.
var (
	yamlUnknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)
	yamlWrongType    = regexp.MustCompile(`cannot unmarshal !!(\w+) (?:` + "`" + `[^` + "`" + `]*` + "`" + ` )?into (\S+)`)
)

func plainYAMLError(msg string) string {
	msg = yamlUnknownField.ReplaceAllString(msg, "unknown field $1")
	if m := yamlWrongType.FindStringSubmatch(msg); m != nil {
		want := "a value of type " + m[2]
		switch {
		case strings.HasPrefix(m[2], "[]"):
			want = "a list"
		case strings.HasPrefix(m[2], "float") || strings.HasPrefix(m[2], "int") || strings.HasPrefix(m[2], "uint"):
			want = "a number"
		case m[2] == "bool":
			want = "true or false"
		case m[2] == "simulate.NodeSpec" || m[2] == "simulate.JobSpec":
			want = "a mapping"
		}
		msg = strings.Replace(msg, m[0], fmt.Sprintf("found a %s where %s belongs", yamlKind(m[1]), want), 1)
	}
	return msg
}

func yamlKind(tag string) string {
	switch tag {
	case "map":
		return "mapping"
	case "seq":
		return "list"
	case "str":
		return "string"
	}
	return tag
}
