package watchdog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Protocol is the version the watchdog announces in its first line.
const Protocol = 1

// hello is the watchdog's first line.
var hello = fmt.Sprintf("watchdog %d", Protocol)

// replyQueue bounds the replies waiting to be written. The loop never
// blocks on its output: a full queue drops replies, which only a node that
// stopped reading (frozen) would miss.
const replyQueue = 4096

// Run is the watchdog: it reads the node's commands from in and writes its
// replies to out (see the package documentation) until in ends, then kills
// every watched group and returns the error that ended in, nil at EOF.
func Run(in io.Reader, out io.Writer, clock Clock) error {
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
		readErr <- sc.Err()
		close(lines)
	}()
	replies := make(chan string, replyQueue)
	go func() {
		for r := range replies {
			// A node that is gone reads nothing; its end of the input
			// is closed too, which ends the loop.
			_, _ = io.WriteString(out, r+"\n")
		}
	}()
	w := &loop{clock: clock, kill: killGroup, replies: replies, watched: map[int]bool{}}
	w.say("%s", hello)
	for {
		var expired <-chan time.Time
		if w.timer != nil {
			expired = w.timer.C()
		}
		select {
		case line, ok := <-lines:
			if !ok {
				w.killAll()
				close(replies)
				return <-readErr
			}
			w.handle(line)
		case <-expired:
			w.timer = nil
			w.check()
		}
	}
}

// loop is the watchdog's state; only Run's goroutine uses it.
type loop struct {
	clock   Clock
	kill    func(pgid int) error
	replies chan<- string

	watched  map[int]bool // group → the watchdog has killed it
	deadline time.Time    // zero: no until yet
	fenced   bool         // the deadline passed with no until since
	timer    Timer
}

func (w *loop) say(format string, args ...any) {
	select {
	case w.replies <- fmt.Sprintf(format, args...):
	default:
	}
}

func (w *loop) handle(line string) {
	verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	n, err := strconv.Atoi(strings.TrimSpace(arg))
	switch {
	case verb == "" && arg == "":
		return
	case err != nil:
		w.say("error %q: want watch PGID, forget PGID or until MILLIS", line)
	case verb == "until":
		w.until(time.Duration(n) * time.Millisecond)
	case verb != "watch" && verb != "forget":
		w.say("error %q: unknown command", line)
	case n <= 1 || n == syscall.Getpgrp():
		// kill(-1) is every process the user owns; its own group would
		// kill the watchdog.
		w.say("error %q: not a job's process group", line)
	case verb == "watch":
		w.watch(n)
	default:
		killed := w.watched[n]
		delete(w.watched, n)
		if killed {
			w.say("forgot %d killed", n)
		} else {
			w.say("forgot %d", n)
		}
	}
}

func (w *loop) watch(pgid int) {
	if !w.fenced {
		if _, ok := w.watched[pgid]; !ok {
			w.watched[pgid] = false
		}
		w.say("watching %d", pgid)
		return
	}
	w.killGroup(pgid)
	w.say("killed %d", pgid)
}

// until sets a new deadline, which ends a fence; one already passed fences.
// The timer is set before the reply, so the deadline is in force once the
// node (or a test moving its clock) reads it.
func (w *loop) until(d time.Duration) {
	w.deadline = w.clock.Now().Add(d)
	if d > 0 {
		w.fenced = false
	}
	w.check()
	w.say("until %d", d.Milliseconds())
}

// check fences once the deadline has passed and otherwise waits for it.
func (w *loop) check() {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if w.fenced || w.deadline.IsZero() {
		return
	}
	left := w.deadline.Sub(w.clock.Now())
	if left > 0 {
		w.timer = w.clock.NewTimer(left)
		return
	}
	w.fenced = true
	w.killAll()
	w.say("fenced %d", len(w.watched))
}

func (w *loop) killAll() {
	for pgid := range w.watched {
		w.killGroup(pgid)
	}
}

func (w *loop) killGroup(pgid int) {
	if err := w.kill(pgid); err != nil && !errors.Is(err, syscall.ESRCH) {
		w.say("error cannot kill process group %d: %v", pgid, err)
	}
	w.watched[pgid] = true
}

func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }
