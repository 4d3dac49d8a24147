#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make profile: where munmap of swapped-out memory spends its time with the
# series applied. The bench config plus the ftrace function profiler (arm64,
# same QEMU setup as make bench); prints the profiled functions by total time.
# Profiling overhead inflates absolute times: read the shares, not the ms.
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/kernel.sh" arm64 trace
"$TOP/scripts/image.sh" arm64
"$TOP/scripts/qemu.sh" arm64 profile_munmap --variant trace --mem 2048 --timeout 1800 \
	--label profile --quiet || die "profile run failed (log: build/logs/arm64-profile.log)"
tr -d '\r' <"$BUILD/logs/arm64-profile.log" | sed -n '/^# munmap P=/,/^ok /p' | sed 's/^# //' 
