// Package cgroup gives each run of a job a Linux control group of its own,
// where the machine lets the node make one: to measure the CPU time and
// peak memory of the job's whole process tree (grandchildren included,
// whether or not their parents wait for them), and, when asked, to hold it
// to a CPU share and a hard memory limit.
//
// The node makes one directory of its own below its own cgroup and a group
// per run below that, and places a run's process in its group as it is
// born, so nothing the job starts escapes it:
//
//   - cgroup v2 (/sys/fs/cgroup a cgroup2 mount): the process is cloned
//     straight into the group (CLONE_INTO_CGROUP, Linux 5.7). Usage is
//     cpu.stat's usage_usec, memory.peak (Linux 5.19) and memory.events'
//     oom_kill; limits are cpu.weight and memory.max with memory.swap.max
//     0 and memory.oom.group 1 (the whole run is killed at its limit).
//     Controllers must be delegated to the node's cgroup (systemd's
//     Delegate=yes); the node moves the processes of its own cgroup into
//     a leaf of it so it may hand them to its job groups. Without the
//     memory controller only CPU time is measured there.
//   - cgroup v1 (the cpu, cpuacct and memory hierarchies): the thread that
//     forks the run joins the group's tasks for the fork and leaves it
//     after, so the child is born inside. Usage is cpuacct.usage,
//     memory.max_usage_in_bytes and memory.oom_control's oom_kill;
//     limits are cpu.shares and memory.limit_in_bytes, with
//     memory.memsw.limit_in_bytes the same where swap is accounted (no
//     swap).
//
// A job's CPU share follows its load: cpu.weight is 100 a unit of load
// (cpu.shares 1024), so when the node is busy each run gets CPU in
// proportion to its load, and a run alone may still use idle cores. A
// node whose loads add up to at most its cores thus gives every run at
// least the cores it declared.
//
// Memory figures of a cgroup count the page cache the run caused as well
// as its processes' resident memory.
package cgroup
