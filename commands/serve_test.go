package commands

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestServeParsesFlagsAndAppliesMachineDefaults(t *testing.T) {
	t.Parallel()
	ios, _, _ := TestIO("")
	var got *ServeOptions
	cmd := NewCmdServe(NewFactory(ios), func(o *ServeOptions) error { got = o; return nil })
	cfg := filepath.Join(t.TempDir(), "services.yaml")
	if err := os.WriteFile(cfg, []byte("services:\n  thumbs:\n    command: /usr/bin/thumbs\n    load: 0.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd.SetArgs([]string{"--exec", "--service", "transcode=/usr/bin/tc --fast", "--config", cfg,
		"--dispatch-interval", "500ms", "--selector", "roundrobin", "--accept-exceeding=false", "--prefer", "transcode=big@0.5",
		"--db-max-conns", "4"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	c := got.Config
	host, _ := os.Hostname()
	if c.Name != host || c.MaxLoad != float64(runtime.NumCPU()) {
		t.Errorf("defaults: node %q max load %v, want %q and %d", c.Name, c.MaxLoad, host, runtime.NumCPU())
	}
	if !c.Exec || c.AcceptExceeding || c.DispatchInterval != 500*time.Millisecond || c.Selector != "roundrobin" {
		t.Errorf("flags not applied: %+v", c)
	}
	if len(c.Preferred) != 1 || c.Preferred[0].Type != "transcode" || c.Preferred[0].Threshold != 0.5 {
		t.Errorf("preferred = %+v", c.Preferred)
	}
	if len(c.Services) != 2 || c.Services[0].Type != "transcode" || c.Services[1].Type != "thumbs" || c.Services[1].Load != 0.5 {
		t.Errorf("services = %+v", c.Services)
	}
	if got.DBMaxConns != 4 {
		t.Errorf("--db-max-conns 4 gave %d", got.DBMaxConns)
	}
}

// Without --db-max-conns a node takes its budget from the DSN's
// pool_max_conns, else the default: the option says none.
func TestServeLeavesTheConnectionBudgetToTheDSN(t *testing.T) {
	t.Parallel()
	ios, _, _ := TestIO("")
	var got *ServeOptions
	cmd := NewCmdServe(NewFactory(ios), func(o *ServeOptions) error { got = o; return nil })
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.DBMaxConns != 0 {
		t.Errorf("no --db-max-conns gave %d, want 0", got.DBMaxConns)
	}
}

func TestServeRefusesBadSettings(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--max-load", "0"},
		{"--max-load", "NaN"},
		{"--max-load", "Inf"},
		{"--selector", "bogus"},
		{"--prefer", "transcode"},
		{"--prefer", "transcode=big@0"},
		{"--max-load-avg", "-1"},
		{"--max-jobs", "0"},
		{"--node", ""},
		{"--service", "transcode"},
		{"--service", "exec=/bin/sh"},
		{"--dispatch-interval", "1s", "--lease-timeout", "1s"},
		{"--config", "/nonexistent/jobctl.yaml"},
		{"--log-level", "loud"},
		{"--db-max-conns", "2"},
		{"--db-max-conns", "1001"},
		{"--db-max-conns", "0"},
		{"--job-user", "no-such-user-of-jobctl"},
		{"--job-user", "root:"},
		{"--dispatch-interval", "soon"},
		{"--reserved-memory", "lots"},
		{"--reserved-memory", "-1GiB"},
		{"--loadavg-file", "/nonexistent/loadavg"},
		{"extra-argument"},
	} {
		ios, _, _ := TestIO("")
		cmd := NewCmdServe(NewFactory(ios), func(*ServeOptions) error { t.Errorf("%v: ran", args); return nil })
		cmd.SetArgs(args)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		var usage *UsageError
		if err == nil {
			t.Errorf("serve %v: accepted", args)
		} else if !errors.As(err, &usage) && args[0] != "--dispatch-interval" && args[0] != "--max-load-avg" &&
			args[0] != "--reserved-memory" && args[0] != "extra-argument" {
			t.Errorf("serve %v: %v is not a usage error", args, err)
		}
	}
}

// Sizes take units, and plain bytes still work.
func TestServeReservedMemoryTakesUnits(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"300MiB": 300 << 20, "2GiB": 2 << 30, "314572800": 314572800, "1.5GB": 1.5e9} {
		ios, _, _ := TestIO("")
		var got *ServeOptions
		cmd := NewCmdServe(NewFactory(ios), func(o *ServeOptions) error { got = o; return nil })
		cmd.SetArgs([]string{"--reserved-memory", in})
		if err := cmd.Execute(); err != nil {
			t.Errorf("--reserved-memory %s: %v", in, err)
			continue
		}
		if got.Config.ReservedMemory != want {
			t.Errorf("--reserved-memory %s = %d bytes; want %d", in, got.Config.ReservedMemory, want)
		}
	}
}

