#!/bin/bash
# Boot Debian's pinned 6.12 kernel in QEMU (TCG) with a busybox initramfs,
# load modules, run one guest command, bring its exit status, dmesg and
# chosen files back. See --help and Documentation/testing.rst.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
. "$here/../../scripts/lib.sh"

# Harness errors: one "FAIL:" line on stdout (counted by scripts/check.sh)
# and exit status 125, so that they are never mistaken for test results.
amdqp_die() {
	printf '%s: FAIL: %s\n' "${0##*/}" "$*"
	exit 125
}

usage() {
	cat <<USAGE
Usage: ${0##*/} [OPTIONS] -- GUEST_COMMAND...

Boots linux-image-${AMDQP_KVER} (pinned in scripts/versions.env, fetched
into .cache/ by scripts/fetch-kernel.sh) in qemu-system-x86_64 -accel tcg
with a busybox initramfs, runs GUEST_COMMAND as root with /bin/sh (the
words are joined with spaces, as ssh does), streams the guest console to
stdout and exits with the guest command's exit status.

Inputs:
  --module PATH.ko         insmod PATH.ko at boot, in the order given; a
                           failure is fatal (exit 125). The file is also
                           at /modules/NAME.ko in the guest.
  --module-file PATH.ko    only copy PATH.ko to /modules/NAME.ko (the guest
                           command loads/unloads it itself)
  --stock-module NAME      insmod the pinned kernel's own module NAME with
                           its dependencies (modules.dep/softdep order),
                           before any --module. Decompressed on the host.
  --stock-deps NAME        like --stock-module, but only NAME's
                           dependencies (e.g. to load a rebuilt amdgpu.ko)
  --file HOST[:GUEST]      copy a file (default guest path /files/NAME)
  --dir HOSTDIR:GUESTDIR   copy a folder's contents recursively
  --dyn PATH[:GUEST]       copy a dynamically linked program or shared
                           library (default guest path: PATH made absolute)
                           with every library ldd lists for it and the ELF
                           loader, each at its host path (see below); a
                           library ldd cannot find is fatal. Repeatable; name
                           dlopen()ed libraries this way, ldd cannot see them
  --dyn-dir HOSTDIR:GUESTDIR  --dir, plus the libraries of every ELF program
                           and shared library in the folder (executable or
                           named *.so*); libraries not found are warnings
  --python                 carry a Python 3 interpreter (\$AMDQP_VM_PYTHON,
                           default /usr/bin/python3) with its standard
                           library (without test, idlelib, tkinter,
                           turtledemo, ensurepip, lib2to3, pydoc_data,
                           config-*, site-packages) and the libraries of its
                           extension modules; /usr/bin/python3 runs it
  --env NAME=VALUE         export a variable to the guest command
Outputs:
  --out GUEST:HOST         copy a guest file back to HOST after the command
                           (missing file = failure). Binary-safe, checksummed.
  --out-optional GUEST:HOST  the same, but a missing file is not a failure
  --dmesg HOST             write the guest's full dmesg to HOST
  --console-log HOST       write the console log (what is streamed) to HOST
Machine:
  --mem MB                 guest memory (default \${AMDQP_VM_MEM:-1024})
  --cpus N                 vCPUs (default \${AMDQP_VM_CPUS:-2})
  --timeout SEC            wall-clock limit for the whole VM run (default
                           \${AMDQP_VM_TIMEOUT:-600}); the guest command is
                           stopped some seconds earlier so dmesg still arrives
  --append ARGS            extra kernel command line arguments
  --panic-on-oops          add oops=panic (stop at the first oops)
  --kernel PATH            boot another bzImage (default: the pinned one)
  --interactive            keep stdin attached to the serial console
  -h, --help               this text

Guest environment: / is the initramfs (writable); proc, sysfs, devtmpfs,
debugfs (/sys/kernel/debug), tracefs (/sys/kernel/tracing), tmpfs /tmp,
/run and /dev/shm are mounted; users root (0), user (1000) and nobody
(65534) exist; busybox provides the tools (su, setpriv, timeout, ...).
Guest paths for --file/--dir/--dyn must not be under /tmp, /run, /proc,
/sys, /dev (they are mounted over) or /amdqp (the harness's).

Dynamic programs: the guest has no libc of its own, so programs must be
static unless they come with --dyn, --dyn-dir or --python. Libraries go
to their host paths (host symlinked folders such as /lib -> usr/lib are
mirrored), so absolute RUNPATHs of build trees keep working; a library
whose host path is hidden in the guest (under /tmp, ...) goes to
/opt/amdqp-vm-libs/HOSTPATH instead. /etc/ld.so.cache is generated
(ldconfig -r) for the folders that got libraries, so the loader finds
them by soname too. \$ORIGIN RUNPATHs resolve against the guest path: keep
a build tree's relative layout (--dyn-dir, or --dyn at the host path).

Exit status: the guest command's status; 1 when it succeeded but the
kernel log shows an oops/BUG/WARNING/Call Trace/panic/lockup; 124 on
timeout; 125 on harness errors (module load failure, no status from the
guest, a missing --out file, QEMU failure).

Environment knobs: AMDQP_VM_MEM, AMDQP_VM_CPUS, AMDQP_VM_TIMEOUT,
AMDQP_VM_APPEND (extra cmdline), AMDQP_VM_DMESG_IGNORE (extended regex of
dmesg lines not to treat as failures), AMDQP_VM_KEEP=1 (keep the work
folder), AMDQP_VM_QEMU (qemu binary), AMDQP_CACHE (cache folder),
AMDQP_VM_PYTHON (the interpreter --python carries), AMDQP_VM_NICE (run
QEMU at this nice value, e.g. -10 for timing runs on a shared host; a
negative value needs root: refused with a note otherwise).

Examples:
  ${0##*/} --module-file kmod/amdqp.ko --dir selftests/out:/tests -- /tests/run-guest.sh
  ${0##*/} --dyn build/user/tools/amdqpctl/amdqpctl:/usr/bin/amdqpctl -- amdqpctl --help
USAGE
}

die_usage() {
	printf '%s: %s (see --help)\n' "${0##*/}" "$*" >&2
	exit 125
}

mem="${AMDQP_VM_MEM:-1024}"
cpus="${AMDQP_VM_CPUS:-2}"
timeout_s="${AMDQP_VM_TIMEOUT:-600}"
append="${AMDQP_VM_APPEND:-}"
qemu="${AMDQP_VM_QEMU:-qemu-system-x86_64}"
vm_nice="${AMDQP_VM_NICE:-}"
kernel=
interactive=0
panic_on_oops=0
dmesg_host=
console_host=
modules=()
stock_full=()
stock_deps=()
files=()   # "HOST<TAB>GUEST"
dirs=()    # "HOST<TAB>GUEST"
dyns=()    # "HOST<TAB>GUEST" (GUEST empty: the host path)
dyn_dirs=() # "HOST<TAB>GUEST"
python=0
outs=()    # "GUEST<TAB>HOST<TAB>required|optional"
envs=()
tab=$'\t'

need_arg() {
	[ $# -ge 2 ] || die_usage "$1 needs an argument"
}

check_guest_path() {
	case "$1" in
	/*) ;;
	*) die_usage "guest path '$1' must be absolute" ;;
	esac
	case "$1" in
	/tmp | /tmp/* | /run | /run/* | /proc | /proc/* | /sys | /sys/* | /dev | /dev/* | /amdqp | /amdqp/*)
		die_usage "guest path '$1' is hidden by a mount in the guest; choose another"
		;;
	esac
}

while [ $# -gt 0 ]; do
	case "$1" in
	--module)
		need_arg "$@"
		modules+=("$2")
		shift
		;;
	--module-file)
		need_arg "$@"
		files+=("$2$tab/modules/${2##*/}")
		shift
		;;
	--stock-module)
		need_arg "$@"
		stock_full+=("$2")
		shift
		;;
	--stock-deps)
		need_arg "$@"
		stock_deps+=("$2")
		shift
		;;
	--file)
		need_arg "$@"
		case "$2" in
		*:/*) files+=("${2%:/*}$tab/${2##*:/}") ;;
		*) files+=("$2$tab/files/${2##*/}") ;;
		esac
		shift
		;;
	--dir)
		need_arg "$@"
		case "$2" in
		*:/*) dirs+=("${2%:/*}$tab/${2##*:/}") ;;
		*) die_usage "--dir needs HOSTDIR:GUESTDIR" ;;
		esac
		shift
		;;
	--dyn)
		need_arg "$@"
		case "$2" in
		*:/*) dyns+=("${2%:/*}$tab/${2##*:/}") ;;
		*) dyns+=("$2$tab") ;;
		esac
		shift
		;;
	--dyn-dir)
		need_arg "$@"
		case "$2" in
		*:/*) dyn_dirs+=("${2%:/*}$tab/${2##*:/}") ;;
		*) die_usage "--dyn-dir needs HOSTDIR:GUESTDIR" ;;
		esac
		shift
		;;
	--python) python=1 ;;
	--out | --out-optional)
		need_arg "$@"
		req=required
		[ "$1" = --out ] || req=optional
		case "$2" in
		/*:?*) outs+=("${2%%:*}$tab${2#*:}$tab$req") ;;
		*) die_usage "$1 needs /GUESTPATH:HOSTPATH" ;;
		esac
		shift
		;;
	--env)
		need_arg "$@"
		[[ "$2" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die_usage "--env needs NAME=VALUE"
		envs+=("$2")
		shift
		;;
	--dmesg) need_arg "$@"; dmesg_host="$2"; shift ;;
	--console-log) need_arg "$@"; console_host="$2"; shift ;;
	--mem) need_arg "$@"; mem="$2"; shift ;;
	--cpus) need_arg "$@"; cpus="$2"; shift ;;
	--timeout) need_arg "$@"; timeout_s="$2"; shift ;;
	--append) need_arg "$@"; append="$append $2"; shift ;;
	--kernel) need_arg "$@"; kernel="$2"; shift ;;
	--panic-on-oops) panic_on_oops=1 ;;
	--interactive) interactive=1 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) die_usage "unknown option '$1'" ;;
	esac
	shift
done
[ $# -gt 0 ] || die_usage "no guest command given after --"
guest_cmd="$*"

for n in "$mem" "$cpus" "$timeout_s"; do
	[[ "$n" =~ ^[1-9][0-9]*$ ]] || die_usage "'$n' is not a positive number"
done
command -v "$qemu" >/dev/null || amdqp_die "$qemu not found: run scripts/deps.sh (package qemu-system-x86)"
command -v busybox >/dev/null || [ -x /bin/busybox ] || amdqp_die "busybox not found: run scripts/deps.sh (package busybox-static)"
busybox="$(command -v busybox || echo /bin/busybox)"
if ! file_out="$(LC_ALL=C readelf -l "$busybox" 2>/dev/null)" || grep -q 'INTERP' <<<"$file_out"; then
	amdqp_die "$busybox is not a static binary: install busybox-static (scripts/deps.sh)"
fi

# --- kernel and module tree ------------------------------------------------
moddir=
if [ -z "$kernel" ] || [ ${#stock_full[@]} -gt 0 ] || [ ${#stock_deps[@]} -gt 0 ]; then
	mapfile -t kpaths < <(bash "$AMDQP_ROOT/scripts/fetch-kernel.sh")
	[ ${#kpaths[@]} -eq 2 ] || amdqp_die "scripts/fetch-kernel.sh failed"
	[ -n "$kernel" ] || kernel="${kpaths[0]}"
	moddir="${kpaths[1]}"
fi
[ -r "$kernel" ] || amdqp_die "kernel image $kernel not readable"

note() { # harness messages go to stdout, in order with the console
	printf '%s: %s\n' "${0##*/}" "$*"
}

