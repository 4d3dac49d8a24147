#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make kcsan: the x86_64 test kernel with KCSAN instead of KASAN
# (.config.fragments/kcsan.config), booted with make test's x86_64 in-guest
# tests, the torture test among them. Any KCSAN report fails the boot's log
# scan, as any other splat. Not part of make test: a kernel build of its own.
# Results in build/kcsan/results.txt; the log in build/logs/x86_64-kcsan.log.
. "$(dirname "$0")/lib.sh"

out=$BUILD/kcsan
mkdir -p "$out"
results=$out/results.txt
: >"$results"
bash "$TOP/scripts/kernel.sh" x86_64 kcsan
bash "$TOP/scripts/image.sh" x86_64
t0=$(date +%s)
bash "$TOP/scripts/qemu.sh" x86_64 "$GUEST_TESTS_x86_64" --variant kcsan --label kcsan \
	--timeout 3600 --results "$results" --quiet || true
pass=$(grep -c '^PASS' "$results" || true)
fail=$(grep -c '^FAIL' "$results" || true)
grep '^FAIL' "$results" >&2 || true
grep -a 'BUG: KCSAN' "$BUILD/logs/x86_64-kcsan.log" | sort | uniq -c >&2 || true
note "make kcsan: $pass passed, $fail failed in $(($(date +%s) - t0))s (log build/logs/x86_64-kcsan.log)"
[ "$fail" = 0 ]