// awaitWriter collects a command's stderr and closes seen once want has
// been written, so a test can wait for a log line instead of for time.
type awaitWriter struct {
	mu   sync.Mutex
	buf  strings.Builder
	want string
	seen chan struct{}
}

func (w *awaitWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.seen != nil && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

func (w *awaitWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestServeLogsTheLoadAverageLimitInForce(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ flag, want string }{
		{"off", "max_load_avg=off"},
		{"0", "max_load_avg=off"},
		{"6.5", "max_load_avg=6.5"},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			t.Parallel()
			ios, _, _ := TestIO("")
			seen := make(chan struct{})
			stderr := &awaitWriter{want: tt.want, seen: seen}
			ios.ErrOut = stderr
			f := NewFactory(ios)
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "jobctl.db")
			f.DSN = func() string { return dsn }
			t.Cleanup(func() { _ = f.Close() })
			cmd := NewCmdServe(f, nil)
			cmd.SetArgs([]string{"--node", "n1", "--listen", "127.0.0.1:0", "--dispatch-interval", "0",
				"--max-load-avg", tt.flag})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- cmd.ExecuteContext(ctx) }()
			select {
			case <-seen:
			case err := <-done:
				cancel()
				t.Fatalf("serve ended before logging %q: %v\n%s", tt.want, err, stderr)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("serve: %v\n%s", err, stderr)
			}
		})
	}
}

// serve --help lists its flags in sections; every flag is in one, so a
// flag added later without a section shows up here.
func TestServeHelpGroupsItsFlags(t *testing.T) {
	t.Parallel()
	ios, stdout, _ := TestIO("")
	root := NewRootCmd(NewFactory(ios), "test")
	root.SetArgs([]string{"serve", "--help"})
	root.SetOut(stdout)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := stdout.String()
	sections := map[string]string{}
	var order []string
	current := ""
	for _, line := range strings.Split(help, "\n") {
		if strings.HasSuffix(line, "lags:") && !strings.HasPrefix(line, " ") {
			current = strings.TrimSuffix(line, ":")
			order = append(order, current)
			continue
		}
		if line == "" {
			current = ""
		}
		if current != "" {
			if f := strings.Fields(line); len(f) > 0 {
				name := f[0]
				if strings.HasPrefix(name, "-") && !strings.HasPrefix(name, "--") { // -h, --help
					name = f[1]
				}
				sections[strings.TrimPrefix(name, "--")] = current
			}
		}
	}
	want := []string{"Node flags", "Dispatch flags", "Limits flags", "TLS flags", "Timing flags", "Flags", "Global Flags"}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("sections %q; want %q\n%s", order, want, help)
	}
	cmd, _, _ := root.Find([]string{"serve"})
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		switch got := sections[f.Name]; {
		case f.Hidden && got != "":
			t.Errorf("hidden --%s is listed under %s", f.Name, got)
		case f.Hidden:
		case f.Name == "help" && got != "Flags":
			t.Errorf("--help is under %q; want the plain Flags last", got)
		case f.Name != "help" && (got == "" || got == "Flags"):
			t.Errorf("--%s is in no section of its own (%q)", f.Name, got)
		}
	})
	for _, s := range []struct{ flag, section string }{
		{"selector", "Dispatch flags"}, {"max-load-avg", "Limits flags"}, {"reserved-memory", "Limits flags"},
		{"tls-cert", "TLS flags"}, {"node-lease", "Timing flags"}, {"exec", "Node flags"}, {"db", "Global Flags"},
	} {
		if sections[s.flag] != s.section {
			t.Errorf("--%s is under %q; want %q", s.flag, sections[s.flag], s.section)
		}
	}
}
