#!/bin/sh
# The service runs as the system user jobctl; it exists before the files
# are unpacked, since /etc/jobctl/jobctl.env belongs to its group.
set -e
if ! getent group jobctl >/dev/null; then
	groupadd --system jobctl
fi
if ! getent passwd jobctl >/dev/null; then
	useradd --system --gid jobctl --home-dir /var/lib/jobctl --no-create-home \
		--shell /usr/sbin/nologin --comment "jobctl node" jobctl
fi
