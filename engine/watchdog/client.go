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
)

// Client is a node's end of its watchdog process. Its methods are safe for
// concurrent use.
type Client struct {
	cmd    *exec.Cmd
	in     *os.File
	log    *slog.Logger
	fenced func()
	exited chan struct{}
	close  sync.Once

	writeMu sync.Mutex

	mu      sync.Mutex
	forgets map[int]chan bool // pending forget answers, by group
	gone    bool              // the watchdog has exited
	closing bool
}

// Start runs the watchdog argv in a process group of its own (a signal to
// the node's group, Ctrl-C on a terminal say, must not end it) with no
// parent-death signal, and waits for its first line. fenced is called each
// time the watchdog reports a fence, on the client's own goroutine.
func Start(argv []string, log *slog.Logger, fenced func()) (*Client, error) {
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
	c := &Client{cmd: cmd, in: inW, log: log, fenced: fenced, exited: make(chan struct{}), forgets: map[int]chan bool{}}
	go c.read(br, outR)
	return c, nil
}

// Pid is the watchdog's process id.
func (c *Client) Pid() int { return c.cmd.Process.Pid }

// Watch has the watchdog kill process group pgid when it fences. The
// command is in the pipe when Watch returns, so the watchdog learns of the
// group even if this process dies right after.
func (c *Client) Watch(pgid int) { c.send("watch %d", pgid) }

// Forget tells the watchdog the group is gone and reports whether the
// watchdog had killed it.
func (c *Client) Forget(pgid int) (killed bool) {
	answer := make(chan bool, 1)
	c.mu.Lock()
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
// Whole milliseconds are rounded up, so the watchdog never fences before
// the node would.
func (c *Client) Until(d time.Duration) {
	c.send("until %d", (d+time.Millisecond-1)/time.Millisecond)
}

// Close ends the watchdog: it kills the groups still watched and exits.
func (c *Client) Close() {
	c.close.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.writeMu.Lock()
		c.in.Close()
		c.writeMu.Unlock()
		<-c.exited
	})
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
	quiet := c.gone || c.closing
	c.mu.Unlock()
	if !quiet {
		c.log.Warn("cannot reach the watchdog", "command", fmt.Sprintf(format, args...), "err", err)
	}
	return false
}

// read follows the watchdog's replies until it exits.
func (c *Client) read(br *bufio.Reader, out *os.File) {
	sc := bufio.NewScanner(br)
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
	out.Close()
	err := c.cmd.Wait()
	c.mu.Lock()
	c.gone = true
	closing := c.closing
	for pgid, answer := range c.forgets {
		answer <- false
		delete(c.forgets, pgid)
	}
	c.mu.Unlock()
	if !closing {
		c.log.Error("the watchdog stopped: jobs no longer die with this node if it is killed", "err", err)
	}
	close(c.exited)
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
