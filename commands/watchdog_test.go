package commands

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain lets this test binary be the watchdog `jobctl serve` starts:
// serve runs its own executable, which in these tests is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "watchdog" {
		root := NewRootCmd(NewFactory(SystemIO()), "test")
		root.SetArgs(os.Args[1:])
		if err := root.Execute(); err != nil {
			fmt.Fprintln(os.Stderr, "watchdog:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestWatchdogIsHiddenFromHelp(t *testing.T) {
	t.Parallel()
	ios, stdout, _ := TestIO("")
	root := NewRootCmd(NewFactory(ios), "test")
	cmd, _, err := root.Find([]string{"watchdog"})
	if err != nil || cmd.Name() != "watchdog" || !cmd.Hidden {
		t.Fatalf("watchdog command: %v, hidden %v, %v; want a hidden command", cmd.Name(), cmd.Hidden, err)
	}
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stdout.String(), "watchdog") {
		t.Errorf("help lists the watchdog:\n%s", stdout)
	}
}

func TestWatchdogRefusesArguments(t *testing.T) {
	t.Parallel()
	ios, _, _ := TestIO("")
	root := NewRootCmd(NewFactory(ios), "test")
	root.SetArgs([]string{"watchdog", "now"})
	var usage *UsageError
	if err := root.Execute(); !errors.As(err, &usage) {
		t.Fatalf("watchdog now: %v, want a usage error", err)
	}
}
