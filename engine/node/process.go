package node

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/jobctl/jobctl/engine"
)

// ThisProcess identifies this process for its node's row: the machine
// (its boot id, else its hostname), the pid and, on Linux, the process's
// start time. A restart on the same machine can then tell whether the
// process that held the name still exists.
func ThisProcess() engine.NodeProcess {
	hostname, _ := os.Hostname()
	p := engine.NodeProcess{Host: hostname, Hostname: hostname, PID: os.Getpid()}
	if runtime.GOOS != "linux" {
		return p
	}
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			p.Host = id
		}
	}
	if start, _, ok := processStat(p.PID); ok {
		p.StartTime = start
	}
	return p
}

// ProcessGone reports whether the process p names no longer exists on
// this machine: no process has its pid, the pid now belongs to a process
// that started at another time, or the process has died and only waits
// for its parent to collect it (a zombie). Without /proc (not Linux) it
// cannot tell, and says false.
func ProcessGone(p engine.NodeProcess) bool {
	if runtime.GOOS != "linux" || p.PID <= 0 {
		return false
	}
	start, state, ok := processStat(p.PID)
	if !ok {
		_, err := os.Stat("/proc/" + strconv.Itoa(p.PID))
		return errors.Is(err, fs.ErrNotExist)
	}
	if state == "Z" || state == "X" {
		return true
	}
	return p.StartTime != 0 && start != p.StartTime
}

// processStat reads the start time of process pid, in clock ticks after
// boot (field 22 of /proc/PID/stat), and its state (field 3). The second
// field, the command name in parentheses, may itself hold spaces and
// parentheses, so the fields are counted from the last ')'.
func processStat(pid int) (start int64, state string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	return parseStat(string(b))
}

// parseStat reads the start time and state out of a /proc/PID/stat line.
func parseStat(s string) (start int64, state string, ok bool) {
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, "", false
	}
	// After the ')' come field 3 (the state) onwards.
	fields := strings.Fields(s[end+1:])
	const startField = 22 - 3
	if len(fields) <= startField {
		return 0, "", false
	}
	v, err := strconv.ParseInt(fields[startField], 10, 64)
	return v, fields[0], err == nil
}
