// Package jobuser runs jobs as another user than their node's (serve
// --job-user, a service's user:), so a job cannot read what the node's own
// user can: its database file, its state directory, its config.
//
// It answers three questions. Who is USER[:GROUP] (Lookup: uid, gid, the
// user's supplementary groups, its home)? May this process start processes
// as another user (CheckPrivileges: root, or the capabilities CAP_SETUID,
// CAP_SETGID, CAP_CHOWN and CAP_KILL)? And where does each attempt keep its
// temporary files (TempDirs: an empty directory of its own, 0700 and owned by
// the job's user, removed when the attempt ends)?
//
// A node that is not root removes a job's directory without the right to
// read it: it makes each directory its own first (CAP_CHOWN), through file
// descriptors opened without following links, so nothing a job leaves there
// (links, modes, sticky bits) leads the removal outside the directory.
package jobuser
