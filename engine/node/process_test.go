package node

import (
	"os/exec"
	"runtime"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func TestParseStatCountsFieldsFromTheLastParenthesis(t *testing.T) {
	t.Parallel()
	line := "4711 (job (1) x) S 1 4711 4711 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10\n"
	start, state, ok := parseStat(line)
	if !ok || start != 987654 || state != "S" {
		t.Errorf("parseStat = %d, %q, %v; want 987654, S, true", start, state, ok)
	}
	if _, _, ok := parseStat("4711 (cut short) S 1 2"); ok {
		t.Error("parseStat read a line without field 22")
	}
}

func TestProcessGoneTellsALiveProcessFromAFinishedOne(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		if ProcessGone(ThisProcess()) {
			t.Error("without /proc a process is never judged gone")
		}
		return
	}
	me := ThisProcess()
	if me.StartTime == 0 || me.Host == "" || me.PID == 0 {
		t.Fatalf("ThisProcess = %+v, want host, pid and start time", me)
	}
	if ProcessGone(me) {
		t.Error("this very process is judged gone")
	}
	reused := me
	reused.StartTime++
	if !ProcessGone(reused) {
		t.Error("a pid now held by a process with another start time is judged alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if !ProcessGone(engine.NodeProcess{Host: me.Host, PID: cmd.Process.Pid, StartTime: 1}) {
		t.Error("a process that exited and was collected is judged alive")
	}
}
