#!/bin/sh
# The node runs as the system user jobctl, its jobs as the system user
# jobctl-job, who can read nothing of the node's: neither its state
# directory /var/lib/jobctl nor /etc/jobctl. Both users exist before the
# files are unpacked. Jobs may write to their home, /var/lib/jobctl-job.
set -e
if ! getent group jobctl >/dev/null; then
	groupadd --system jobctl
fi
if ! getent passwd jobctl >/dev/null; then
	useradd --system --gid jobctl --home-dir /var/lib/jobctl --no-create-home \
		--shell /usr/sbin/nologin --comment "jobctl node" jobctl
fi
if ! getent group jobctl-job >/dev/null; then
	groupadd --system jobctl-job
fi
if ! getent passwd jobctl-job >/dev/null; then
	useradd --system --gid jobctl-job --home-dir /var/lib/jobctl-job --no-create-home \
		--shell /usr/sbin/nologin --comment "jobctl jobs" jobctl-job
fi
if [ ! -d /var/lib/jobctl-job ]; then
	install -d -m 0750 -o jobctl-job -g jobctl-job /var/lib/jobctl-job
fi
