#!/bin/bash
# SPDX-License-Identifier: MIT
# Checks amdqpd's packaging and deployment files, offline; prints TAP.
#   - the generated systemd unit: ExecStart, `systemd-analyze verify`,
#     its exposure score, the settings the daemon depends on;
#   - the install rules (a DESTDIR install of component amdqpd);
#   - the example config: TOML, documented, accepted by the daemon;
#   (deploy/kubernetes has its own check: schema/check-deploy.sh.)
# Run by ctest (libuser/daemon/packaging/CMakeLists.txt passes the
# arguments). Exit: 0 all ran ok or skipped for want of a built daemon,
# 1 a failure, 77 a tool is missing (systemd-analyze, yamllint,
# python3-jsonschema, cmake), so nothing was proven.
set -euo pipefail

usage() {
	cat <<USAGE
Usage: ${0##*/} --unit FILE --sbin-path PATH --example FILE --repo DIR
       --build-dir DIR --unitdir DIR --sysconfdir DIR --prefix DIR [--amdqpd BIN]
USAGE
}

unit='' sbin_path='' example='' repo='' build_dir='' unitdir='' sysconfdir='' prefix='' amdqpd=''
while [ $# -gt 0 ]; do
	case "$1" in
	--unit) unit=$2 ;;
	--sbin-path) sbin_path=$2 ;;
	--example) example=$2 ;;
	--repo) repo=$2 ;;
	--build-dir) build_dir=$2 ;;
	--unitdir) unitdir=$2 ;;
	--sysconfdir) sysconfdir=$2 ;;
	--prefix) prefix=$2 ;;
	--amdqpd) amdqpd=$2 ;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		usage >&2
		exit 2
		;;
	esac
	shift 2
done
for v in unit sbin_path example repo build_dir unitdir sysconfdir prefix; do
	if [ -z "${!v}" ]; then
		usage >&2
		exit 2
	fi
