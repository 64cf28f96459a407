#!/bin/sh
# Forget the removed unit. The jobctl user and /var/lib/jobctl stay, as
# they may hold the database.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
