#!/bin/sh
# Make systemd see a new or changed unit. The service is not started: it
# needs its database set in /etc/jobctl/db first.
#
# The files that may hold the database's password are root's alone; an
# upgrade from a release that had jobctl.env readable by the group jobctl
# (and so by every job) tightens it.
set -e
for f in /etc/jobctl/jobctl.env /etc/jobctl/db; do
	if [ -f "$f" ]; then
		chown root:root "$f"
		chmod 0600 "$f"
	fi
done
if [ -d /var/lib/jobctl ]; then
	chmod 0700 /var/lib/jobctl
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
