#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# qemu.sh on a boot that cannot finish in time: it must say TIMEOUT, print the
# tail of the console log, record the test as failed (never skipped or
# passed) and exit non-zero. Needs a built kernel and image for ARCH.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
arch=${1:-arm64}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }

if bash "$top/scripts/qemu.sh" "$arch" swap_pressure --timeout 4 --label timeout-check \
	--results "$tmp/results" --quiet >"$tmp/out" 2>&1; then
	bad "qemu.sh exited 0 on a timed-out boot"
else
	ok "qemu.sh exits non-zero on a timed-out boot"
fi
grep -q 'TIMEOUT after 4s' "$tmp/out" && ok "timeout reported" || bad "no TIMEOUT message"
grep -q '^  | ' "$tmp/out" && ok "console tail printed" || bad "no console tail"
grep -qx "FAIL $arch:swap_pressure" "$tmp/results" && ok "test recorded as failed" ||
	bad "test not recorded as failed: $(cat "$tmp/results")"
grep -q "^PASS $arch:swap_pressure" "$tmp/results" && bad "timed-out test recorded as passed"
[ $fails = 0 ]
