# SPDX-License-Identifier: GPL-2.0
# swapon/swapoff: data paged out to the device comes back intact on swapoff.
set -u
. /tests/lib.sh

dev_setup 256M
mkswap "$BLK" >/dev/null || fail "mkswap"
swapon "$BLK" || fail "swapon"
grep -q "^$BLK " /proc/swaps || fail "$BLK not in /proc/swaps"

off() {
	local used=$(($(meminfo_kb SwapTotal) - $(meminfo_kb SwapFree)))
	echo "swap used after MADV_PAGEOUT: $used kB"
	[ "$used" -ge $((48 * 1024)) ] || fail "only $used kB reached swap"
	mm_stat_print
	swapoff "$BLK" || fail "swapoff"
	grep -q "^$BLK " /proc/swaps && fail "$BLK still in /proc/swaps"
	echo "swapoff done"
}
run_held off -m 64 -r 25 -p || fail "data paged out did not come back intact"
# All that may stay is the swap header mkswap wrote to page 0. Slot frees
# may be queued for zsmalloc's deferred free, which drains within a quarter
# of a second: allow it 2 s.
waited=0
while read -r orig _ <"$SYS/mm_stat" && [ "$orig" -gt 4096 ] && [ $waited -lt 20 ]; do
	sleep 0.1
	waited=$((waited + 1))
done
echo "device holds $orig bytes after swapoff ($((waited * 100)) ms after it returned)"
[ "$orig" -le 4096 ] || fail "device still holds $orig bytes after swapoff (header is 4096)"
dd if="$BLK" bs=4096 count=1 2>/dev/null | tail -c 10 | grep -q SWAPSPACE2 || fail "swap header lost"
dev_reset