for m in "${modules[@]}"; do
	[ -f "$m" ] || amdqp_die "--module $m: no such file"
done

work="$(mktemp -d "${TMPDIR:-/tmp}/amdqp-vm.XXXXXX")"
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
	if [ "${AMDQP_VM_KEEP:-0}" = 1 ]; then
		amdqp_log "work folder kept: $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

cpio_of() { # cpio_of STAGEDIR > archive: newc, root-owned, sorted
	(cd "$1" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc -R 0:0 --quiet)
}

icache="$AMDQP_CACHE/initramfs"
mkdir -p "$icache"

# --- piece 1: busybox, /init, /etc (cached by content) ----------------------
base_key="$({
	sha256sum "$busybox" "$here/guest-init.sh"
	echo "base-v1"
} | sha256sum | cut -c1-16)"
base_cpio="$icache/base-$base_key.cpio"
build_base() {
	[ -f "$base_cpio" ] && return 0
	local st="$work/base" l
	mkdir -p "$st"/{bin,sbin,usr/bin,usr/sbin,etc,root,home/user,proc,sys,dev,tmp,run,modules,files,amdqp}
	cp "$busybox" "$st/bin/busybox"
	while IFS= read -r l; do
		[ "$l" = bin/busybox ] && continue
		mkdir -p "$st/$(dirname "$l")"
		ln -sf /bin/busybox "$st/$l"
	done < <("$busybox" --list-full)
	install -m 0755 "$here/guest-init.sh" "$st/init"
	cat >"$st/etc/passwd" <<-'PW'
		root:x:0:0:root:/root:/bin/sh
		user:x:1000:1000:test user:/home/user:/bin/sh
		nobody:x:65534:65534:nobody:/nonexistent:/bin/sh
	PW
	cat >"$st/etc/group" <<-'GR'
		root:x:0:
		user:x:1000:
		nogroup:x:65534:
	GR
	echo amdqp-vm >"$st/etc/hostname"
	chmod 1777 "$st/tmp"
	chown 1000:1000 "$st/home/user"
	cpio_of "$st" >"$base_cpio.tmp.$$"
	mv "$base_cpio.tmp.$$" "$base_cpio"
}
build_base

