package runner

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

// TestJobDiesWithTheNode runs this test binary as a node (runFakeNode) that
// starts a job, SIGKILLs it, and checks that the job dies too. The fake node
// first checks that the job survives the end of the thread that started it.
func TestJobDiesWithTheNode(t *testing.T) {
	t.Parallel()
	node := exec.Command(os.Args[0], "-test.run=^$")
	node.Env = append(os.Environ(), fakeNodeEnv+"=1")
	node.Stderr = os.Stderr
	stdout, err := node.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	nodeDone := false
	t.Cleanup(func() {
		if !nodeDone {
			_ = node.Process.Kill()
			_ = node.Wait()
		}
	})

	jobPid, alive := 0, false
	lines := bufio.NewScanner(stdout)
	for (jobPid == 0 || !alive) && lines.Scan() {
		line := lines.Text()
		if pid, err := strconv.Atoi(line); err == nil {
			jobPid = pid
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			continue
		}
		if line != "alive" {
			t.Fatalf("fake node: %s", line)
		}
		alive = true
	}
	if jobPid == 0 || !alive {
		t.Fatalf("fake node ended early (pid %d, alive %v): %v", jobPid, alive, lines.Err())
	}
	if processGone(jobPid) {
		t.Fatalf("job %d ended while its node runs", jobPid)
	}

	if err := node.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = node.Wait()
	nodeDone = true
	waitGone(t, jobPid)
}
