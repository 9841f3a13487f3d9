#!/bin/sh
# SPDX-License-Identifier: MIT
# amdqpd's command line: --help, --version, --check-config on a good file,
# on a bad one (file:line messages, exit 1) and on a missing explicit file.
#   cli_test.sh AMDQPD SRCDIR
set -u
d=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # check NAME CONDITION...
	name=$1
	shift
	if "$@"; then echo "ok - $name"; else echo "not ok - $name"; fail=1; fi
}

"$d" --help >"$tmp/help" 2>&1
check "--help exits 0" test $? -eq 0
check "--help names --check-config" grep -q -- --check-config "$tmp/help"
"$d" --version >"$tmp/ver"
check "--version" grep -q '^amdqpd [0-9]' "$tmp/ver"

cat >"$tmp/good.toml" <<'TOML'
[daemon]
metrics = ""
[policy]
order = "after-doorbell"
[[rule]]
match.uid = 0
priority = "high"
TOML
"$d" --check-config --config "$tmp/good.toml" >"$tmp/out" 2>&1
check "good config accepted" test $? -eq 0
check "good config summary" grep -q 'ok (order after-doorbell, 1 rule' "$tmp/out"

printf '[daemon]\nmetrics = ""\n\n[policy]\nhysteresis_max_ms = -1\nbogus = 1\n' >"$tmp/bad.toml"
"$d" --check-config --config "$tmp/bad.toml" >"$tmp/out" 2>&1
check "bad config refused" test $? -eq 1
check "bad config: file:line of the value" grep -q "^$tmp/bad.toml:5: hysteresis_max_ms must be a number >= 0" "$tmp/out"
check "bad config: unknown key" grep -q "^$tmp/bad.toml:6: unknown key 'bogus' in \[policy\]" "$tmp/out"

"$d" --config "$tmp/bad.toml" >"$tmp/out" 2>&1
check "daemon refuses to start on a bad config" test $? -eq 1
check "and says so" grep -q 'configuration refused' "$tmp/out"

"$d" --check-config --config "$tmp/none.toml" >"$tmp/out" 2>&1
check "missing explicit config is an error" test $? -eq 1
"$d" --bogus >/dev/null 2>&1
check "unknown option exits non-zero" test $? -ne 0
exit $fail
