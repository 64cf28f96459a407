package watchdog

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// helloTimeout bounds how long a watchdog may take to say it runs.
	helloTimeout = 10 * time.Second
	// writeTimeout bounds a command's write: only a watchdog that stopped
	// reading (stopped by a signal) fills the pipe, and the node must not
	// hang on it.
	writeTimeout = time.Second
	// forgetTimeout bounds the wait for the answer to forget.
	forgetTimeout = 5 * time.Second
	// respawnDelay is the first wait before another watchdog is started
	// when one cannot be; it doubles up to respawnDelayMax.
	respawnDelay    = time.Second
	respawnDelayMax = 30 * time.Second
)

// Client is a node's end of its watchdog process. A watchdog that exits
// while the node runs is replaced, and told again what the last one knew.
// Its methods are safe for concurrent use.
type Client struct {
	argv   []string
	log    *slog.Logger
	fenced func()
	exited chan struct{} // the last watchdog has exited, after Close
	closed chan struct{} // Close was called
	close  sync.Once

	writeMu sync.Mutex
	in      *os.File // the current watchdog's stdin; guarded by writeMu

	mu         sync.Mutex
	pid        int
	watched    map[int]bool      // the groups the node watches
	until      time.Time         // the deadline last sent; zero: none yet
	forgets    map[int]chan bool // pending forget answers, by group
	restarting bool              // between a watchdog's exit and the next one
	gone       bool              // the last watchdog has exited
}

// process is one started watchdog.
type process struct {
	cmd     *exec.Cmd
	in, out *os.File
	replies *bufio.Reader
}

// Start runs the watchdog argv in a process group of its own (a signal to
// the node's group, Ctrl-C on a terminal say, must not end it) with no
// parent-death signal, and waits for its first line. fenced is called each
// time the watchdog reports a fence, on the client's own goroutine.
func Start(argv []string, log *slog.Logger, fenced func()) (*Client, error) {
	p, err := spawn(argv)
	if err != nil {
		return nil, err
	}
	c := &Client{argv: argv, log: log, fenced: fenced, exited: make(chan struct{}), closed: make(chan struct{}),
		in: p.in, pid: p.cmd.Process.Pid, watched: map[int]bool{}, forgets: map[int]chan bool{}}
	go c.follow(p)
	return c, nil
}

func spawn(argv []string) (*process, error) {
	if len(argv) == 0 {
		return nil, errors.New("watchdog: no command")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	// The watchdog holds the only other ends: its stdin ends exactly when
	// this process does.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("cannot start the watchdog: %w", err)
	}
	br := bufio.NewReader(outR)
	_ = outR.SetReadDeadline(time.Now().Add(helloTimeout))
	first, err := br.ReadString('\n')
	if strings.TrimSpace(first) != hello {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("%s did not start as a watchdog (it said %q): %v", argv[0], strings.TrimSpace(first), err)
	}
	_ = outR.SetReadDeadline(time.Time{})
	return &process{cmd: cmd, in: inW, out: outR, replies: br}, nil
}

// Pid is the current watchdog's process id.
func (c *Client) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pid
}

// Watch has the watchdog kill process group pgid when it fences. The
// command is in the pipe when Watch returns, so the watchdog learns of the
// group even if this process dies right after.
func (c *Client) Watch(pgid int) {
	c.mu.Lock()
	c.watched[pgid] = true
	c.mu.Unlock()
	c.send("watch %d", pgid)
}

// Forget tells the watchdog the group is gone and reports whether the
// watchdog had killed it.
func (c *Client) Forget(pgid int) (killed bool) {
	answer := make(chan bool, 1)
	c.mu.Lock()
	delete(c.watched, pgid)
	if c.gone {
		c.mu.Unlock()
		return false
	}
	c.forgets[pgid] = answer
	c.mu.Unlock()
	if !c.send("forget %d", pgid) {
		c.mu.Lock()
		delete(c.forgets, pgid)
		c.mu.Unlock()
		return false
	}
	select {
	case killed = <-answer:
		return killed
	case <-time.After(forgetTimeout):
		c.log.Warn("the watchdog did not answer", "command", "forget", "pgid", pgid)
		c.mu.Lock()
		delete(c.forgets, pgid)
		c.mu.Unlock()
		return false
	}
}

