#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make run: build what is missing, boot arm64 (QEMU virt, Cortex-A72, TCG),
# swap to the compressed RAM device under a workload 1.25x the guest's RAM,
# verify every page, print the device's statistics, power off.
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/deps.sh"
"$TOP/scripts/tree.sh"
"$TOP/scripts/kernel.sh" arm64
"$TOP/scripts/image.sh" arm64
if grep -qx 'CONFIG_BLK_DEV_RZRAM=y' "$BUILD/arm64/.config"; then
	echo "=== rzram: swap on /dev/rzram0 (the Rust driver)"
else
	echo "=== NOTE: the rzram Rust driver is not built yet: this run uses the in-tree C zram (/dev/zram0)"
fi
"$TOP/scripts/qemu.sh" arm64 swap_pressure --label run
