# SPDX-License-Identifier: GPL-2.0
# Swap under memory pressure: a workload 1.25x the guest's RAM, every page
# verified on read-back. The data compresses about 4:1, so the compressed copy
# fits in what the guest has left.
# timeout: 900
set -u
. /tests/lib.sh

mem_mb=$(($(meminfo_kb MemTotal) / 1024))
work_mb=$((mem_mb * 5 / 4))
dev_setup $((work_mb * 2))M
mkswap "$BLK" >/dev/null || fail "mkswap"
swapon "$BLK" || fail "swapon"
grep -q "^$BLK " /proc/swaps || fail "$BLK not in /proc/swaps"
echo "swap on $BLK ($(cat "$SYS/comp_algorithm")), guest RAM ${mem_mb} MiB, workload ${work_mb} MiB"
out0=$(vmstat pswpout)

peak() {
	echo "at peak: SwapTotal $(meminfo_kb SwapTotal) kB, SwapFree $(meminfo_kb SwapFree) kB"
	mm_stat_print
}
run_held peak -m "$work_mb" -r 10 || fail "workload data did not survive swap"

swapped=$(($(vmstat pswpout) - out0))
echo "pages swapped out: $swapped, swapped in: $(vmstat pswpin)"
# Everything beyond RAM had to go to the device.
[ "$swapped" -ge $(((work_mb - mem_mb) * 256)) ] || fail "only $swapped pages swapped out"
swapoff "$BLK" || fail "swapoff"
dev_reset
