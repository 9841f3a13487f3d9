#!/bin/bash
# SPDX-License-Identifier: MIT
# Checks deploy/kubernetes offline; prints TAP. yamllint, then
# check-manifests.py (JSON schemas, Pod Security "baseline" for tenant
# pods, the daemon's least privilege, cross-document wiring), then that the
# check refuses broken copies: each refusal is a tenant privilege or a
# daemon privilege the manifests must never regain. With --amdqpd, the
# ConfigMap's amdqpd.toml must pass the real daemon's --check-config.
# Run by ctest (deploy.kubernetes). Exit: 0 all ok, 1 a failure, 77 a tool
# is missing (yamllint, python3-yaml, python3-jsonschema).
set -euo pipefail

usage() {
	echo "Usage: ${0##*/} --example amdqpd.toml.example [--amdqpd BIN]"
}
example='' amdqpd=''
while [ $# -gt 0 ]; do
	case "$1" in
	--example) example=$2 ;;
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
[ -n "$example" ] || {
	usage >&2
	exit 2
}

kube=$(cd "$(dirname "$0")/.." && pwd)
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0 failed=0 missing_tool=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	[ -s "$tmp/out" ] && sed 's/^/# /' "$tmp/out"
	return 0
}
skip_tool() { n=$((n + 1)); missing_tool=1; echo "ok $n - $1 # SKIP $2 not installed"; }
have() { command -v "$1" >/dev/null 2>&1; }
run() {
	local name=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then ok "$name"; else not_ok "$name"; fi
}
# refuse NAME PATTERN CMD...: CMD must fail and say PATTERN (the reason).
refuse() {
	local name=$1 pattern=$2
	shift 2
	if "$@" >"$tmp/out" 2>&1; then
		not_ok "$name"
	elif grep -qE "$pattern" "$tmp/out"; then
		ok "$name"
	else
		not_ok "$name (not for: $pattern)"
	fi
}