# --- piece 2: stock modules with dependencies (cached by module set) --------
stock_list=()
resolve_stock() { # resolve_stock NAME full|deps: print .ko(.xz) paths in order
	local out
	out="$(modprobe -d "${moddir%/lib/modules/*}" -S "$AMDQP_KVER" --show-depends "$1" 2>&1)" ||
		amdqp_die "stock module '$1' not found in $moddir: $out"
	awk '$1 == "insmod" { print $2 }' <<<"$out" |
		if [ "$2" = deps ]; then sed '$d'; else cat; fi
}
if [ ${#stock_full[@]} -gt 0 ] || [ ${#stock_deps[@]} -gt 0 ]; then
	declare -A seen=()
	for name in "${stock_full[@]}" "${stock_deps[@]}"; do
		mode=full
		for d in "${stock_deps[@]}"; do [ "$d" = "$name" ] && mode=deps; done
		while IFS= read -r p; do
			[ -n "$p" ] || continue
			[ -z "${seen[$p]:-}" ] || continue
			seen[$p]=1
			stock_list+=("$p")
		done < <(resolve_stock "$name" "$mode")
	done
fi
stock_cpio=
if [ ${#stock_list[@]} -gt 0 ]; then
	stock_key="$(printf '%s\n' "$AMDQP_KPKGVER" "${stock_list[@]}" | sha256sum | cut -c1-16)"
	stock_cpio="$icache/stock-$stock_key.cpio"
	if [ ! -f "$stock_cpio" ]; then
		st="$work/stock"
		mkdir -p "$st/amdqp"
		: >"$st/amdqp/stock.list"
		for p in "${stock_list[@]}"; do
			rel="lib/modules/$AMDQP_KVER/${p#"$moddir"/}"
			rel="${rel%.xz}"
			rel="${rel%.zst}"
			rel="${rel%.gz}"
			mkdir -p "$st/$(dirname "$rel")"
			case "$p" in
			*.xz) xz -dc "$p" >"$st/$rel" ;;
			*.zst) zstd -qdc "$p" >"$st/$rel" ;;
			*.gz) gzip -dc "$p" >"$st/$rel" ;;
			*) cp "$p" "$st/$rel" ;;
			esac
			echo "/$rel" >>"$st/amdqp/stock.list"
		done
		cpio_of "$st" >"$stock_cpio.tmp.$$"
		mv "$stock_cpio.tmp.$$" "$stock_cpio"
	fi
fi

# --- piece 3: this run's files and settings ---------------------------------
st="$work/payload"
mkdir -p "$st/amdqp" "$st/modules"
[ -n "$stock_cpio" ] || : >"$st/amdqp/stock.list"
: >"$st/amdqp/modules.list"
for m in "${modules[@]}"; do
	cp "$m" "$st/modules/${m##*/}"
	echo "/modules/${m##*/}" >>"$st/amdqp/modules.list"
done
for f in "${files[@]}"; do
	h="${f%%"$tab"*}"
	g="${f#*"$tab"}"
	check_guest_path "$g"
	[ -f "$h" ] || amdqp_die "--file $h: no such file"
	mkdir -p "$st$(dirname "$g")"
	cp -L --preserve=mode "$h" "$st$g"
done
for d in "${dirs[@]}"; do
	h="${d%%"$tab"*}"
	g="${d#*"$tab"}"
	check_guest_path "$g"
	[ -d "$h" ] || amdqp_die "--dir $h: no such folder"
	mkdir -p "$st$g"
	cp -a "$h/." "$st$g/"
done
# --- dynamic programs: --dyn, --dyn-dir, --python ----------------------------
# Folders that are real in the base piece: a symlink over one of them in
# this piece would not replace it when the kernel unpacks the archives.
declare -A base_dirs=()
for d in /bin /sbin /usr /usr/bin /usr/sbin /etc /root /home /home/user \
	/proc /sys /dev /tmp /run /modules /files /amdqp; do
	base_dirs[$d]=1
done
declare -A carried=()  # guest path -> host path
declare -A lib_dirs=() # guest folders holding libraries, for ld.so.cache

guest_path_hidden() {
	case "$1" in
	/tmp | /tmp/* | /run | /run/* | /proc | /proc/* | /sys | /sys/* | /dev | /dev/* | /amdqp | /amdqp/*)
		return 0
		;;
	esac
	return 1
}

# stage_dir GUESTDIR: create it in the payload. Where the same path is a
# symlink on the host (/lib -> usr/lib on merged-/usr systems) the guest
# gets the symlink too, so that a file has one copy whatever path names it.
stage_dir() {
	local p="" c rest="${1#/}" t
	while [ -n "$rest" ]; do
		c="${rest%%/*}"
		if [ "$c" = "$rest" ]; then rest=""; else rest="${rest#*/}"; fi
		case "$c" in "" | .) continue ;; esac
		p="$p/$c"
		if [ -e "$st$p" ] || [ -L "$st$p" ]; then
			continue
		fi
		if [ -z "${base_dirs[$p]:-}" ] && [ -L "$p" ]; then
			t="$(readlink "$p")"
			case "$t" in
			/*) t="$(realpath -s -m --relative-to="$(dirname "$p")" "$t")" ;;
			esac
			ln -s "$t" "$st$p"
			stage_dir "$(realpath -s -m "$(dirname "$p")/$t")"
		else
			mkdir "$st$p"
		fi
	done
}

# carry_file HOST GUEST: copy the file's content (symlinks followed)
carry_file() {
	[ -z "${carried[$2]:-}" ] || return 0
	stage_dir "$(dirname "$2")"
	cp -L --preserve=mode "$1" "$st$2"
	carried[$2]="$1"
}

# is_dyn_elf FILE: an ELF executable or shared object (e_type 2 or 3)
is_dyn_elf() {
	local h
	h="$(od -An -tx1 -N18 "$1" 2>/dev/null | tr -d ' \n')"
	case "$h" in
	7f454c46????????????????????????0[23]00) return 0 ;;
	esac
	return 1
}

# carry_deps HOSTFILE WHAT strict|lax: carry every library ldd lists for
# HOSTFILE (the whole closure) and the loader. strict: a library that ldd
# does not find is a harness error; lax: a warning.
carry_deps() {
	local out line lib g m
	out="$(LC_ALL=C env -u LD_PRELOAD -u LD_AUDIT ldd "$1" 2>&1)" || true
	case "$out" in
	*"not a dynamic executable"* | *"statically linked"*) return 0 ;;
	esac
	while IFS= read -r line; do
		case "$line" in
		*"=> not found"*)
			m="${line%% =>*}"
			m="${m#"${m%%[![:space:]]*}"}"
			[ "$3" = lax ] ||
				amdqp_die "$2: $1 needs $m, which ldd does not find on the host (LD_LIBRARY_PATH?)"
			note "warning: $2: $1 needs $m, which ldd does not find on the host; it will not load in the guest"
			continue
			;;
		*"=> /"*) lib="${line#*=> }" ;;
		[[:space:]]/*) lib="${line#"${line%%/*}"}" ;;
		*) continue ;;
		esac
		lib="${lib%% (0x*}"
		g="$lib"
		guest_path_hidden "$g" && g="/opt/amdqp-vm-libs$lib"
		carry_file "$lib" "$g"
		lib_dirs[$(dirname "$g")]=1
	done <<<"$out"
}

for d in "${dyns[@]}"; do
	h="${d%%"$tab"*}"
	g="${d#*"$tab"}"
	[ -f "$h" ] || amdqp_die "--dyn $h: no such file"
	[ -n "$g" ] || g="$h"
	g="$(realpath -s -m "$g")"
	guest_path_hidden "$g" && die_usage "--dyn $h: guest path '$g' is hidden by a mount in the guest; name one: --dyn $h:/GUESTPATH"
	check_guest_path "$g"
	carry_file "$h" "$g"
	carry_deps "$h" --dyn strict
done
for d in "${dyn_dirs[@]}"; do
	h="${d%%"$tab"*}"
	g="${d#*"$tab"}"
	check_guest_path "$g"
	[ -d "$h" ] || amdqp_die "--dyn-dir $h: no such folder"
	stage_dir "$g"
	cp -a "$h/." "$st$g/"
	while IFS= read -r -d '' f; do
		is_dyn_elf "$f" && carry_deps "$f" "--dyn-dir $h" lax
	done < <(find "$h" -type f \( -perm -u+x -o -name '*.so' -o -name '*.so.*' \) -print0)
done
if [ "$python" = 1 ]; then
	py="${AMDQP_VM_PYTHON:-/usr/bin/python3}"
	command -v "$py" >/dev/null || amdqp_die "--python: $py not found (package python3, or set AMDQP_VM_PYTHON)"
	# The real interpreter and where its standard library lives
	mapfile -t pyinfo < <("$py" -I -c 'import os, sys; print(os.path.realpath(sys.executable)); print(os.path.dirname(os.__file__))')
	[ ${#pyinfo[@]} -eq 2 ] || amdqp_die "--python: $py did not report its paths"
	pyexe="${pyinfo[0]}"
	pylib="${pyinfo[1]}"
	guest_path_hidden "$pyexe" && amdqp_die "--python: $pyexe is under a folder the guest hides"
	carry_file "$pyexe" "$pyexe"
	carry_deps "$pyexe" --python strict
	if [ "$pyexe" != /usr/bin/python3 ]; then
		stage_dir /usr/bin
		ln -sfn "$pyexe" "$st/usr/bin/python3"
	fi
	stage_dir "$pylib"
	tar -C "$pylib" -ch --exclude=./test --exclude=./idlelib --exclude=./tkinter \
		--exclude=./turtledemo --exclude=./ensurepip --exclude=./lib2to3 \
		--exclude=./pydoc_data --exclude='./config-*' --exclude=./site-packages \
		--exclude='./lib-dynload/_test*' --exclude='./lib-dynload/_tkinter*' . |
		tar -C "$st$pylib" -x ||
		amdqp_die "--python: copying $pylib failed"
	while IFS= read -r -d '' f; do
		carry_deps "$f" "--python" lax
	done < <(find "$st$pylib" -name '*.so' -type f -printf "$pylib/%P\\0")
fi
if [ ${#carried[@]} -gt 0 ]; then
	if [ ${#lib_dirs[@]} -gt 0 ]; then
		mkdir -p "$st/etc"
		printf '%s\n' "${!lib_dirs[@]}" | LC_ALL=C sort >"$st/etc/ld.so.conf"
		ldconfig="$(PATH="$PATH:/sbin:/usr/sbin" command -v ldconfig || true)"
		if [ -n "$ldconfig" ]; then
			"$ldconfig" -X -r "$st" || amdqp_die "ldconfig -r $st failed"
		else
			note "warning: no ldconfig on the host: the guest loader finds libraries only in its default folders and RUNPATHs"
		fi
	fi
	note "carried ${#carried[@]} files for dynamic programs ($(du -sm "$st" | cut -f1) MiB payload)"
fi
: >"$st/amdqp/out.list"
for o in "${outs[@]}"; do
	printf '%s\n' "${o%%"$tab"*}" >>"$st/amdqp/out.list"
done
printf '%s\n' "$guest_cmd" >"$st/amdqp/cmd.sh"
# The guest command gets a few seconds less than the VM so that dmesg and
# the status still reach the host when it hangs.
if [ "$timeout_s" -gt 60 ]; then
	cmd_timeout=$((timeout_s - 30))
else
	cmd_timeout=$((timeout_s * 2 / 3))
fi
{
	echo "AMDQP_VM_CMD_TIMEOUT=$cmd_timeout"
	echo "AMDQP_VM_INTERACTIVE=$interactive"
	for e in "${envs[@]}"; do
		v="${e#*=}"
		printf "export %s='%s'\n" "${e%%=*}" "${v//\'/\'\\\'\'}"
	done
} >"$st/amdqp/env"
cpio_of "$st" >"$work/payload.cpio"

initrd="$work/initrd.cpio"
cat "$base_cpio" ${stock_cpio:+"$stock_cpio"} "$work/payload.cpio" >"$initrd"

# --- boot -------------------------------------------------------------------
# From here on in braces: parsed at once, so that editing this file while a
# VM runs cannot derail the result handling.
{
cmdline="console=ttyS0 panic=-1 loglevel=4 edd=off rdinit=/init"
[ "$panic_on_oops" = 0 ] || cmdline="$cmdline oops=panic"
[ -z "${append// /}" ] || cmdline="$cmdline ${append# }"

ctl_file="$work/ctl.txt"
console="$work/console.log"
: >"$ctl_file"
# shellcheck disable=SC2054  # the commas are QEMU syntax
qemu_args=(
	-accel tcg -cpu max -m "$mem" -smp "$cpus"
	-nodefaults -nographic -no-reboot
	-serial stdio
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline"
	-device virtio-serial-pci,id=vser
	-chardev "file,id=ctl,path=$ctl_file"
	-device virtserialport,bus=vser.0,chardev=ctl,name=amdqp.ctl
)

# early_fault: the guest kernel panicked while no module was loaded, so
# before anything of amdqp ran (TCG has faulted in the kernel's own text
# patching this way, "Oops: int3" at boot): worth one more boot.
early_fault() {
	grep -q 'Kernel panic' "$console" &&
		! grep 'Modules linked in:' "$console" | grep -q 'Modules linked in: *[^ ]'
}

# Timing runs (demo, bench): the emulated CPUs' wake-ups are what they
# measure, so host work must not delay them.
qemu_cmd=("$qemu")
if [ -n "$vm_nice" ]; then
	[[ "$vm_nice" =~ ^-?[0-9]+$ ]] || amdqp_die "AMDQP_VM_NICE=$vm_nice: not an integer"
	if [ "$vm_nice" -lt 0 ] && [ "$(id -u)" != 0 ]; then
		note "AMDQP_VM_NICE=$vm_nice needs root: QEMU runs at the default priority (timings see host load)"
	else
		# With autogroup scheduling (most desktop and CI kernels) nice
		# only ranks threads inside one session: QEMU gets a session of
		# its own and that session's autogroup gets the nice value.
		# shellcheck disable=SC2016  # expanded by that sh
		qemu_cmd=(setsid sh -c 'n=$1; shift; [ ! -w /proc/self/autogroup ] ||
			echo "$n" >/proc/self/autogroup; exec nice -n "$n" "$@"' vm-nice "$vm_nice" "$qemu")
		note "QEMU at nice $vm_nice (its own autogroup)"
	fi
fi

start=$SECONDS
for attempt in 1 2; do
	note "booting $(basename "$kernel") (tcg, ${cpus} vCPUs, ${mem} MiB, timeout ${timeout_s}s): $guest_cmd"
	: >"$ctl_file"
	set +e
	if [ "$interactive" = 1 ]; then
		timeout -k 10 "$timeout_s" "${qemu_cmd[@]}" "${qemu_args[@]}" 2>&1 |
			sed -u -e 's/\r$//' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' | tee "$console"
	else
		timeout -k 10 "$timeout_s" "${qemu_cmd[@]}" "${qemu_args[@]}" </dev/null 2>&1 |
			sed -u -e 's/\r$//' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' | tee "$console"
	fi
	qemu_rc=${PIPESTATUS[0]}
	set -e
	if [ "$attempt" != 1 ] || ! early_fault; then
		break
	fi
	note "the guest kernel panicked before any module was loaded (an emulation fault, not amdqp): booting once more"
done
elapsed=$((SECONDS - start))

[ -z "$console_host" ] || cp "$console" "$console_host"

# --- results ------------------------------------------------------------------
# extract_block TAG DEST: decode a base64 block, verify its checksum.
extract_block() {
	local sum
	sum="$(awk -v tag="$1" '
		$1 == "AMDQP-CTL" && $2 == "end" && $3 == tag { print $4; exit }
	' "$ctl_file")"
	[ -n "$sum" ] || return 1
	awk -v tag="$1" '
		$1 == "AMDQP-CTL" && $2 == "begin" && $3 == tag { on = 1; next }
		$1 == "AMDQP-CTL" && $2 == "end" && $3 == tag { exit }
		on { print }
	' "$ctl_file" | base64 -d >"$2" || return 1
	[ "$(sha256sum "$2" | cut -d' ' -f1)" = "$sum" ]
}

ctl_word() { # the first CTL line starting with WORD: print its argument
	awk -v w="$1" '$1 == "AMDQP-CTL" && $2 == w { print ($3 == "" ? "-" : $3); exit }' "$ctl_file"
}

status=0
fail() {
	local code="$1"
	shift
	printf '%s: FAIL: %s\n' "${0##*/}" "$*"
	[ "$status" != 0 ] || status="$code"
}

