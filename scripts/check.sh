#!/bin/bash
# The whole amdqp test run ('make check', .ci/run): dependencies, module
# builds (6.12 W=1, 6.1), checkpatch, sparse, selftests in the VM, ctest,
# the kfd-glue hook. Ends with one line "N passed, N failed".
# shellcheck disable=SC2317  # stage functions are called indirectly ("$fn")
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

all_stages=(deps build build-old checkpatch sparse selftests-build vm vm-stub ctest kfd-glue kfd-install vm-debug)

usage() {
	cat <<USAGE
Usage: ${0##*/} [--only STAGE[,STAGE...]] [--skip STAGE[,STAGE...]] [--list]

Runs every check of the project in order and reports each stage as a
TAP line ('ok N - stage: details (time)'), with the stage's output as
'# ' comment lines. Tests are counted: stages with test results (checkpatch
per file, the VM selftests per test, ctest per test, the kfd-glue hook per
test) add their counts, the others count as one test each. The last line
is always "N passed, N failed"; the exit status is 1 if anything failed.

Stages (in order):
  deps             scripts/deps.sh (installs missing packages; CI=true: apt-get update)
  build            make modules W=1 against ${AMDQP_KVER} headers, in a copy
                   of the tree (\$AMDQP_BUILDS/build-6.12); any warning fails
  build-old        make modules against ${AMDQP_KVER_OLD} headers (copy in
                   \$AMDQP_BUILDS/build-6.1); errors and warnings fail
  checkpatch       checkpatch.pl --strict --no-tree on kmod/ and uapi/linux/
                   (--file), and kfd-glue/patches/linux-6.12/*.patch (patch mode)
  sparse           make modules C=2 on the 6.12 copy; any sparse report fails
  selftests-build  make -C selftests KSRC=\$(scripts/kernel-src.sh --minimal)
  vm               selftests/vm/run-vm.sh: amdqp.ko, amdqp_sim.ko at /modules,
                   selftests/out at /tests, runs /tests/run-guest.sh; TAP counted
  vm-stub          selftests/vm/run-stub.sh: amdqp.ko's kfd backend against
                   the stub glue provider (kmod/testing/amdqp_kfdstub.ko from
                   the build stage) in the VM, hws and mes; TAP counted
  ctest            cmake + build (AMDQP_WERROR=ON) + ctest in build/user
                   (skipped only when there is no CMakeLists.txt); tests
                   labelled vm boot the VM with the build stage's modules
                   (CI=true: a missing VM input fails them instead of a skip);
                   then the shipped targets (no tests) in Release with
                   AMDQP_WERROR=ON in build/user-release (a failure counts)
  kfd-glue         kfd-glue/check.sh if it exists (prints TAP; counted), after
                   'make modules' in the working tree (it loads kmod/amdqp.ko)
  kfd-install      kfd-glue/ci-install.sh: dkms-overlay.sh for real against
                   the pinned linux-source and in dry-run on an amdgpu-dkms
                   layout, dkms build of amdqp for 6.12 and 6.1, the
                   hw-validate HIP compile (after kfd-glue: warm amdgpu cache)
  vm-debug         the sim and stub selftests, a fault-injection pass and a
                   kmemleak scan under the debug kernel (scripts/debug-kernel.sh:
                   KASAN, lockdep, UBSAN, debug objects, kmemleak, failslab,
                   fail_page_alloc; built once, cached by a content key),
                   modules rebuilt against it (\$AMDQP_BUILDS/build-debug);
                   TAP counted, any splat fails (selftests/vm/debug-guest.sh)
A stage whose inputs are missing fails (except the optional kfd-glue hook).

  --only LIST   run only these stages (comma separated)
  --skip LIST   run all but these stages
  --list        print the stage names
  -h, --help    this text

Environment:
  CI=true                   non-interactive CI run (always apt-get update)
  AMDQP_CHECK_LOGDIR        stage logs (default build/check/)
  AMDQP_CHECK_VERBOSE=1     stream every stage's output (default: only the
                            long vm/ctest/kfd-glue stages; the others show
                            their log when they fail). CI=true implies it.
  AMDQP_CHECK_VM_TIMEOUT    seconds for the VM run (default 1500)
  AMDQP_CHECK_DEBUG_TIMEOUT seconds for the debug-kernel VM run (default 2400)
  AMDQP_CHECK_JOBS          parallel jobs for builds (default: nproc)
  plus the run-vm.sh knobs (AMDQP_VM_*), see selftests/vm/run-vm.sh --help.
USAGE
}

only=""
skip=""
while [ $# -gt 0 ]; do
	case "$1" in
	--only) only="${2:?--only needs a list}"; shift ;;
	--skip) skip="${2:?--skip needs a list}"; shift ;;
	--list) printf '%s\n' "${all_stages[@]}"; exit 0 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done

in_list() { # in_list WORD COMMA,LIST
	case ",$2," in *",$1,"*) return 0 ;; esac
	return 1
}
for s in ${only//,/ } ${skip//,/ }; do
	in_list "$s" "$(
		IFS=,
		echo "${all_stages[*]}"
	)" || amdqp_die "unknown stage '$s' (see --list)"
done
stages=()
for s in "${all_stages[@]}"; do
	if [ -n "$only" ] && ! in_list "$s" "$only"; then continue; fi
	if [ -n "$skip" ] && in_list "$s" "$skip"; then continue; fi
	stages+=("$s")
done

if [ "${CI:-}" = true ]; then
	export TERM=dumb NO_COLOR=1
	AMDQP_CHECK_VERBOSE="${AMDQP_CHECK_VERBOSE:-1}"
fi
verbose="${AMDQP_CHECK_VERBOSE:-0}"
logdir="${AMDQP_CHECK_LOGDIR:-$AMDQP_ROOT/build/check}"
jobs="${AMDQP_CHECK_JOBS:-$(nproc)}"
kdir="/usr/src/linux-headers-$AMDQP_KVER"
kdir_old="/usr/src/linux-headers-$AMDQP_KVER_OLD"
b612="$AMDQP_BUILDS/build-6.12"
b61="$AMDQP_BUILDS/build-6.1"
bdbg="$AMDQP_BUILDS/build-debug"
mkdir -p "$logdir"
cd "$AMDQP_ROOT"

# --- helpers for stages -------------------------------------------------
# A stage runs in a subshell; it reports with result PASSED FAILED SKIPPED
# NOTE (written to $res). A stage that ends without calling result counts
# as one failure.
res=""
digest="$logdir/failed.txt"
: >"$digest"
result() {
	printf '%s %s %s %s\n' "$1" "$2" "$3" "$4" >"$res"
}
pass() { result 1 0 0 "${1:-ok}"; }
fail() { result 0 1 0 "$1"; }

# copy_tree DEST: a clean copy of the tree's sources (tracked files and
# untracked ones git does not ignore), so that builds there neither see
# stale objects nor disturb builds in the working tree.
copy_tree() {
	rm -rf "$1"
	mkdir -p "$1"
	if git -C "$AMDQP_ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$AMDQP_ROOT" ls-files -z -co --exclude-standard |
			rsync -a --from0 --files-from=- --ignore-missing-args "$AMDQP_ROOT/" "$1/"
	else
		# Not a git checkout (or git refuses it): honour .gitignore files.
		rsync -a --exclude=/.git --filter=':- .gitignore' "$AMDQP_ROOT/" "$1/"
	fi
}

# Compiler/sparse diagnostics in a build log.
diag_lines() {
	grep -E '(^|[^A-Za-z])(warning|error):|^WARNING: modpost|^ERROR: modpost' "$1" || true
}

# --- stages ---------------------------------------------------------------
stage_deps() {
	if bash scripts/deps.sh; then
		pass "all packages present"
	else
		fail "scripts/deps.sh failed"
	fi
}

# build_in DEST KDIR LOG [MAKE ARGS...]
build_in() {
	local dest="$1" kd="$2" log="$3"
	shift 3
	[ -f Makefile ] || { fail "no Makefile at the repository root"; return 1; }
	[ -d "$kd" ] || { fail "no kernel headers at $kd (scripts/deps.sh)"; return 1; }
	copy_tree "$dest"
	set +e
	nice make -C "$dest" -j"$jobs" modules KDIR="$kd" "$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]}
	set -e
	local n
	n="$(diag_lines "$log" | wc -l)"
	if [ "$rc" != 0 ]; then
		fail "make modules failed (exit $rc, $n diagnostics)"
		return 1
	fi
	if [ "$n" != 0 ]; then
		echo "diagnostics:"
		diag_lines "$log"
		fail "$n warning(s)"
		return 1
	fi
	local ko
	for ko in kmod/amdqp.ko kmod/sim/amdqp_sim.ko kmod/testing/amdqp_kfdstub.ko; do
		[ -f "$dest/$ko" ] || { fail "$ko was not built"; return 1; }
	done
}

stage_build() {
	build_in "$b612" "$kdir" "$logdir/build-6.12.make.log" W=1 || return 0
	pass "kmod/amdqp.ko, kmod/sim/amdqp_sim.ko, W=1, 0 warnings"
}

stage_build_old() {
	build_in "$b61" "$kdir_old" "$logdir/build-6.1.make.log" || return 0
	pass "compiles against $AMDQP_KVER_OLD, 0 warnings"
}

stage_sparse() {
	[ -f "$b612/kmod/amdqp.ko" ] ||
		{ fail "no 6.12 build in $b612 (the build stage failed or did not run)"; return 0; }
	command -v sparse >/dev/null || { fail "sparse not installed (scripts/deps.sh)"; return 0; }
	local log="$logdir/sparse.make.log" rc n
	set +e
	nice make -C "$b612" -j"$jobs" modules KDIR="$kdir" W=1 C=2 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	n="$(diag_lines "$log" | wc -l)"
	if [ "$rc" != 0 ]; then
		fail "make modules C=2 failed (exit $rc)"
	elif ! grep -q 'CHECK ' "$log"; then
		fail "sparse did not run (no CHECK lines)"
	elif [ "$n" != 0 ]; then
		echo "sparse reports:"
		diag_lines "$log"
		fail "$n sparse report(s)"
	else
		pass "$(grep -c 'CHECK ' "$log") files, 0 reports"
	fi
}

stage_checkpatch() {
	local ksrc cp f p=0 fl=0 files=() patches=()
	ksrc="$(bash scripts/kernel-src.sh --minimal)" || { fail "scripts/kernel-src.sh failed"; return 0; }
	cp="$ksrc/scripts/checkpatch.pl"
	[ -f "$cp" ] || { fail "$cp missing"; return 0; }
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		mapfile -t files < <(git ls-files -co --exclude-standard -- kmod uapi/linux |
			grep -E '\.[ch]$' | LC_ALL=C sort -u)
	else
		mapfile -t files < <(find kmod uapi/linux -name '*.[ch]' ! -name '*.mod.c' | LC_ALL=C sort)
	fi
	[ -d kfd-glue/patches ] && mapfile -t patches < <(find kfd-glue/patches -mindepth 2 -maxdepth 2 -name '*.patch' | LC_ALL=C sort)
	if [ ${#files[@]} -eq 0 ]; then
		fail "no kernel sources under kmod/ or uapi/linux/"
		return 0
	fi
	for f in "${files[@]}" "${patches[@]}"; do
		[ -f "$f" ] || continue
		# Patches add files to amdgpu, whose MAINTAINERS is not ours.
		# A patch named by a relative path inside a git tree is read by
		# checkpatch as a source file; an absolute path keeps patch mode.
		local mode=(--file) arg="$f"
		case "$f" in *.patch) mode=(--ignore FILE_PATH_CHANGES) arg="$PWD/$f" ;; esac
		if out="$(perl "$cp" --strict --no-tree --quiet --show-types "${mode[@]}" "$arg" 2>&1)"; then
			p=$((p + 1))
		else
			fl=$((fl + 1))
			echo "checkpatch: $f:"
			printf '%s\n' "$out"
		fi
	done
	result "$p" "$fl" 0 "$p clean, $fl with reports (${#files[@]} files, ${#patches[@]} patches)"
}

stage_selftests_build() {
	[ -f selftests/Makefile ] || { fail "selftests/Makefile is missing"; return 0; }
	local ksrc
	ksrc="$(bash scripts/kernel-src.sh --minimal)" || { fail "scripts/kernel-src.sh failed"; return 0; }
	if ! nice make -C selftests -j"$jobs" KSRC="$ksrc" 2>&1; then
		fail "make -C selftests failed"
		return 0
	fi
	[ -x selftests/out/run-guest.sh ] || { fail "selftests/out/run-guest.sh was not built"; return 0; }
	pass "$(find selftests/out -maxdepth 1 -type f -perm -u+x | wc -l) files in selftests/out"
}

# count_tap LOG RC WHAT: result from the TAP in LOG and an exit status
count_tap() {
	local log="$1" rc="$2" what="$3" sum p f s harness
	sum="$(bash scripts/tap-summary.sh "$log" || true)"
	printf '%s\n' "$sum"
	p="$(sed -n 's/^tap-summary: total passed=\([0-9]*\) .*/\1/p' <<<"$sum")"
	f="$(sed -n 's/^tap-summary: total .* failed=\([0-9]*\) .*/\1/p' <<<"$sum")"
	s="$(sed -n 's/^tap-summary: total .* skipped=\([0-9]*\)$/\1/p' <<<"$sum")"
	# run-vm.sh's own findings (oops, timeout, missing files) count too.
	harness="$(grep -c '^run-vm.sh: FAIL:' "$log" || true)"
	grep -E '^(# )?not ok [0-9]+ |^run-vm.sh: FAIL:' "$log" | head -n 20 |
		sed "s/^/$s: /" >>"$digest" || true
	f=$((${f:-1} + harness))
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1
		echo "$what exited with status $rc although no test failed"
	fi
	result "${p:-0}" "$f" "${s:-0}" "$p passed, $f failed, $s skipped ($what exit $rc)"
}

stage_vm() {
	local ko=() k log="$logdir/vm.console.log" rc
	for k in "$b612/kmod/amdqp.ko" "$b612/kmod/sim/amdqp_sim.ko"; do
		[ -f "$k" ] || { fail "$k missing (build stage failed or skipped)"; return 0; }
		ko+=(--module-file "$k")
	done
	[ -x selftests/out/run-guest.sh ] ||
		{ fail "selftests/out/run-guest.sh missing (selftests-build stage failed or skipped)"; return 0; }
	set +e
	nice bash selftests/vm/run-vm.sh "${ko[@]}" --dir selftests/out:/tests \
		--timeout "${AMDQP_CHECK_VM_TIMEOUT:-1500}" \
		--dmesg "$logdir/vm.dmesg.txt" -- /tests/run-guest.sh 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	count_tap "$log" "$rc" "run-vm.sh"
}

stage_vm_stub() {
	local log="$logdir/vm-stub.console.log" rc
	[ -f "$b612/kmod/testing/amdqp_kfdstub.ko" ] || {
		fail "amdqp_kfdstub.ko missing (build stage)"
		return 0
	}
	set +e
	nice bash selftests/vm/run-stub.sh --ko-dir "$b612/kmod" \
		--dmesg "$logdir/vm-stub.dmesg.txt" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	count_tap "$log" "$rc" "run-stub.sh"
}

stage_vm_debug() {
	local log="$logdir/vm-debug.console.log" k=() key rc ksrc stub="$AMDQP_ROOT/build/selftests-stub"
	[ -x selftests/out/run-guest.sh ] ||
		{ fail "selftests/out/run-guest.sh missing (selftests-build stage failed or skipped)"; return 0; }
	mapfile -t k < <(bash scripts/debug-kernel.sh)
	[ ${#k[@]} -eq 2 ] || { fail "scripts/debug-kernel.sh failed (see above)"; return 0; }
	key="${k[0]%/bzImage}"
	key="${key##*/debug-kernel-}"
	build_in "$bdbg" "${k[1]}" "$logdir/build-debug.make.log" || return 0
	ksrc="$(bash scripts/kernel-src.sh --minimal)" || { fail "scripts/kernel-src.sh failed"; return 0; }
	nice make -s -C selftests/kfdstub KSRC="$ksrc" OUT="$stub" ||
		{ fail "make -C selftests/kfdstub failed"; return 0; }
	# no5lvl: with 5-level paging (QEMU's -cpu max offers LA57) KASAN
	# flags a wild access in rcu_is_watching() from an interrupt during
	# early boot, before any module exists (Debian 6.12.117 + TCG).
	set +e
	nice bash selftests/vm/run-vm.sh --kernel "${k[0]}" --mem 2048 --append no5lvl \
		--module-file "$bdbg/kmod/amdqp.ko" \
		--module-file "$bdbg/kmod/sim/amdqp_sim.ko" \
		--module-file "$bdbg/kmod/testing/amdqp_kfdstub.ko" \
		--dir selftests/out:/tests --dir "$stub:/stubtests" \
		--file selftests/vm/debug-guest.sh:/debug/debug-guest.sh \
		--timeout "${AMDQP_CHECK_DEBUG_TIMEOUT:-2400}" \
		--dmesg "$logdir/vm-debug.dmesg.txt" -- sh /debug/debug-guest.sh 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	count_tap "$log" "$rc" "debug kernel $key: KASAN lockdep UBSAN kmemleak; $(sed -n 's/^# fault injection: \([0-9]*\) .*/\1 failures injected/p' "$log" | head -n1); run-vm.sh"
}

stage_ctest() {
	if [ ! -f CMakeLists.txt ]; then
		result 0 0 1 "SKIP no CMakeLists.txt at the repository root"
		return 0
	fi
	local log="$logdir/ctest.log" line total failed skipped
	if ! nice cmake -S . -B build/user -DAMDQP_WERROR=ON; then
		fail "cmake configure failed"
		return 0
	fi
	if ! nice cmake --build build/user -j"$jobs"; then
		fail "cmake --build failed"
		return 0
	fi
	set +e
	# The VM tests (label vm) boot the kernel the vm stage fetched and the
	# modules the build stage made: in CI a missing input is a failure,
	# not a skip.
	AMDQP_KO_DIR="$b612/kmod" AMDQP_VM_REQUIRED="$([ "${CI:-}" = true ] && echo 1 || echo 0)" \
		nice ctest --test-dir build/user --output-on-failure -j"$jobs" 2>&1 | tee "$log"
	set -e
	line="$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n1)"
	if [ -z "$line" ]; then
		fail "no ctest summary (no tests registered?)"
		return 0
	fi
	failed="$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$line")"
	total="$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")"
	skipped="$(grep -cE '^[[:space:]]*[0-9]+ - .*\(Skipped\)$' "$log" || true)"
	digest_ctest "$log"
	if ! release_build; then
		result "$((total - failed - skipped))" "$((failed + 1))" "$skipped" \
			"$line; Release -Werror build of the shipped targets failed"
		return 0
	fi
	result "$((total - failed - skipped))" "$failed" "$skipped" "$line; Release -Werror build ok"
}

# digest_ctest LOG: the failed tests and the TAP checks that failed in
# them, kept for the end of the run: CI shows only the tail of the output,
# and a failing VM suite's own lines are far above it.
digest_ctest() {
	grep -E '^[[:space:]]*[0-9]+ - .* \((Failed|Timeout|SEGFAULT|Child aborted|Exception)\)$' "$1" |
		sed 's/^[[:space:]]*/ctest: /' >>"$digest" || true
	grep -E '^(# )?not ok [0-9]+ ' "$1" | head -n 20 | sed 's/^/ctest: /' >>"$digest" || true
}

# The shipped programs and libraries once more in Release with warnings as
# errors: GCC 12's -O2 analyses (-Wrestrict, -Wmaybe-uninitialized) warn
# where the unoptimised build cannot see. Tests are left out: they do not
# ship, and with them this build takes ~10 minutes on 2 cores, not ~3.
release_build() {
	local b=build/user-release t help targets=()
	local shipped=(amdqp amdqp_static amdqp-preload amdqpd amdqp-controller amdqpctl amdqp-trace)
	nice cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release -DAMDQP_WERROR=ON \
		-DAMDQP_USER_TESTS=OFF >/dev/null || return 1
	# Those this host can build (amdqpd needs its libraries, see cmake's
	# warnings): the build above made the same choice.
	help="$(cmake --build "$b" --target help)" || return 1
	for t in "${shipped[@]}"; do
		if grep -qxE "\.\.\. $t( .*)?" <<<"$help"; then
			targets+=("$t")
		fi
	done
	echo "Release -Werror build of: ${targets[*]}"
	nice cmake --build "$b" -j"$jobs" --target "${targets[@]}"
}

stage_kfd_glue() {
	if [ ! -f kfd-glue/check.sh ]; then
		result 0 0 1 "SKIP no kfd-glue/check.sh"
		return 0
	fi
	local log="$logdir/kfd-glue.tap" rc
	# The hook loads kmod/amdqp.ko of the working tree: (re)build it there
	# (incremental; the checked build lives in a copy, see the build stage).
	if ! bash scripts/build-modules.sh; then
		fail "make modules in the working tree failed (kfd-glue/check.sh needs kmod/amdqp.ko)"
		return 0
	fi
	set +e
	# TAP is on stdout; stderr is progress, shown but not parsed.
	nice bash kfd-glue/check.sh 2> >(sed -u 's/^/stderr: /' >&2) | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	count_tap "$log" "$rc" "kfd-glue/check.sh"
}

stage_kfd_install() {
	local log="$logdir/kfd-install.tap" rc
	set +e
	nice bash kfd-glue/ci-install.sh 2> >(sed -u 's/^/stderr: /' >&2) | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	count_tap "$log" "$rc" "kfd-glue/ci-install.sh"
}

# --- driver -------------------------------------------------------------------
# In braces: bash parses the whole driver before running it, so editing this
# file during a (long) run cannot derail the run.
{
total_p=0
total_f=0
total_s=0
timings=()
echo "TAP version 13"
echo "1..${#stages[@]}"
start_all=$SECONDS
i=0
for s in "${stages[@]}"; do
	i=$((i + 1))
	fn="stage_${s//-/_}"
	log="$logdir/$s.log"
	res="$logdir/$s.result"
	rm -f "$res"
	live=$verbose
	case "$s" in vm | vm-stub | ctest | kfd-glue | kfd-install) live=1 ;; esac
	echo "# ---- stage $i/${#stages[@]}: $s ----"
	t0=$SECONDS
	set +e
	if [ "$live" = 1 ]; then
		("$fn") 2>&1 | tee "$log" | sed -u 's/^/# /'
	else
		("$fn") >"$log" 2>&1
	fi
	set -e
	dt=$((SECONDS - t0))
	if [ -s "$res" ]; then
		read -r p f sk note <"$res"
	else
		p=0 f=1 sk=0 note="stage aborted (see $log)"
	fi
	total_p=$((total_p + p))
	total_f=$((total_f + f))
	total_s=$((total_s + sk))
	if [ "$f" != 0 ] && [ "$live" != 1 ]; then
		echo "# $s log ($log), last 150 lines:"
		tail -n 150 "$log" | sed 's/^/# /'
	fi
	if [ "$f" != 0 ]; then
		echo "not ok $i - $s: $note (${dt}s)"
	elif [ "$p" = 0 ] && [ "$sk" != 0 ]; then
		echo "ok $i - $s # ${note} (${dt}s)"
	else
		echo "ok $i - $s: $note (${dt}s)"
	fi
	timings+=("$(printf '%-16s %5ss  passed=%s failed=%s skipped=%s' "$s" "$dt" "$p" "$f" "$sk")")
done
if [ -s "$digest" ]; then
	echo "# ---- what failed ----"
	sed 's/^/# /' "$digest"
fi
echo "# ---- timings ----"
printf '# %s\n' "${timings[@]}"
printf '# %-16s %5ss  (logs in %s)\n' total "$((SECONDS - start_all))" "$logdir"
[ "$total_s" = 0 ] || echo "# $total_s skipped"
echo "$total_p passed, $total_f failed"
[ "$total_f" = 0 ] || exit 1
exit 0
}
