#!/bin/sh
# SPDX-License-Identifier: MIT
# Stand-in for amdqpctl in the --amdqp smoke tests: `status --json` reports
# the daemon state FAKE_AMDQPD_STATE (default running); `run --priority L --
# CMD` sets AMDQP_PRIORITY=L (unless FAKE_AMDQPCTL_NO_TAG is set) and execs
# CMD. Every call is appended to $FAKE_AMDQPCTL_LOG.
set -eu
if [ -n "${FAKE_AMDQPCTL_LOG:-}" ]; then
	printf '%s\n' "$*" >>"$FAKE_AMDQPCTL_LOG"
fi
case "${1:-}" in
status)
	printf '{"module": {"available": false}, "library_version": "fake", "devices": [], '
	printf '"daemon": {"state": "%s", "pid": 4242, "path": "/usr/sbin/amdqpd"}}\n' \
		"${FAKE_AMDQPD_STATE:-running}"
	exit 3
	;;
run)
	[ "${2:-}" = "--priority" ] || exit 2
	level=$3
	shift 3
	[ "${1:-}" = "--" ] && shift
	if [ -z "${FAKE_AMDQPCTL_NO_TAG:-}" ]; then
		AMDQP_PRIORITY=$level
		export AMDQP_PRIORITY
	fi
	exec "$@"
	;;
esac
echo "fake amdqpctl: unsupported: $*" >&2
exit 2
