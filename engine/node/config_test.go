package node

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/jobctl/jobctl/engine/placement"
)

func TestServiceConfiguration(t *testing.T) {
	t.Parallel()
	s, err := ParseServiceFlag(`transcode=/usr/bin/tc --preset "very fast"`)
	if err != nil || s.Type != "transcode" || len(s.Argv) != 3 || s.Argv[2] != "very fast" {
		t.Fatalf("ParseServiceFlag = %+v, %v", s, err)
	}
	for _, bad := range []string{"transcode", "=cmd", "x=", "exec=/bin/true", `x="unclosed`} {
		if _, err := ParseServiceFlag(bad); err == nil {
			t.Errorf("ParseServiceFlag(%q) accepted", bad)
		}
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, "services:\n  transcode:\n    command: [\"/usr/bin/tc\", \"--fast\"]\n    load: 2.5\n    timeout: 1h\n    user: media:video\n    memory: 2GiB\n  thumbs:\n    command: /usr/bin/thumbs -q\n"+
		"preferred:\n  transcode:\n    nodes: [big1, big2]\n    threshold: 0.8\n  thumbs:\n    nodes: [small]\n")
	fc, err := LoadConfigFile(good)
	svcs := fc.Services
	if err != nil || len(svcs) != 2 || svcs[0].Type != "thumbs" || svcs[1].Load != 2.5 || svcs[1].Timeout != time.Hour || len(svcs[0].Argv) != 2 ||
		svcs[1].Memory != 2<<30 || svcs[0].Memory != 0 {
		t.Fatalf("LoadConfigFile = %+v, %v", svcs, err)
	}
	if svcs[1].User != "media:video" || svcs[0].User != "" {
		t.Errorf("service users = %q and %q, want media:video and none", svcs[1].User, svcs[0].User)
	}
	if p := fc.Preferred; len(p) != 2 || p[0].Type != "thumbs" || p[0].Threshold != DefaultPreferThreshold ||
		p[1].Threshold != 0.8 || len(p[1].Nodes) != 2 || p[1].Nodes[1] != "big2" {
		t.Fatalf("preferred = %+v", p)
	}
	for name, body := range map[string]string{
		"unknown-field.yaml": "services:\n  x:\n    command: a\n    lod: 1\n",
		"no-command.yaml":    "services:\n  x:\n    load: 1\n",
		"bad-timeout.yaml":   "services:\n  x:\n    command: a\n    timeout: soon\n",
		"bad-memory.yaml":    "services:\n  x:\n    command: a\n    memory: plenty\n",
		"tiny-memory.yaml":   "services:\n  x:\n    command: a\n    memory: 100KiB\n",
		"builtin.yaml":       "services:\n  sleep:\n    command: a\n",
		"prefer-nobody.yaml": "preferred:\n  x:\n    threshold: 0.5\n",
		"user-no-group.yaml": "services:\n  x:\n    command: a\n    user: 'media:'\n",
		"user-blank.yaml":    "services:\n  x:\n    command: a\n    user: 'me dia'\n",
	} {
		p := filepath.Join(dir, name)
		writeFile(t, p, body)
		if _, err := LoadConfigFile(p); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestPreferFlag(t *testing.T) {
	t.Parallel()
	p, err := ParsePreferFlag("encode=big1, big2@0.75")
	if err != nil || p.Type != "encode" || len(p.Nodes) != 2 || p.Nodes[1] != "big2" || p.Threshold != 0.75 {
		t.Fatalf("ParsePreferFlag = %+v, %v", p, err)
	}
	if p, err := ParsePreferFlag("encode=big1"); err != nil || p.Threshold != DefaultPreferThreshold {
		t.Fatalf("without a threshold: %+v, %v", p, err)
	}
	for _, bad := range []string{"encode", "=big1", "encode=", "encode=@0.5", "encode=big1@lots"} {
		if _, err := ParsePreferFlag(bad); err == nil {
			t.Errorf("ParsePreferFlag(%q) accepted", bad)
		}
	}
	for _, bad := range [][]placement.Preferred{
		{{Type: "encode", Nodes: []string{"a"}, Threshold: 0}},
		{{Type: "encode", Nodes: []string{"a"}, Threshold: 1}, {Type: "encode", Nodes: []string{"b"}, Threshold: 1}},
	} {
		c := Defaults()
		c.Preferred = bad
		if err := c.Validate(); err == nil {
			t.Errorf("preferences %+v accepted", bad)
		}
	}
}
