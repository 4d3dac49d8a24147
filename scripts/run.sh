#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make run: build what is missing, boot arm64 (QEMU virt, Cortex-A72, TCG),
# swap to the compressed RAM device under a workload 1.25x the guest's RAM,
# verify every page, print the device's statistics, power off.
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/deps.sh"
"$TOP/scripts/tree.sh"
# The demo boots the kernel users would run (no KASAN or lockdep: the bench
# variant), so it finishes in a few minutes even on a busy machine.
"$TOP/scripts/kernel.sh" arm64 bench
"$TOP/scripts/image.sh" arm64
echo "=== rzram: swap on /dev/rzram0 (the Rust driver), workload 1.25x the guest's RAM"
# The workload takes about a minute under TCG on a quiet host; the limit leaves
# room for a loaded one.
if ! "$TOP/scripts/qemu.sh" arm64 swap_pressure --variant bench --label run --timeout 600; then
	echo "=== make run FAILED: see above (a timeout is reported as 'qemu: TIMEOUT');" \
		"the console log is build/logs/arm64-run.log" >&2
	exit 1
fi