// Until has the watchdog fence unless Until is called again within d.
func (c *Client) Until(d time.Duration) {
	c.mu.Lock()
	c.until = time.Now().Add(d)
	c.mu.Unlock()
	c.send("until %d", millis(d))
}

// millis rounds up to whole milliseconds, so the watchdog never fences
// before the node would.
func millis(d time.Duration) int64 {
	return int64((max(d, 0) + time.Millisecond - 1) / time.Millisecond)
}

// Close ends the watchdog: it kills the groups still watched and exits.
func (c *Client) Close() {
	c.close.Do(func() {
		close(c.closed)
		c.writeMu.Lock()
		c.in.Close()
		c.writeMu.Unlock()
		<-c.exited
	})
}

func (c *Client) closing() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

func (c *Client) send(format string, args ...any) bool {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_ = c.in.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := fmt.Fprintf(c.in, format+"\n", args...)
	if err == nil {
		return true
	}
	c.mu.Lock()
	quiet := c.gone || c.restarting
	c.mu.Unlock()
	if !quiet && !c.closing() {
		c.log.Warn("cannot reach the watchdog", "command", fmt.Sprintf(format, args...), "err", err)
	}
	return false
}

// follow reads the watchdog's replies until it exits, and replaces it
// unless the node is closing it.
func (c *Client) follow(p *process) {
	for p != nil {
		c.read(p.replies)
		p.out.Close()
		err := p.cmd.Wait()
		c.mu.Lock()
		for pgid, answer := range c.forgets {
			answer <- false
			delete(c.forgets, pgid)
		}
		c.restarting = true
		c.mu.Unlock()
		if c.closing() {
			break
		}
		c.log.Error("the watchdog stopped; starting another", "err", err)
		p = c.respawn()
	}
	c.mu.Lock()
	c.gone = true
	c.mu.Unlock()
	close(c.exited)
}

func (c *Client) read(replies *bufio.Reader) {
	sc := bufio.NewScanner(replies)
	for sc.Scan() {
		verb, rest, _ := strings.Cut(sc.Text(), " ")
		switch verb {
		case "fenced":
			c.fenced()
		case "forgot":
			group, killed, _ := strings.Cut(rest, " ")
			if pgid, err := strconv.Atoi(group); err == nil {
				c.answer(pgid, killed == "killed")
			}
		case "error":
			c.log.Warn("watchdog: " + rest)
		}
	}
}

// respawn starts another watchdog and tells it the deadline and the groups
// the last one had; nil once the node is closing. Until it runs, a node
// that dies leaves its jobs' grandchildren behind, so it keeps trying.
func (c *Client) respawn() *process {
	delay := respawnDelay
	for {
		p, err := spawn(c.argv)
		if err == nil {
			c.writeMu.Lock()
			defer c.writeMu.Unlock()
			if c.closing() {
				p.in.Close() // it exits at once, with nothing to kill
				return p
			}
			c.in.Close()
			c.in = p.in
			c.mu.Lock()
			c.pid, c.restarting = p.cmd.Process.Pid, false
			until := c.until
			groups := make([]int, 0, len(c.watched))
			for pgid := range c.watched {
				groups = append(groups, pgid)
			}
			c.mu.Unlock()
			var b strings.Builder
			if !until.IsZero() {
				fmt.Fprintf(&b, "until %d\n", millis(time.Until(until)))
			}
			for _, pgid := range groups {
				fmt.Fprintf(&b, "watch %d\n", pgid)
			}
			_ = p.in.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := p.in.WriteString(b.String()); err != nil {
				c.log.Warn("cannot reach the new watchdog", "err", err)
			}
			c.log.Info("started another watchdog", "pid", p.cmd.Process.Pid, "groups", len(groups))
			return p
		}
		c.log.Error("cannot start another watchdog; retrying", "in", delay, "err", err)
		select {
		case <-c.closed:
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, respawnDelayMax)
	}
}

func (c *Client) answer(pgid int, killed bool) {
	c.mu.Lock()
	answer, ok := c.forgets[pgid]
	delete(c.forgets, pgid)
	c.mu.Unlock()
	if ok {
		answer <- killed
	}
}
