#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make kcsan: the x86_64 test kernel with KCSAN instead of KASAN
# (.config.fragments/kcsan.config), booted with every in-guest test of every
# theme and x86_64's own (guest_tests_all), the torture test among them. Any KCSAN report fails the boot's log
# scan, as any other splat. Not part of make test: a kernel build of its own.
# Results in build/kcsan/results.txt; the log in build/logs/x86_64-kcsan.log.
#
# KCSAN_STRICT=1: the same with KCSAN's strict rules (kcsan-strict.config),
# in build/kcsan-strict and build/logs/x86_64-kcsan-strict.log. Each report
# is listed with the number of times it came, the functions of its two sides.
. "$(dirname "$0")/lib.sh"

variant=kcsan
[ "${KCSAN_STRICT:-0}" = 1 ] && variant=kcsan-strict
out=$BUILD/$variant
log=$BUILD/logs/x86_64-$variant.log
mkdir -p "$out"
results=$out/results.txt
: >"$results"
bash "$TOP/scripts/kernel.sh" x86_64 $variant
bash "$TOP/scripts/image.sh" x86_64
t0=$(date +%s)
bash "$TOP/scripts/qemu.sh" x86_64 "$(guest_tests_all x86_64 "$GUEST_BOOTS compat tools")" --variant $variant --label $variant \
	--timeout 3600 --results "$results" --quiet || true
pass=$(grep -c '^PASS' "$results" || true)
fail=$(grep -c '^FAIL' "$results" || true)
grep '^FAIL' "$results" >&2 || true
tr -d '\r' <"$log" | grep -a -o 'BUG: KCSAN: .*' | sort | uniq -c | sort -rn | tee "$out/reports.txt" >&2 || true
note "make kcsan ($variant): $pass passed, $fail failed, $(wc -l <"$out/reports.txt") distinct reports in $(($(date +%s) - t0))s (log ${log#"$TOP"/})"
[ "$fail" = 0 ]
