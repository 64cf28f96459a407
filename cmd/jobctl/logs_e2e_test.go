package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLogsKeepTheJobsOutputApart: a real node stores the job's output, its
// protocol lines and its own notes apart; logs marks the last two, --raw
// prints the job's bytes alone, and --tail cuts what would be printed.
func TestLogsKeepTheJobsOutputApart(t *testing.T) {
	t.Parallel()
	c := sqliteCluster(t)
	c.serve("solo", "--exec", "--cancel-grace", "2s")
	ready := filepath.Join(t.TempDir(), "ready")
	id := c.submit("--", "sh", "-c", `echo start
echo "jobctl:progress 50 half"
printf partial
echo " end"
echo "jobctl:warning careful"
echo "jobctl:progress soon"
touch "$1"
exec sleep 1000`, "sh", ready)
	c.eventually(30*time.Second, "the job to print its lines", func() bool {
		_, err := os.Stat(ready)
		return err == nil
	})
	c.ok("cancel", id)
	c.waitStatus(id, "CANCELLED", 30*time.Second)

	if got, want := c.ok("logs", id, "--raw"), "start\npartial end\njobctl:progress soon\n"; got != want {
		t.Errorf("logs --raw = %q; want the job's own output %q", got, want)
	}
	all := c.ok("logs", id)
	want := "start\n[protocol] jobctl:progress 50 half\npartial end\n[protocol] jobctl:warning careful\njobctl:progress soon\n[note] "
	if !strings.HasPrefix(all, want) || !strings.Contains(all, "SIGTERM") || strings.Count(all, "\n") != 6 {
		t.Errorf("logs = %q; want %q then jobctl's note about the cancel", all, want)
	}
	if got := c.ok("logs", id, "--tail", "1"); !strings.HasPrefix(got, "[note] ") || strings.Count(got, "\n") != 1 {
		t.Errorf("logs --tail 1 = %q; want the note alone", got)
	}
	// Following an ended job prints it and returns.
	if got := c.ok("logs", id, "-f", "--raw", "--tail", "2"); got != "partial end\njobctl:progress soon\n" {
		t.Errorf("logs -f --raw --tail 2 = %q", got)
	}
}
