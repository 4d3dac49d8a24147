# SPDX-License-Identifier: GPL-2.0
# zswap in front of a swap device (qemu.sh's scratch disk), its invalidated
# entries freed through zsmalloc's deferred free (the deferred-free
# sub-series' second user):
#   - a workload 1.125x the guest's RAM, every page verified;
#   - processes exiting, or killed, while others swap in and out and verify;
#   - the deferred free used and every push drained (its counters,
#     CONFIG_ZSMALLOC_STAT), and zswap's stored pages and pool size back to
#     0 once swap is off;
#   - a new pool (compressor change) with every allocation on its creation
#     path failing once (failnth), the deferred free's instance included:
#     either the change fails with EINVAL/ENOMEM or the pool works, with or
#     without deferred frees; a workload on it verified, and everything
#     freed again.
# timeout: 900
set -u
. /tests/lib.sh

Z=/sys/module/zswap/parameters
D=/sys/kernel/debug
[ -d $Z ] || fail "no zswap in this kernel"
[ -b /dev/vda ] || fail "no scratch disk /dev/vda (qemu.sh attaches one on arm64)"
[ -d $D/zsmalloc ] || mount -t debugfs none $D 2>/dev/null

mem_mb=$(($(meminfo_kb MemTotal) / 1024))
zs() { cat $D/zswap/"$1"; }

# The current pool's deferred-free counters, "pushed drained sync_frees"
# (CONFIG_ZSMALLOC_STAT, in the test kernel).
deferred() {
	local f
	f=$(ls -dt $D/zsmalloc/zswap* 2>/dev/null | head -n 1)
	# (fail would only leave the command substitution)
	[ -n "$f" ] && [ -f "$f/deferred" ] || { echo nostat; return; }
	awk 'NR == 2 { print $1, $2, $3 }' "$f/deferred"
}

# drained WHAT: every push of the current pool drained (from a worker, at
# the latest on the deferred free's idle flush).
drained() {
	local i pushed drained sync
	for i in $(seq 100); do
		read -r pushed drained sync <<<"$(deferred)"
		[ "${pushed:-}" = nostat ] && fail "no deferred-free counters (CONFIG_ZSMALLOC_STAT)"
		# Nothing: the pool has no instance (its creation failed).
		[ "${pushed:-}" = "${drained:-}" ] && return 0
		sleep 0.2
	done
	fail "$1: $pushed entries pushed, $drained drained"
}

# empty WHAT: stored pages and pool size back to 0 (swap off: the guest's
# other processes hold no swapped page either).
empty() {
	local i
	for i in $(seq 100); do
		[ "$(zs stored_pages)" = 0 ] && [ "$(zs pool_total_size)" = 0 ] && return 0
		sleep 0.2
	done
	fail "$1: zswap holds $(zs stored_pages) pages, $(zs pool_total_size) bytes"
}

echo zsmalloc >$Z/zpool || fail "zpool zsmalloc"
echo lzo >$Z/compressor || fail "compressor lzo"
# A pool large enough for most of the workloads: the disk is slow under TCG.
echo 50 >$Z/max_pool_percent || fail "max_pool_percent"
echo Y >$Z/enabled || fail "enable zswap"
# zswap sets itself up, its debugfs files included, when first enabled.
[ -d $D/zswap ] || fail "no $D/zswap"
mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda"
swapon /dev/vda || fail "swapon /dev/vda"
echo "zswap $(cat $Z/compressor)/$(cat $Z/zpool) over /dev/vda, guest RAM ${mem_mb} MiB"

# 1. More than RAM, every page verified.
work_mb=$((mem_mb * 9 / 8))
memstress -m $work_mb -r 10 || fail "workload data did not survive zswap"
echo "after the workload: written back $(zs written_back_pages), pool limit hit $(zs pool_limit_hit)"
drained "after the workload exited"

# 2. Processes exiting and killed while others swap in and out.
pids=
for s in 2 3 4; do
	memstress -m $((mem_mb / 4)) -r 25 -s $s -p -v 2 >/tmp/zw.$s 2>&1 &
	pids="$pids $!"
done
for i in $(seq 6); do
	memstress -m $((mem_mb / 8)) -r 25 -s $((10 + i)) -p -v 50 >/dev/null 2>&1 &
	k=$!
	sleep 1
	kill -9 $k 2>/dev/null
	wait $k 2>/dev/null
done
for p in $pids; do
	wait "$p" || { cat /tmp/zw.*; fail "a workload beside exiting processes failed"; }
done
read -r pushed drained sync <<<"$(deferred)"
[ "$pushed" != nostat ] || fail "no deferred-free counters (CONFIG_ZSMALLOC_STAT)"
echo "deferred free: pushed $pushed, drained $drained, synchronous $sync"
[ "${pushed:-0}" -gt 0 ] || fail "no invalidated entry went through the deferred free"
drained "after the workloads exited"
swapoff /dev/vda || fail "swapoff"
empty "after swapoff"

# 3. A new pool under fault injection.
faults_setup
swapon /dev/vda || fail "swapon /dev/vda again"
failnth -e EINVAL,ENOMEM -r $Z/compressor -u lzo w $Z/compressor lzo-rle ||
	fail "compressor change under fault injection"
echo lzo-rle >$Z/compressor || fail "compressor lzo-rle"
memstress -m $((mem_mb / 3)) -r 25 -s 7 -p || fail "workload on the new pool"
drained "after the workload on the new pool"
swapoff /dev/vda || fail "swapoff"
empty "after the last swapoff"
echo N >$Z/enabled
