package commands

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// runHelp runs a jobctl command line that needs no database.
func runHelp(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	ios, out, errOut := TestIO("")
	f := NewFactory(ios)
	t.Cleanup(func() { _ = f.Close() })
	root := NewRootCmd(f, "1.2.3")
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("jobctl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String()
}

func TestHelpTopics(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		topic string
		want  []string
	}{
		{TopicExitCodes, []string{"  0    success", "  2    usage error", "  3    something named was not found", "  4    a waited-for job ended FAILED, CANCELLED or DELETED", "  5    waiting timed out", "  130  interrupted"}},
		{TopicEnvironment, []string{"JOBCTL_DB", "XDG_STATE_HOME", "NO_COLOR", "$XDG_STATE_HOME/jobctl/jobctl.db", "~/.local/state/jobctl/jobctl.db"}},
		{TopicAudit, []string{"USER@HOST", "job ID@NODE", "--reason", "transaction as the change", "jobctl events", "ended_by", "pruned"}},
		{TopicUsage, []string{"cpu.stat usage_usec", "memory.peak", "wait4", "declared load 1, uses 3.2", "1.5", "--enforce", "killed: out of memory, limit 2GiB", "jobctl_job_cpu_seconds"}},
		{TopicJobProtocol, []string{"JSON on stdin", "JOBCTL_JOB_ID", "jobctl:progress N [text]", "jobctl:warning text", "SIGTERM", "SIGKILL", "--cancel-grace", "10 MiB", "FINISHED", "WARNING", "RESTART", "FAILED", "CANCELLED", "8h"}},
	} {
		t.Run(tt.topic, func(t *testing.T) {
			t.Parallel()
			stdout, stderr := runHelp(t, "help", tt.topic)
			if stderr != "" {
				t.Errorf("help %s wrote to stderr: %q", tt.topic, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("help %s lacks %q:\n%s", tt.topic, w, stdout)
				}
			}
			// 75 columns: the man pages set these lines 5 columns further in.
			for i, line := range strings.Split(stdout, "\n") {
				if len([]rune(line)) > 75 {
					t.Errorf("help %s: line %d is wider than 75 columns: %q", tt.topic, i+1, line)
				}
			}
		})
	}
}

func TestHelpListsTopics(t *testing.T) {
	t.Parallel()
	stdout, _ := runHelp(t, "help")
	_, topics, ok := strings.Cut(stdout, "Additional help topics:")
	if !ok {
		t.Fatalf("jobctl help lists no help topics:\n%s", stdout)
	}
	for _, name := range []string{TopicExitCodes, TopicEnvironment, TopicJobProtocol, TopicAudit} {
		if !strings.Contains(topics, "jobctl "+name) {
			t.Errorf("jobctl help does not list the topic %s:\n%s", name, topics)
		}
	}
}

// moduleRoot is the directory of go.mod, one up from this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goFiles parses every non-test Go file under dir.
func goFiles(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != dir {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files[path] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestEnvironmentTopicIsComplete finds every variable the code reads with
// os.Getenv or os.LookupEnv and wants it in `jobctl help environment`, so
// a new one cannot go undocumented.
func TestEnvironmentTopicIsComplete(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	var read []string
	for path, f := range goFiles(t, root) {
		// The man page generator is a build tool, not part of jobctl.
		if strings.HasPrefix(path, filepath.Join(root, "cmd", "gendocs")+string(filepath.Separator)) {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Getenv" && sel.Sel.Name != "LookupEnv") {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "os" {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok {
				t.Errorf("%s: %s reads a variable whose name is not a literal; this test cannot check it", path, sel.Sel.Name)
				return true
			}
			name, _ := strconv.Unquote(lit.Value)
			read = append(read, name)
			return true
		})
	}
	if !slices.Contains(read, "JOBCTL_DB") {
		t.Fatalf("found no os.Getenv(\"JOBCTL_DB\") under %s; the scan is broken (found %v)", root, read)
	}
	stdout, _ := runHelp(t, "help", TopicEnvironment)
	for _, name := range read {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + ` `).MatchString(stdout) {
			t.Errorf("jobctl reads $%s, but help environment does not list it", name)
		}
	}
}

// TestJobProtocolTopicNamesTheJobEnvironment compares the JOBCTL_*
// variables the engine sets for a job with those the topic lists, both
// ways.
func TestJobProtocolTopicNamesTheJobEnvironment(t *testing.T) {
	t.Parallel()
	set := map[string]bool{}
	for _, f := range goFiles(t, filepath.Join(moduleRoot(t), "engine")) {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				if m := regexp.MustCompile(`^(JOBCTL_[A-Z_]+)=$`).FindStringSubmatch(s); m != nil {
					set[m[1]] = true
				}
			}
			return true
		})
	}
	if !set["JOBCTL_JOB_ID"] {
		t.Fatalf("found no \"JOBCTL_JOB_ID=\" in the engine; the scan is broken (found %v)", set)
	}
	stdout, _ := runHelp(t, "help", TopicJobProtocol)
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  (JOBCTL_[A-Z_]+) `).FindAllStringSubmatch(stdout, -1) {
		listed[m[1]] = true
	}
	for name := range set {
		if !listed[name] {
			t.Errorf("a job gets $%s, but help job-protocol does not list it", name)
		}
	}
	for name := range listed {
		if !set[name] {
			t.Errorf("help job-protocol lists $%s, which the engine does not set", name)
		}
	}
}
