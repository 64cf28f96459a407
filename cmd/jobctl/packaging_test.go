package main_test

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const unitFile = "packaging/jobctl.service"

// maxExposure is the most `systemd-analyze security` may rate the shipped
// unit (0 is locked down, 10 unprotected).
const maxExposure = 5.0

// unitSettings reads the [Service] settings of the shipped unit, each
// key with its values in order.
func unitSettings(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	settings := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, v, _ := strings.Cut(line, "=")
			settings[k] = append(settings[k], v)
		}
	}
	return settings
}

// The unit runs jobs as jobctl-job and gives the node exactly the
// capabilities that takes, and no more can ever be had in it.
func TestTheUnitRunsJobsAsTheJobUserWithFewCapabilities(t *testing.T) {
	t.Parallel()
	s := unitSettings(t)
	if got := s["ExecStart"]; len(got) != 1 || !strings.Contains(got[0], "serve --job-user jobctl-job ") {
		t.Errorf("ExecStart = %q, want serve --job-user jobctl-job", got)
	}
	if s["User"][0] != "jobctl" {
		t.Errorf("User = %q, want jobctl", s["User"])
	}
	want := []string{"CAP_CHOWN", "CAP_KILL", "CAP_SETGID", "CAP_SETUID"}
	for _, key := range []string{"AmbientCapabilities", "CapabilityBoundingSet"} {
		got := strings.Fields(strings.Join(s[key], " "))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	for key, value := range map[string]string{"NoNewPrivileges": "yes", "ProtectSystem": "strict", "PrivateTmp": "yes",
		"ProtectHome": "yes", "StateDirectoryMode": "0700", "LoadCredential": "jobctl-db:/etc/jobctl/db",
		// The node measures, and with --enforce limits, each job in a cgroup
		// of its own below the unit's: the cpu and memory controllers are its
		// to hand out, and no more.
		"Delegate": "cpu memory"} {
		if got := s[key]; len(got) != 1 || got[0] != value {
			t.Errorf("%s = %q, want %s", key, got, value)
		}
	}
}

// The shipped unit's exposure, as `systemd-analyze security` rates it.
func TestTheUnitIsHardened(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian: apt-get install systemd); .ci/run installs it and checks the score")
	}
	out, err := exec.Command(analyze, "security", "--offline=true", "--no-pager", unitFile).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for jobctl\.service: (\d+\.\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security gave no overall exposure:\n%s", out)
	}
	score, _ := strconv.ParseFloat(string(m[1]), 64)
	t.Logf("exposure %.1f", score)
	if score > maxExposure {
		t.Errorf("the unit's exposure is %.1f, over %.1f:\n%s", score, maxExposure, out)
	}
}
