package commands

import (
	"runtime/debug"
	"testing"
)

func TestResolveBuildInfo(t *testing.T) {
	t.Parallel()
	stamped := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/jobctl/jobctl", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
	modified := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/jobctl/jobctl", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "fedcba9876543210fedcba9876543210fedcba98"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	tests := []struct {
		name            string
		version, commit string
		info            *debug.BuildInfo
		want            BuildInfo
	}{
		{"linker flags win", "1.2.3", "abc1234", stamped, BuildInfo{"1.2.3", "abc1234"}},
		{"go install of a tagged module", "", "", stamped, BuildInfo{"v1.4.0", "0123456789abcdef0123456789abcdef01234567"}},
		{"build in a checkout with changes", "", "", modified, BuildInfo{"dev", "fedcba9876543210fedcba9876543210fedcba98 (modified)"}},
		{"version from the linker, commit from the stamp", "1.2.3", "", modified, BuildInfo{"1.2.3", "fedcba9876543210fedcba9876543210fedcba98 (modified)"}},
		{"no build information", "", "", nil, BuildInfo{"dev", "unknown"}},
		{"no VCS stamp", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, BuildInfo{"dev", "unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolveBuildInfo(tt.version, tt.commit, tt.info); got != tt.want {
				t.Errorf("resolveBuildInfo(%q, %q) = %+v; want %+v", tt.version, tt.commit, got, tt.want)
			}
		})
	}
}