done
case "$unitdir" in /*) ;; *) unitdir="$prefix/$unitdir" ;; esac
case "$sysconfdir" in /*) ;; *) sysconfdir="$prefix/$sysconfdir" ;; esac

guide="$repo/Documentation/admin-guide.rst"
# Debian's python3 has python3-yaml/-jsonschema; a python3 earlier in PATH
# (pyenv, venv) may not.
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0 failed=0 skipped=0 missing_tool=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	[ -s "$tmp/out" ] && sed 's/^/# /' "$tmp/out"
	return 0
}
skip() { n=$((n + 1)); skipped=$((skipped + 1)); echo "ok $n - $1 # SKIP $2"; }
# A tool this check cannot do without: the run proves less, say so.
skip_tool() { missing_tool=1; skip "$1" "$2 not installed"; }
have() { command -v "$1" >/dev/null 2>&1; }
# run NAME CMD...: ok when CMD succeeds; its output is shown on failure.
run() {
	local name=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then ok "$name"; else not_ok "$name"; fi
}
# refuse NAME CMD...: ok when CMD fails (a check that must be able to fail).
refuse() {
	local name=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then not_ok "$name"; else ok "$name"; fi
}

# Every setting of the example enabled: the lines "# key = value" and
# "# [table]" / "# [[table]]".
enable_all() {
	sed -E 's/^# (\[\[?[a-z_]+\]\]?|[a-z0-9_.]+ = .+)$/\1/' "$1"
}

echo "1..17"

# --- The unit -------------------------------------------------------------
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
if [ "$exec_start" = "$sbin_path --foreground" ]; then
	ok "unit: ExecStart is the installed $sbin_path"
else
	echo "ExecStart=$exec_start, expected $sbin_path --foreground" >"$tmp/out"
	not_ok "unit: ExecStart is the installed $sbin_path"
fi

# verify refuses a unit whose ExecStart does not exist. Check a copy that
# names this build's daemon, or a stub, instead: the same unit otherwise.
# --man=no: the amdqpctl(1) page is not installed on a build host.
mkdir -p "$tmp/verify" "$tmp/bin"
if [ -n "$amdqpd" ] && [ -x "$amdqpd" ]; then
	ln -s "$(realpath "$amdqpd")" "$tmp/bin/amdqpd"
else
	printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/amdqpd"
	chmod +x "$tmp/bin/amdqpd"
fi
sed "s#^ExecStart=$sbin_path #ExecStart=$tmp/bin/amdqpd #" "$unit" >"$tmp/verify/amdqpd.service"
# Clean means no message at all: unknown keys and bad values are only
# warnings to systemd, and the exit status stays 0.
verify_clean() {
	systemd-analyze verify --man=no "$1" >"$tmp/verify.out" 2>&1 || {
		cat "$tmp/verify.out"
		return 1
	}
	if grep -q . "$tmp/verify.out"; then
		cat "$tmp/verify.out"
		return 1
	fi
}
if have systemd-analyze; then
	run "unit: systemd-analyze verify is clean" verify_clean "$tmp/verify/amdqpd.service"
	mkdir -p "$tmp/bad"
	sed 's/^ProtectHome=yes/ProtectHome=yes\nProtectHomme=yes/' \
		"$tmp/verify/amdqpd.service" >"$tmp/bad/amdqpd.service"
	refuse "unit: the verify check catches a misspelt key" verify_clean "$tmp/bad/amdqpd.service"
	# 2.6 ("OK") today: 2.5 before CAP_SYS_ADMIN (0.3), which amdqp.ko's
	# ceiling table asks of whoever sets it; ProcSubset=pid took 0.1 back.
	# A hardening line lost raises it.
	run "unit: systemd-analyze security exposure <= 2.6" \
		systemd-analyze security --offline=yes --threshold=26 "$tmp/verify/amdqpd.service"
else
	skip_tool "unit: systemd-analyze verify is clean" systemd-analyze
	skip_tool "unit: the verify check catches a misspelt key" systemd-analyze
	skip_tool "unit: systemd-analyze security exposure <= 2.6" systemd-analyze
fi

# What the daemon itself depends on; hardening must not take it away.
unit_needs() {
	local u=$1 bad=0
	want() { grep -qxE "$1" "$u" || { echo "missing: $1"; bad=1; }; }
	refuse_line() { ! grep -qxE "$1" "$u" || { echo "must not have: $1"; bad=1; }; }
	want 'Type=notify'
	# shellcheck disable=SC2016 # a literal $MAINPID, for systemd
	want 'ExecReload=kill -HUP \$MAINPID'
	want 'Restart=on-failure'
	want 'WatchdogSec=[1-9][0-9]*s?'
	want 'After=.*systemd-modules-load\.service.*'
	want 'Wants=.*systemd-modules-load\.service.*'
	want 'CapabilityBoundingSet=.*CAP_SYS_PTRACE.*'
	want 'CapabilityBoundingSet=.*CAP_SYS_NICE.*'
	want 'CapabilityBoundingSet=.*CAP_SYS_ADMIN.*'
	# The device and nothing else: not every misc device (char-misc).
	want 'DevicePolicy=closed'
	want 'DeviceAllow=/dev/amdqp rw'
	refuse_line 'DeviceAllow=.*char-.*'
	want 'BindsTo=dev-amdqp\.device'
	want 'NoNewPrivileges=yes'
	want 'ProtectHome=yes'
	want 'ProtectKernelTunables=yes'
	want 'ProtectKernelModules=yes'
	want 'ProtectControlGroups=yes'
	want 'RestrictSUIDSGID=yes'
	want 'IPAddressAllow=localhost'
	# Every capability it holds is one explained in the unit.
	local caps
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$u")
	for c in $caps; do
		case $c in
		CAP_SYS_PTRACE | CAP_SYS_NICE | CAP_SYS_ADMIN | CAP_DAC_OVERRIDE) ;;
		*) echo "unexplained capability: $c"; bad=1 ;;
		esac
	done
	want 'ProtectSystem=strict'
	# /run/amdqp (a metrics socket) and /run/amdqpd (amdqpd.sock), root's
	# and 0755: no tenant may put anything there.
	want 'RuntimeDirectory=(.* )?amdqp( .*)?'
	want 'RuntimeDirectory=(.* )?amdqpd( .*)?'
	want 'RuntimeDirectoryMode=0?755'
	# /dev/amdqp; other users' processes (their /proc/PID/fd, where the
	# activity pages are); the initial user namespace for capabilities;
	# the loopback for metrics.
	refuse_line 'PrivateDevices=(yes|true|on|1)'
	refuse_line 'ProtectProc=(invisible|noaccess)'
	refuse_line 'PrivateUsers=(yes|true|on|1)'
	refuse_line 'PrivateNetwork=(yes|true|on|1)'
	refuse_line '(Inaccessible|TemporaryFileSystem)(Paths)?=.*/run/amdqpd.*'
	refuse_line 'UMask=0?0[0-7]7'
	refuse_line 'Requires=.*'
	return $bad
}
run "unit: keeps what amdqpd needs (notify, watchdog, devices, socket folder, caps)" unit_needs "$unit"
sed 's|^RuntimeDirectoryMode=.*|RuntimeDirectoryMode=1777|' "$unit" >"$tmp/rtmode.service"
refuse "unit: a socket folder others may write to is refused" unit_needs "$tmp/rtmode.service"
sed 's|^DeviceAllow=/dev/amdqp rw|DeviceAllow=char-misc rw|' "$unit" >"$tmp/misc.service"
refuse "unit: every misc device (char-misc) is refused" unit_needs "$tmp/misc.service"
sed 's|^CapabilityBoundingSet=\(.*\)|CapabilityBoundingSet=\1 CAP_SYS_RESOURCE|' "$unit" >"$tmp/caps.service"
refuse "unit: a capability the unit does not explain is refused" unit_needs "$tmp/caps.service"

