#!/bin/bash
# SPDX-License-Identifier: MIT
# Checks amdqpd's packaging and deployment files, offline; prints TAP.
#   - the generated systemd unit: ExecStart, `systemd-analyze verify`,
#     its exposure score, the settings the daemon depends on;
#   - the install rules (a DESTDIR install of component amdqpd);
#   - the example config: TOML, documented, accepted by the daemon;
#   - deploy/kubernetes: yamllint, check-manifests.py (JSON schemas and
#     cross-document checks), and that the check rejects broken copies.
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

kube="$repo/deploy/kubernetes"
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
	sed -E 's/^# (\[\[?[a-z_]+\]\]?|[a-z_.]+ = .+)$/\1/' "$1"
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
	# 2.5 ("OK") today; a hardening line lost raises it.
	run "unit: systemd-analyze security exposure <= 2.5" \
		systemd-analyze security --offline=yes --threshold=25 "$tmp/verify/amdqpd.service"
else
	skip_tool "unit: systemd-analyze verify is clean" systemd-analyze
	skip_tool "unit: the verify check catches a misspelt key" systemd-analyze
	skip_tool "unit: systemd-analyze security exposure <= 2.5" systemd-analyze
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
	want 'CapabilityBoundingSet=.*CAP_DAC_OVERRIDE.*'
	want 'DeviceAllow=char-misc rw'
	want 'ProtectSystem=strict'
	want 'RuntimeDirectory=amdqp'
	# /dev/amdqp and the host's /dev/shm; other users' processes; the
	# initial user namespace for capabilities; the loopback for metrics.
	refuse_line 'PrivateDevices=(yes|true|on|1)'
	refuse_line 'ProtectProc=(invisible|noaccess)'
	refuse_line 'PrivateUsers=(yes|true|on|1)'
	refuse_line 'PrivateNetwork=(yes|true|on|1)'
	refuse_line '(Inaccessible|TemporaryFileSystem)(Paths)?=.*/dev/shm.*'
	refuse_line 'UMask=0?0[0-7]7'
	refuse_line 'Requires=.*'
	return $bad
}
run "unit: keeps what amdqpd needs (notify, watchdog, devices, /dev/shm, caps)" unit_needs "$unit"

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
manifests=("$kube"/*.yaml)
if have yamllint; then
	run "kubernetes: yamllint -s" yamllint -s -c "$kube/.yamllint" "${manifests[@]}" "$kube/.yamllint"
	printf -- '---\nkey: value \n' >"$tmp/trailing.yaml"
	refuse "kubernetes: yamllint -s catches trailing spaces" \
		yamllint -s -c "$kube/.yamllint" "$tmp/trailing.yaml"
else
	skip_tool "kubernetes: yamllint -s" yamllint
	skip_tool "kubernetes: yamllint -s catches trailing spaces" yamllint
fi

if "$py" -c 'import jsonschema, yaml, tomllib' 2>/dev/null; then
	check=("$py" "$kube/schema/check-manifests.py" --example "$example")
	run "kubernetes: manifests match schema/*.json and each other" "${check[@]}" "${manifests[@]}"
	sed 's/^  hostPID: true/  hostPID: false/' "$kube/example-inference-pod.yaml" >"$tmp/pod-nohostpid.yaml"
	refuse "kubernetes: a tagged pod without hostPID is refused" \
		"${check[@]}" "$kube/amdqpd-daemonset.yaml" "$tmp/pod-nohostpid.yaml"
	sed "s/metadata.annotations\['amdqp.io\/priority'\]/metadata.annotations['amdqp.io\/prio']/" \
		"$kube/example-inference-pod.yaml" >"$tmp/pod-badref.yaml"
	refuse "kubernetes: AMDQP_PRIORITY from another annotation is refused" \
		"${check[@]}" "$kube/amdqpd-daemonset.yaml" "$tmp/pod-badref.yaml"
	sed 's/^  *runtime_dir = .*/    runtime_dir = "\/tmp"/' "$kube/amdqpd-daemonset.yaml" >"$tmp/ds-rundir.yaml"
	refuse "kubernetes: a runtime_dir pods cannot share is refused" \
		"${check[@]}" "$tmp/ds-rundir.yaml" "$kube/example-inference-pod.yaml"
else
	for t in "kubernetes: manifests match schema/*.json and each other" \
		"kubernetes: a tagged pod without hostPID is refused" \
		"kubernetes: AMDQP_PRIORITY from another annotation is refused" \
		"kubernetes: a runtime_dir pods cannot share is refused"; do
		skip_tool "$t" "python3-jsonschema/python3-yaml"
	done
fi

if [ -n "$amdqpd" ] && [ -x "$amdqpd" ] && "$py" -c 'import yaml' 2>/dev/null; then
	"$py" -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "ConfigMap":
        sys.stdout.write(d["data"]["amdqpd.toml"])
' "$kube/amdqpd-daemonset.yaml" >"$tmp/configmap.toml"
	run "kubernetes: the ConfigMap's amdqpd.toml passes amdqpd --check-config" \
		"$amdqpd" --check-config --config "$tmp/configmap.toml"
else
	skip "kubernetes: the ConfigMap's amdqpd.toml passes amdqpd --check-config" "amdqpd not built"
fi

if [ "$failed" -gt 0 ]; then
	echo "# $failed of $n failed"
	exit 1
fi
if [ "$missing_tool" -eq 1 ]; then
	echo "# a tool is missing: scripts/deps.sh installs it"
	exit 77
fi
echo "# $n tests, $skipped skipped"
