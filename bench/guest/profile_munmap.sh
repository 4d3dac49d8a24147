# SPDX-License-Identifier: GPL-2.0
# make profile: the ftrace function profiler over munmap of swapped-out
# memory (munmap_bench -p 1 -m 256, one round), then the functions by time.
set -u
. /tests/lib.sh

T=/sys/kernel/debug/tracing
[ -d "$T" ] || fail "no tracefs: is this the trace kernel?"
dev_setup 1G lzo-rle
mkswap "$BLK" >/dev/null || fail "mkswap"
swapon "$BLK" || fail "swapon"
# The munmap path of swap entries, zram's slot free and zsmalloc's free.
for f in __arm64_sys_munmap unmap_page_range free_swap_and_cache_nr \
	swap_entry_range_free swapcache_free_entries free_swap_slot \
	zram_slot_free_notify zs_free zs_deferred_push zs_free_bulk \
	zram_deferred_drain release_zspage; do
	echo "$f" >>"$T/set_ftrace_filter" 2>/dev/null || echo "profile: no function $f"
done
echo 1 >"$T/function_profile_enabled" || fail "function profiler"
munmap_bench -p 1 -m 256 -r 1 || fail "munmap_bench"
sleep 1
echo 0 >"$T/function_profile_enabled"
echo "profile: function, hits, total, average (all CPUs)"
cat "$T"/trace_stat/function* | awk '$1 != "Function" && $1 !~ /^-/ && NF >= 4' | sort -k3 -g -r | head -20
swapoff "$BLK"
dev_reset