guest_rc="$(ctl_word exit)"
if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
	fail 124 "timeout: the VM ran longer than ${timeout_s}s and was killed (raise --timeout or AMDQP_VM_TIMEOUT; a hang in the guest?)"
elif [ -z "$guest_rc" ]; then
	if grep -q 'Kernel panic' "$console"; then
		fail 125 "the guest kernel panicked (see the console above)"
	else
		fail 125 "no exit status from the guest (QEMU exit code $qemu_rc; guest crashed or init failed)"
	fi
fi
if [ -n "$(ctl_word modfail)" ]; then
	fail 125 "insmod $(ctl_word modfail) failed in the guest"
fi
if [ -n "$(ctl_word timeout)" ]; then
	fail 124 "guest command timed out after $(ctl_word timeout)s (guest-side limit = --timeout minus a margin)"
fi
if [ -n "$guest_rc" ] && [ -z "$(ctl_word "done")" ]; then
	fail 125 "the guest's report is incomplete (control channel ended early)"
fi

dmesg="$work/dmesg.txt"
if extract_block dmesg "$dmesg"; then
	[ -z "$dmesg_host" ] || cp "$dmesg" "$dmesg_host"
	echo "---- guest dmesg since init ----"
	awk '/amdqp-vm: ==== init/ { on = 1 } on { print "dmesg: " $0 }' "$dmesg"
	echo "---- end of guest dmesg ----"
	splat='Oops|BUG:|kernel BUG|WARNING:|Call Trace|Kernel panic|general protection fault|UBSAN:|KASAN:|KFENCE:|list_(add|del) corruption|refcount_t:|soft lockup|hard LOCKUP|blocked for more than|rcu: INFO|detected stalls|Unable to handle|invalid opcode:|double fault|stack-protector|segfault at'
	if [ -n "${AMDQP_VM_DMESG_IGNORE:-}" ]; then
		hits="$(grep -E "$splat" "$dmesg" | grep -Ev "$AMDQP_VM_DMESG_IGNORE" || true)"
	else
		hits="$(grep -E "$splat" "$dmesg" || true)"
	fi
	if [ -n "$hits" ]; then
		printf '%s\n' "$hits" | sed 's/^/splat: /'
		fail 1 "kernel oops/BUG/WARNING/Call Trace in the guest's dmesg (lines marked 'splat:')"
	fi
