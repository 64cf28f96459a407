#!/bin/sh
# On removal (not on upgrade) stop the node, which puts its running jobs
# back in the queue, and disable it. dpkg passes "remove", rpm the number
# of versions left (0).
set -e
case "$1" in
remove | 0)
	if [ -d /run/systemd/system ]; then
		systemctl --no-reload disable --now jobctl.service >/dev/null 2>&1 || true
	fi
	;;
esac