ds="$kube/amdqpd-daemonset.yaml"
pod="$kube/example-inference-pod.yaml"
manifests=("$kube"/*.yaml)
if have yamllint; then
	run "yamllint -s" yamllint -s -c "$kube/.yamllint" "${manifests[@]}" "$kube/.yamllint"
else
	skip_tool "yamllint -s" yamllint
fi

if ! "$py" -c 'import jsonschema, yaml, tomllib' 2>/dev/null; then
	skip_tool "check-manifests.py" "python3-jsonschema/python3-yaml"
	exit 77
fi
check=("$py" "$kube/schema/check-manifests.py" --example "$example")
run "manifests match schema/*.json and each other; tenant pods pass baseline" \
	"${check[@]}" "${manifests[@]}"

# edit NAME SED-SCRIPT FILE: a broken copy in $tmp/NAME.yaml.
edit() { sed "$2" "$3" >"$tmp/$1.yaml"; }
# Tenant pods: every privilege baseline forbids, and what amdqp no longer needs.
edit pod-hostpid 's/^  automountServiceAccountToken: false/&\n  hostPID: true/' "$pod"
refuse "a tenant pod with hostPID is refused" "hostPID" "${check[@]}" "$ds" "$tmp/pod-hostpid.yaml"
edit pod-nice 's/^          drop: \["ALL"\]/&\n          add: ["SYS_NICE"]/' "$pod"
refuse "a tenant pod adding SYS_NICE is refused" "adds capabilities" \
	"${check[@]}" "$ds" "$tmp/pod-nice.yaml"
cat "$pod" >"$tmp/pod-hostpath.yaml"
printf '  volumes:\n    - name: pages\n      hostPath:\n        path: /dev/shm/amdqp\n' \
	>>"$tmp/pod-hostpath.yaml"
refuse "a tenant pod with a hostPath is refused" "hostPath" \
	"${check[@]}" "$ds" "$tmp/pod-hostpath.yaml"
edit pod-priv 's/^        allowPrivilegeEscalation: false/        privileged: true/' "$pod"
refuse "a privileged tenant container is refused" "privileged" \
	"${check[@]}" "$ds" "$tmp/pod-priv.yaml"
edit pod-ns 's/^    pod-security.kubernetes.io\/enforce: baseline/    pod-security.kubernetes.io\/enforce: privileged/' "$pod"
refuse "a tenant namespace that does not enforce baseline is refused" "not baseline" \
	"${check[@]}" "$ds" "$tmp/pod-ns.yaml"
edit pod-rundir 's/^        - name: HSA_TOOLS_LIB$/        - name: AMDQP_RUNTIME_DIR\n          value: \/run\/amdqp\n&/' "$pod"
refuse "a tenant AMDQP_RUNTIME_DIR other than the socket folder's mount is refused" \
	"AMDQP_RUNTIME_DIR=/run/amdqp " "${check[@]}" "$ds" "$tmp/pod-rundir.yaml"
edit pod-badref "s/metadata.annotations\['amdqp.io\/priority'\]/metadata.annotations['amdqp.io\/prio']/" "$pod"
refuse "AMDQP_PRIORITY from another annotation is refused" "amdqp.io/prio" \
	"${check[@]}" "$ds" "$tmp/pod-badref.yaml"
# The daemon: least privilege.
edit ds-priv 's/^            readOnlyRootFilesystem: true$/&\n            privileged: true/' "$ds"
refuse "a privileged daemon is refused" "privileged" "${check[@]}" "$tmp/ds-priv.yaml" "$pod"
edit ds-caps 's/"SYS_ADMIN", "DAC_OVERRIDE"\]/"SYS_ADMIN", "DAC_OVERRIDE", "SYS_RESOURCE"]/' "$ds"
refuse "a daemon capability not explained is refused" "SYS_RESOURCE" \
	"${check[@]}" "$tmp/ds-caps.yaml" "$pod"
edit ds-metrics 's/^    metrics = "127.0.0.1:9464"/    metrics = "0.0.0.0:9464"/' "$ds"
refuse "metrics on 0.0.0.0 are refused" "not loopback" "${check[@]}" "$tmp/ds-metrics.yaml" "$pod"
edit ds-seccomp 's/type: RuntimeDefault/type: Unconfined/' "$ds"
refuse "a daemon without seccomp RuntimeDefault is refused" "seccomp|RuntimeDefault" \
	"${check[@]}" "$tmp/ds-seccomp.yaml" "$pod"
edit ds-verbs 's/verbs: \["get", "list"\]/verbs: ["get", "list", "patch"]/' "$ds"
refuse "RBAC beyond reading pods is refused" "patch" "${check[@]}" "$tmp/ds-verbs.yaml" "$pod"
edit ds-rundir 's/^    runtime_dir = .*/    runtime_dir = "\/tmp"/' "$ds"
refuse "a runtime_dir the pods do not share is refused" "runtime_dir" \
	"${check[@]}" "$tmp/ds-rundir.yaml" "$pod"
# The daemon: its host pid namespace and socket folder, and nothing on the
# node that every user may write (the old 1777 page directory).
edit ds-hostpid '/^      hostPID: true$/d' "$ds"
refuse "a daemon without hostPID is refused" "hostPID" "${check[@]}" "$tmp/ds-hostpid.yaml" "$pod"
edit ds-shm 's|^            path: /run/amdqpd$|            path: /dev/shm/amdqp|' "$ds"
refuse "a hostPath in /dev/shm is refused" "/dev/shm" "${check[@]}" "$tmp/ds-shm.yaml" "$pod"
edit ds-1777 's|^              install -d -m 0755 /host/lib-amdqp$|              install -d -m 1777 /host/lib-amdqp|' "$ds"
refuse "an init container making a 1777 directory is refused" "world-writable" \
	"${check[@]}" "$tmp/ds-1777.yaml" "$pod"
edit ds-chmod 's|^              install -d -m 0755 /host/lib-amdqp$|&\n              chmod o+w /host/lib-amdqp|' "$ds"
refuse "an init container's chmod o+w is refused" "world-writable" \
	"${check[@]}" "$tmp/ds-chmod.yaml" "$pod"
edit ds-sockro 's|^              mountPath: /run/amdqpd$|&\n              readOnly: true|' "$ds"
refuse "the daemon's socket folder mounted read-only is refused" "read-only" \
	"${check[@]}" "$tmp/ds-sockro.yaml" "$pod"
edit ds-nosock '/^            - name: socket-dir$/,/^              mountPath: \/run\/amdqpd$/d' "$ds"
refuse "a daemon without the node's socket folder is refused" "could not reach its socket" \
	"${check[@]}" "$tmp/ds-nosock.yaml" "$pod"

if [ -n "$amdqpd" ] && [ -x "$amdqpd" ]; then
	"$py" -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "ConfigMap":
        sys.stdout.write(d["data"]["amdqpd.toml"])
' "$ds" >"$tmp/configmap.toml"
	run "the ConfigMap's amdqpd.toml passes amdqpd --check-config" \
		"$amdqpd" --check-config --config "$tmp/configmap.toml"
fi

if [ "$failed" -gt 0 ]; then
	echo "# $failed of $n failed"
	exit 1
fi
[ "$missing_tool" -eq 1 ] && exit 77
echo "# $n tests"
