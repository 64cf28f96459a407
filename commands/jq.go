package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"
)

// jqFlagUsage is the help line of --jq on every command with -o json.
const jqFlagUsage = "filter the JSON output through a jq `EXPR` (implies -o json); strings print raw, other values as JSON"

// jqValue is the --jq flag. The expression is compiled while flags are
// parsed, so a bad one is a usage error before anything runs; giving it
// selects JSON output.
type jqValue struct {
	o    *outputOptions
	expr string
	code *gojq.Code
}

func (v *jqValue) String() string { return v.expr }
func (v *jqValue) Type() string   { return "expr" }
func (v *jqValue) Set(s string) error {
	if v.o.formatSet && v.o.Format != formatJSON {
		return fmt.Errorf("--jq filters JSON; it cannot be combined with -o %s", v.o.Format)
	}
	q, err := gojq.Parse(s)
	if err != nil {
		return fmt.Errorf("not a jq expression: %v", err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return fmt.Errorf("not a jq expression: %v", err)
	}
	v.expr, v.code = s, code
	v.o.Format = formatJSON
	v.o.JQ = s
	return nil
}

// jqWriter is stdout while --jq is in force: writeJSON hands it the values
// to filter, and anything else passes through unchanged.
type jqWriter struct {
	io.Writer
	code     *gojq.Code
	terminal bool
}

// bindJQ points ios.Out at a jqWriter when the command about to run was
// given --jq, and back at the plain stream otherwise, so one set of
// streams serves command after command. It runs before every command.
func bindJQ(ios *IOStreams, cmd *cobra.Command) error {
	if jw, ok := ios.Out.(*jqWriter); ok {
		ios.Out = jw.Writer
	}
	flag := cmd.Flags().Lookup("jq")
	if flag == nil || !flag.Changed {
		return nil
	}
	if q := cmd.Flags().Lookup("quiet"); q != nil && q.Changed && q.Value.String() == "true" {
		return usageErrorf(cmd, "-q and --jq cannot be combined; choose one")
	}
	v, ok := flag.Value.(*jqValue)
	if !ok || v.code == nil {
		return nil
	}
	ios.Out = &jqWriter{Writer: ios.Out, code: v.code, terminal: ios.OutIsTerminal}
	return nil
}

// JQError is a jq expression that failed on the data it was given (not a
// usage error: the same expression may work on other data).
type JQError struct{ Err error }

func (e *JQError) Error() string { return "jq: " + e.Err.Error() }
func (e *JQError) Unwrap() error { return e.Err }

// emit runs the filter on v and prints each result on its own: a string
// raw, any other value as JSON, indented on a terminal and on one line
// when piped, so a script can read one result a line.
func (w *jqWriter) emit(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // ids and counts stay exact integers
	var input any
	if err := dec.Decode(&input); err != nil {
		return err
	}
	var out strings.Builder
	iter := w.code.RunWithContext(context.Background(), input)
	for {
		r, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := r.(error); isErr {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				break
			}
			// What printed before the error is kept, as jq does.
			_, _ = io.WriteString(w.Writer, out.String())
			return &JQError{Err: err}
		}
		if s, isString := r.(string); isString {
			out.WriteString(s)
			out.WriteByte('\n')
			continue
		}
		b, err := gojq.Marshal(r)
		if err != nil {
			return err
		}
		if w.terminal {
			var ind bytes.Buffer
			if json.Indent(&ind, b, "", "  ") == nil {
				b = ind.Bytes()
			}
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	_, err = io.WriteString(w.Writer, out.String())
	return err
}