elif [ -n "$guest_rc" ]; then
	fail 125 "guest dmesg did not arrive intact"
fi

i=0
for o in "${outs[@]}"; do
	i=$((i + 1))
	g="${o%%"$tab"*}"
	h="${o#*"$tab"}"
	req="${h#*"$tab"}"
	h="${h%"$tab"*}"
	if grep -qx "AMDQP-CTL missing out.$i" "$ctl_file"; then
		if [ "$req" = required ]; then
			fail 125 "--out $g: the file does not exist in the guest"
		else
			note "--out-optional $g: not written in the guest"
		fi
	elif [ -n "$guest_rc" ]; then
		mkdir -p "$(dirname "$h")"
		if extract_block "out.$i" "$h.tmp.$$"; then
			mv "$h.tmp.$$" "$h"
			note "copied $g to $h ($(wc -c <"$h") bytes)"
		else
			rm -f "$h.tmp.$$"
			fail 125 "--out $g: did not arrive intact"
		fi
	fi
done

if [ -n "$guest_rc" ] && [ "$guest_rc" != 0 ] && [ "$status" != 124 ] && [ -z "$(ctl_word modfail)" ]; then
	printf '%s: guest command exited with status %s\n' "${0##*/}" "$guest_rc"
	status="$guest_rc"
fi
note "VM run took ${elapsed}s, exit status $status"
exit "$status"
}
