#!/bin/sh
# Make systemd see a new or changed unit. The service is not started: it
# needs its database set in /etc/jobctl/jobctl.env first.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
