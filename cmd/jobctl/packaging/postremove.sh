#!/bin/sh
# Forget the removed unit. The users jobctl and jobctl-job, /var/lib/jobctl
# and /var/lib/jobctl-job stay, as they may hold the database and what jobs
# left.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