# The udev rule that makes /dev/amdqp a systemd device (BindsTo=) and
# starts the daemon with it.
udev_rule() {
	grep -qE '^KERNEL=="amdqp", SUBSYSTEM=="misc", .*TAG\+="systemd"' "$1" &&
		grep -qE 'ENV\{SYSTEMD_WANTS\}\+="amdqpd\.service"' "$1"
}
run "udev: /dev/amdqp is tagged for systemd and wants amdqpd" udev_rule "$repo/libuser/daemon/packaging/60-amdqp.rules"

# --- Install rules --------------------------------------------------------
check_install() {
	local d="$tmp/destdir"
	DESTDIR="$d" cmake --install "$build_dir" --component amdqpd || return 1
	local f bad=0
	for f in "$unitdir/amdqpd.service" "$sysconfdir/amdqp/amdqpd.toml.example"; do
		[ -f "$d$f" ] || { echo "not installed: $f"; bad=1; }
	done
	# Never the live config: a reinstall must not overwrite the admin's.
	[ ! -e "$d$sysconfdir/amdqp/amdqpd.toml" ] || { echo "installs amdqpd.toml"; bad=1; }
	cmp -s "$unit" "$d$unitdir/amdqpd.service" || { echo "installed unit differs"; bad=1; }
	if [ -n "$amdqpd" ]; then
		[ -x "$d$sbin_path" ] || { echo "amdqpd is not installed at the unit's $sbin_path"; bad=1; }
	fi
	return $bad
}
if have cmake; then
	run "install: unit in $unitdir, example in $sysconfdir/amdqp${amdqpd:+, amdqpd in $sbin_path}" check_install
else
	skip_tool "install: DESTDIR install of component amdqpd" cmake
fi

# --- The example config ---------------------------------------------------
enable_all "$example" >"$tmp/all.toml"
toml_keys() {
	"$py" - "$1" <<'PY'
import sys, tomllib
# Dotted paths inside their [table] or [[table]]: runtime_dir, match.uid.
def keys(t, path=()):
    for k, v in t.items():
        if isinstance(v, dict):
            yield from keys(v, path + (k,))
        elif isinstance(v, list) and v and all(isinstance(e, dict) for e in v):
            for e in v:
                yield from keys(e, path + (k,))
        else:
            yield ".".join(path[1:] + (k,))
with open(sys.argv[1], "rb") as f:
    print("\n".join(sorted(set(keys(tomllib.load(f))))))
PY
}
if toml_keys "$tmp/all.toml" >"$tmp/keys" 2>"$tmp/out"; then
	ok "example: every setting enabled is valid TOML"
else
	not_ok "example: every setting enabled is valid TOML"
fi
undocumented() {
	local k bad=0
	[ -s "$tmp/keys" ] || { echo "no keys read from the example"; return 1; }
	while read -r k; do
		grep -qF "\`\`$k\`\`" "$guide" || { echo "$k is not in $guide"; bad=1; }
	done <"$tmp/keys"
	return $bad
}
run "example: every knob is documented in admin-guide.rst" undocumented

if [ -n "$amdqpd" ] && [ -x "$amdqpd" ]; then
	run "example: amdqpd --check-config accepts every setting enabled" \
		"$amdqpd" --check-config --config "$tmp/all.toml"
	sed 's/^min_low_share = /min_low_shares = /' "$tmp/all.toml" >"$tmp/bad.toml"
	line=$(grep -n '^min_low_shares' "$tmp/bad.toml" | cut -d: -f1)
	bad_knob_refused() {
		! "$amdqpd" --check-config --config "$tmp/bad.toml" >"$tmp/cc.out" 2>&1 || return 1
		cat "$tmp/cc.out"
		grep -q "bad.toml:$line:" "$tmp/cc.out"
	}
	run "example: amdqpd --check-config refuses a misspelt knob with file:line" bad_knob_refused
else
	skip "example: amdqpd --check-config accepts every setting enabled" "amdqpd not built"
	skip "example: amdqpd --check-config refuses a misspelt knob with file:line" "amdqpd not built"
fi

# --- Kubernetes -----------------------------------------------------------
# deploy/kubernetes/schema/check-deploy.sh (ctest deploy.kubernetes).

if [ "$failed" -gt 0 ]; then
	echo "# $failed of $n failed"
	exit 1
fi
if [ "$missing_tool" -eq 1 ]; then
	echo "# a tool is missing: scripts/deps.sh installs it"
	exit 77
fi
echo "# $n tests, $skipped skipped"
