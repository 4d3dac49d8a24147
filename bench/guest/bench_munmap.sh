# SPDX-License-Identifier: GPL-2.0
# The munmap benchmark (make bench). Swap with lzo-rle on each device of
# rzdevs in turn (zram: the C zram; rzram; brd: the floor, a RAM disk with no
# swap_slot_free_notify; zswap: zswap in front of swap on that RAM disk),
# interleaved: every round runs each grid cell on every device, in an order
# that rotates from round to round. Warm-up rounds (rzwarm, on the cells of
# rzwarmgrid) come first and are marked as such. The benchmark processes are pinned (munmap_bench -c:
# CPU 0 with P = 1), and the unbound workqueues, where the deferred free
# runs, to CPU 1.
#
# Per run it prints a "bench-begin" line, the "munmap ..." line (with the
# memory-return time: zram's mem_used_total, or zswap's pool_total_size) and
# a "bench-stats ..." line with the device's cumulative counters
# (deferred-free pushes, synchronous frees, buffer pages, notify_free,
# miss_free; for zswap also its stored pages and written-back pages), for
# the host to take the medians and the deltas. zswap is on only during its
# own runs, with room for the largest cell (max_pool_percent=60), so that
# none of its pages reach the disk behind it.
set -u
. /tests/lib.sh

rounds=${rzrounds:-5}
warm=${rzwarm:-1}
first=${rzfirst:-0}
grid=$(echo "${rzgrid:-1:64,1:256,1:1024,2:64,2:256,2:1024}" | tr , " ")
# rzwarmgrid: the warm-up rounds' cells (default: the grid's).
warmgrid=$(echo "${rzwarmgrid:-${rzgrid:-1:64,1:256,1:1024,2:64,2:256,2:1024}}" | tr , " ")
devs=$(echo "${rzdevs:-$DEV}" | tr , " ")
size=${rzsize:-3G}

# The deferred free's workers on CPU 1; the benchmark on CPU 0.
if [ -w /sys/devices/virtual/workqueue/cpumask ] && [ "$(nproc)" -gt 1 ]; then
	echo 2 >/sys/devices/virtual/workqueue/cpumask || fail "workqueue cpumask"
fi

blk_of() {
	case "$1" in brd | zswap) echo /dev/ram0 ;; *) echo "/dev/${1}0" ;; esac
}
zp=/sys/module/zswap/parameters
zd=/sys/kernel/debug/zswap

# zswap_deferred: the zsmalloc deferred-free file of zswap's pool, if any.
zswap_deferred() {
	local f
	for f in /sys/kernel/debug/zsmalloc/zswap*/deferred; do
		[ -f "$f" ] && echo "$f"
	done | tail -n 1
}

for d in $devs; do
	case "$d" in
	brd) [ -b /dev/ram0 ] || fail "no /dev/ram0: is brd built in?" ;;
	zswap)
		[ -b /dev/ram0 ] || fail "no /dev/ram0: is brd built in?"
		[ -d "$zp" ] || fail "no zswap in this kernel"
		echo lzo-rle >"$zp/compressor" || fail "zswap compressor"
		echo 60 >"$zp/max_pool_percent" || fail "zswap max_pool_percent"
		;;
	*)
		s=/sys/block/${d}0
		[ -d "$s" ] || fail "$s does not exist"
		[ "$(cat "$s/initstate")" = 0 ] || echo 1 >"$s/reset" || fail "reset $s"
		echo lzo-rle >"$s/comp_algorithm" || fail "comp_algorithm"
		echo "$size" >"$s/disksize" || fail "disksize $size on $d"
		;;
	esac
	mkswap "$(blk_of "$d")" >/dev/null || fail "mkswap on $d"
	# rzbatch: the deferred free's batch of rzram (make bench's handoff part).
	if [ "$d" = rzram ] && [ -n "${rzbatch:-}" ]; then
		echo "$rzbatch" >"/sys/kernel/debug/zsmalloc/${d}0/deferred" ||
			fail "batch $rzbatch on $d"
	fi
