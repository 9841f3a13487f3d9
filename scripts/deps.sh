#!/bin/bash
# Install (or check) every Debian 12 package the amdqp build, checks, VM
# tests, demo and bench need. Fast no-op when all are present.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat <<USAGE
Usage: ${0##*/} [--check-only] [--list]

Installs the packages amdqp needs on Debian 12 with apt-get (as root,
non-interactive). Kernel packages are pinned by scripts/versions.env:

  linux-headers-${AMDQP_KVER}=${AMDQP_KPKGVER}
  linux-source-${AMDQP_KSRC_SERIES}=${AMDQP_KPKGVER}
  linux-headers-${AMDQP_KVER_OLD}            (compile check only)

The VM kernel image is not needed here (scripts/fetch-kernel.sh unpacks it
into the cache), but Debian's linux-headers-${AMDQP_KVER} depends on
linux-image-${AMDQP_KVER}: apt installs that kernel into /boot too, and
on a GRUB host it becomes the default boot entry (the newest kernel). Run
this on a CI machine or container, not on a workstation you reboot; to
undo, apt-get purge linux-image-${AMDQP_KVER} (removes the headers too).
dkms and hipcc (ROCm 5.2's, for compiling tools/hw-validate) are for
kfd-glue/ci-install.sh. Debian's CPU-only python3-torch and
python3-torchvision run the experiment drivers' smoke tests (ctest);
python3-matplotlib draws the plots of 'make report'.

When everything is already installed nothing runs (no apt-get update),
except with CI=true, where the package lists are always refreshed.

  --check-only  only report what is missing; exit 1 if anything is
  --list        print the package list and exit
  -h, --help    this text

Environment: AMDQP_DEPS_EXTRA="pkg1 pkg2" adds packages; CI=true.
USAGE
}

# Packages without a pinned version.
deps_packages() {
	cat <<-PKGS
		build-essential make gcc g++ binutils bc flex bison
		libelf-dev libssl-dev dwarves kmod cpio xz-utils zstd rsync
		busybox-static qemu-system-x86
		sparse perl python3 git
		cmake pkg-config libgtest-dev googletest libgmock-dev libbenchmark-dev
		libcli11-dev nlohmann-json3-dev libhsa-runtime-dev libtomlplusplus-dev libsystemd-dev
		prometheus
		python3-venv python3-setuptools python3-pip python3-wheel-whl
		clang-format shellcheck yamllint python3-jsonschema systemd
		dkms hipcc
		python3-torch python3-torchvision python3-numpy python3-matplotlib
		linux-headers-${AMDQP_KVER_OLD}
		${AMDQP_DEPS_EXTRA:-}
	PKGS
}

# Packages that must be at exactly AMDQP_KPKGVER.
deps_pinned() {
	printf '%s\n' \
		"linux-headers-${AMDQP_KVER}" \
		"linux-source-${AMDQP_KSRC_SERIES}"
}

# Print "pkg" or "pkg=version" for each package not installed as required.
deps_missing() {
	local p v
	# One dpkg-query call for all: this is the fast path.
	declare -A have=()
	# shellcheck disable=SC2046  # word splitting of the lists is wanted
	while read -r p v; do
		[ -n "$p" ] && have[$p]="$v"
	done < <(dpkg-query -W -f='${db:Status-Status} ${Package} ${Version}\n' \
		$(deps_packages) $(deps_pinned) 2>/dev/null |
		awk '$1 == "installed" { print $2, $3 }')
	for p in $(deps_packages); do
		[ -n "${have[$p]:-}" ] || echo "$p"
	done
	for p in $(deps_pinned); do
		[ "${have[$p]:-}" = "$AMDQP_KPKGVER" ] || echo "$p=$AMDQP_KPKGVER"
	done
}

apt_opts=(-q -y -o DPkg::Lock::Timeout=600 -o APT::Get::Assume-Yes=true)

# Fail clearly when a pinned version is not in the apt sources.
deps_check_pins() {
	local spec p v
	for spec in "$@"; do
		case "$spec" in *=*) ;; *) continue ;; esac
		p="${spec%%=*}"
		v="${spec#*=}"
		if ! apt-cache madison "$p" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | grep -qxF "$v"; then
			amdqp_die "package $p version $v is not available from the apt sources.
  Available: $(apt-cache madison "$p" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); printf "%s ", $2 }')
  Pick one version for all kernel packages and change AMDQP_KPKGVER (and
  AMDQP_KVER, the ABI name in the package names) in scripts/versions.env."
		fi
	done
}

deps_install() {
	local missing
	mapfile -t missing < <(deps_missing)
	if [ ${#missing[@]} -eq 0 ] && [ "${CI:-}" != true ]; then
		return 0
	fi
	[ "$(id -u)" = 0 ] || amdqp_die "missing packages (${missing[*]}): run ${0##*/} as root"
	export DEBIAN_FRONTEND=noninteractive
	amdqp_log "apt-get update"
	apt-get "${apt_opts[@]}" update >&2
	mapfile -t missing < <(deps_missing)
	[ ${#missing[@]} -gt 0 ] || return 0
	deps_check_pins "${missing[@]}"
	amdqp_log "installing: ${missing[*]}"
	apt-get "${apt_opts[@]}" install --no-install-recommends --allow-downgrades "${missing[@]}" >&2
	mapfile -t missing < <(deps_missing)
	[ ${#missing[@]} -eq 0 ] || amdqp_die "still missing after apt-get install: ${missing[*]}"
}

main() {
	local check_only=0 m
	while [ $# -gt 0 ]; do
		case "$1" in
		--check-only) check_only=1 ;;
		--list)
			deps_packages | xargs -n1
			deps_pinned | sed "s/\$/=$AMDQP_KPKGVER/"
			return 0
			;;
		-h | --help) usage; return 0 ;;
		*) usage >&2; return 2 ;;
		esac
		shift
	done
	command -v dpkg-query >/dev/null || amdqp_die "dpkg-query not found: this needs Debian 12"
	if [ "$check_only" = 1 ]; then
		mapfile -t m < <(deps_missing)
		if [ ${#m[@]} -gt 0 ]; then
			printf 'missing: %s\n' "${m[@]}"
			return 1
		fi
		echo "all packages present"
		return 0
	fi
	deps_install
}

# Sourced: only define the functions (deps_missing, deps_install, ...).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
