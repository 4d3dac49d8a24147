#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make soak: SOAK_SECS (default 1800) of the torture test and a swap storm
# together, on the arm64 test kernel (KASAN, lockdep, PREEMPT), in one boot:
# tests/guest/soak.sh. Not part of make test. Results in
# build/soak/results.txt; the log in build/logs/arm64-soak.log.
. "$(dirname "$0")/lib.sh"

secs=${SOAK_SECS:-1800}
out=$BUILD/soak
mkdir -p "$out"
results=$out/results.txt
: >"$results"
bash "$TOP/scripts/kernel.sh" arm64
bash "$TOP/scripts/image.sh" arm64
t0=$(date +%s)
bash "$TOP/scripts/qemu.sh" arm64 soak --label soak --append "SOAK_SECS=$secs" \
	--timeout $((secs + 1800)) --results "$results" --quiet || true
grep -a -E 'torture: |soak: |memstress: verified' "$BUILD/logs/arm64-soak.log" | tail -n 20
pass=$(grep -c '^PASS' "$results" || true)
fail=$(grep -c '^FAIL' "$results" || true)
grep '^FAIL' "$results" >&2 || true
note "make soak: ${secs}s requested, $pass passed, $fail failed in $(($(date +%s) - t0))s (log build/logs/arm64-soak.log)"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
