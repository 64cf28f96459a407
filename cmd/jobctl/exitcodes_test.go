package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jobctl/jobctl/commands"
)

// TestExitCodesAreDocumented wants every exit code main returns listed in
// `jobctl help exit-codes`, and nothing else there.
func TestExitCodesAreDocumented(t *testing.T) {
	t.Parallel()
	ios, _, _ := commands.TestIO("")
	topic, _, err := commands.NewRootCmd(commands.NewFactory(ios), "dev").Find([]string{commands.TopicExitCodes})
	if err != nil || topic.Name() != commands.TopicExitCodes {
		t.Fatalf("no help topic %s: %v", commands.TopicExitCodes, err)
	}
	codes := []int{exitOK, exitError, exitUsage, exitNotFound, exitJobFailed, exitTimeout, exitInterrupted}
	listed := 0
	for _, line := range strings.Split(topic.Long, "\n") {
		var code int
		if _, err := fmt.Sscanf(line, "  %d ", &code); err == nil {
			listed++
		}
	}
	if listed != len(codes) {
		t.Errorf("help exit-codes lists %d codes; main has %d", listed, len(codes))
	}
	for _, code := range codes {
		if !strings.Contains(topic.Long, fmt.Sprintf("\n  %-4d ", code)) {
			t.Errorf("exit code %d is not in help exit-codes", code)
		}
	}
}
