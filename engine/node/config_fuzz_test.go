package node

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/jobctl/jobctl/engine"
)

// A config file, whatever it holds, loads or is refused without a panic;
// one that loads and passes Validate, as serve --config applies it, gives
// only services a node can offer: a type jobs can name, a command, a
// finite load and a positive timeout.
func FuzzLoadConfigFile(f *testing.F) {
	for _, s := range []string{
		"db: sqlite:/var/lib/jobctl/jobctl.db\n",
		"services:\n  encode:\n    command: ffmpeg -i in.mp4 out.webm\n    load: 2\n    timeout: 1h\n",
		"services:\n  backup:\n    command: [/usr/bin/backup, --full]\n",
		"services:\n  x:\n    command: \"unterminated\n",
		"services:\n  x:\n    command: x\n    load: .inf\n",
		"services:\n  x:\n    command: x\n    load: .nan\n",
		"services:\n  \"\":\n    command: x\n",
		"services:\n  noop:\n    command: x\n",
		"services:\n  x:\n    command: {a: b}\n",
		"services:\n  x:\n    command: [\"\"]\n",
		"services:\n  x:\n    command: x\n    timeout: -1s\n",
		"preferred:\n  transcode:\n    nodes: [big1, big2]\n    threshold: 0.8\n",
		"preferred:\n  t:\n    nodes: []\n",
		"unknown: 1\n", "- a\n- b\n", "", "&a [*a, *a]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fc, err := LoadConfigFile(path)
		if err != nil {
			return
		}
		c := Defaults()
		c.Services, c.Preferred = fc.Services, fc.Preferred
		if c.Validate() != nil {
			return
		}
		for _, s := range c.Services {
			switch {
			case strings.TrimSpace(s.Type) == "" || len([]rune(s.Type)) > engine.MaxNameLength ||
				strings.ContainsFunc(s.Type, unicode.IsControl) || reservedType(s.Type):
				t.Fatalf("%q: service type %q", data, s.Type)
			case len(s.Argv) == 0 || s.Argv[0] == "":
				t.Fatalf("%q: service %q runs %q", data, s.Type, s.Argv)
			case math.IsNaN(s.Load) || math.IsInf(s.Load, 0) || s.Load < 0 || s.Load > engine.MaxJobLoad:
				t.Fatalf("%q: service %q has load %v", data, s.Type, s.Load)
			case s.Timeout < 0 || s.Timeout > engine.MaxJobTimeout:
				t.Fatalf("%q: service %q has timeout %s", data, s.Type, s.Timeout)
			}
		}
	})
}
