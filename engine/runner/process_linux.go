package runner

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// jobProcAttr puts the job in its own process group and has Linux SIGKILL
// it when the node dies (see spawner.go for why the forking thread matters).
func jobProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitExited blocks until the process pid has exited without reaping it.
func waitExited(pid int) error {
	var info unix.Siginfo
	for {
		// WNOWAIT leaves the process a zombie for cmd.Wait to reap.
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

// leaderExited reports, without waiting or reaping, that the process pid
// has exited: waitid with WNOHANG fills in the signal only for a child
// that has.
func leaderExited(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}

// maxRSSBytes is a rusage's largest resident set, which Linux gives in KiB.
func maxRSSBytes(ru *syscall.Rusage) int64 { return ru.Maxrss * 1024 }

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every
// architecture Linux runs Go on.
const clockTicks = 100

// processGroupTotals adds up, from one pass over /proc, the CPU time of
// the processes of each process group of pgids (with that of the children
// each reaped) and their resident memory now. A process that left its
// group is not counted, nor one that died unreaped by a process of it.
func processGroupTotals(pgids map[int]bool) map[int]procTotals {
	out := make(map[int]procTotals, len(pgids))
	if len(pgids) == 0 {
		return out
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	page := int64(os.Getpagesize())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue // it ended meanwhile
		}
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		// Fields from the state (3) on: pgrp is 5, utime to cstime 14 to
		// 17, rss (pages) 24.
		f := strings.Fields(s[end+1:])
		if len(f) < 22 {
			continue
		}
		g, _ := strconv.Atoi(f[5-3])
		if !pgids[g] {
			continue
		}
		var ticks int64
		for _, i := range []int{14, 15, 16, 17} {
			v, _ := strconv.ParseInt(f[i-3], 10, 64)
			ticks += v
		}
		rss, _ := strconv.ParseInt(f[24-3], 10, 64)
		t := out[g]
		t.cpu += time.Duration(ticks) * time.Second / clockTicks
		t.memory += rss * page
		t.ok = true
		out[g] = t
	}
	return out
}