done

# stats DEV NAME: the device's counters, cumulative, on one line.
stats() {
	local d=$1 name=$2 s=/sys/block/${1}0 df=/sys/kernel/debug/zsmalloc/${1}0/deferred
	local pushed=0 drained=0 sync=0 pages=0 spare=0 nf=0 mf=0 maxp=0 batch=0 zs=
	if [ "$d" = zswap ]; then
		df=$(zswap_deferred)
		zs=" stored_pages=$(cat "$zd/stored_pages") written_back=$(cat "$zd/written_back_pages") pool_limit_hit=$(cat "$zd/pool_limit_hit")"
	fi
	if [ -f "$df" ]; then
		# shellcheck disable=SC2046 # the counters, split into words
		set -- $(sed -n 2p "$df") 0 0 0 0 0 0 0
		pushed=$1 drained=$2 sync=$3 pages=$4 maxp=$5 spare=$6 batch=$7
	fi
	if [ -f "$s/io_stat" ]; then
		read -r _ _ _ nf _ <"$s/io_stat"
		mf=$(sed -n 2p "$s/debug_stat" | awk '{ print $2 }')
	fi
	echo "bench-stats dev=$name pushed=${pushed:-0} drained=${drained:-0} sync_frees=${sync:-0} pages=${pages:-0} spare=${spare:-0} notify_free=$nf miss_free=$mf max_pages=${maxp:-0} batch=${batch:-0}$zs"
}

# run DEV P N ROUND WARM: one munmap round on DEV (a warm-up one if WARM is 1).
run() {
	local d=$1 p=$2 n=$3 r=$4 name=$1 blk st=
	blk=$(blk_of "$d")
	case "$d" in
	brd) ;;
	zswap) st="-s $zd/pool_total_size" ;;
	*) st="-s /sys/block/${d}0/mm_stat" ;;
	esac
	[ "$5" = 1 ] && name=warm-$d
	if [ "$d" = zswap ]; then
		echo Y >"$zp/enabled" || fail "enable zswap"
	fi
	swapon "$blk" || fail "swapon $blk"
	echo "bench-begin dev=$name P=$p N=$n round=$r"
	# shellcheck disable=SC2086 # $st is an option and its argument, or nothing
	munmap_bench -c -d "$name" -p "$p" -m "$n" -r 1 -o "$r" $st || fail "munmap_bench $d -p $p -m $n"
	stats "$d" "$name"
	swapoff "$blk" || fail "swapoff $blk"
	if [ "$d" = zswap ]; then
		echo N >"$zp/enabled" || fail "disable zswap"
	fi
	if [ "$d" = brd ] || [ "$d" = zswap ]; then
		# brd keeps every page written to it: give them back.
		blkdiscard -f "$blk" >/dev/null || fail "blkdiscard $blk"
		mkswap "$blk" >/dev/null || fail "mkswap on $blk"
	fi
}

echo "bench: $(uname -r), $(nproc) CPUs, devices $devs, lzo-rle, $((($(meminfo_kb MemTotal)) / 1024)) MiB RAM, $warm warm-up + $rounds rounds from $first"
echo "bench-grid $grid"
read -ra D <<<"$devs"
nd=${#D[@]}
for ((k = 0; k < warm + rounds; k++)); do
	# Warm-up rounds run under the name warm-DEV, which the host drops.
	r=$((first + k))
	cells=$grid
	[ $k -lt "$warm" ] && cells=$warmgrid
	for pn in $cells; do
		p=${pn%%:*}
		n=${pn##*:}
		# The order of the devices rotates by one each round.
		for ((j = 0; j < nd; j++)); do
			run "${D[$(((j + k) % nd))]}" "$p" "$n" "$r" $((k < warm))
		done
	done
done
for d in $devs; do
	case "$d" in brd | zswap) ;; *) echo 1 >"/sys/block/${d}0/reset" ;; esac
done
