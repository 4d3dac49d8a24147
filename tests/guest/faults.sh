# SPDX-License-Identifier: GPL-2.0
# Fault injection: every allocation on each path fails once (failnth, over
# /proc/thread-self/fail-nth with FAILSLAB and FAIL_PAGE_ALLOC, sleeping
# allocations included), and each failure must reach the caller as an errno
# zram gives (ENOMEM, EIO, ENOSPC), leave what is stored intact, and leak
# nothing:
#   - hot_add (the disk, its queue, its attributes);
#   - disksize (the slot table, the pool, the streams), after the leak scan
#     (see run_disksize);
#   - writes of compressible, incompressible and same-filled pages (also with
#     every allocation failing at once, fallbacks included), and reads;
#   - writeback of idle pages to a backing device;
#   - recompress (lzo-rle pages recompressed with zstd), a page rewritten
#     before each attempt.
# (A CPU coming online under faults is cpu_hotplug, on x86_64: the arm64 test
# kernel has no CPU hotplug.)
# Then everything is read back and compared, discarded (the pool must empty),
# and the device reset; kmemleak must find nothing new (the faults boot has
# kmemleak=on). On arm64 the C zram runs the same afterwards, as the
# reference: its outcomes are printed next to rzram's, not judged.
set -u -o pipefail
. /tests/lib.sh

faults_setup
# kmemleak: no automatic scans (they would report the reference's leaks
# too); everything allocated so far is forgotten.
leak=$dbg/kmemleak
if [ -f $leak ]; then
	echo scan=off >$leak
	echo scan >$leak
	echo clear >$leak
fi

IMG=/tmp/faults
mkdir -p $IMG

# all_fail on|off: every allocation of a task with make-it-fail set fails
# (failnth -A sets it around its one attempt), or none.
all_fail() {
	local a
	for a in failslab fail_page_alloc; do
		if [ "$1" = on ]; then
			echo Y >$dbg/$a/task-filter
			echo 1 >$dbg/$a/interval
			echo -1 >$dbg/$a/times
			echo 100 >$dbg/$a/probability
		else
			echo 0 >$dbg/$a/probability
			echo N >$dbg/$a/task-filter
		fi
	done
}

# check WHAT: fail, unless this is the reference's run (then only report).
check() {
	[ "$REF" = 1 ] && { echo "(the C zram, as the reference: $1)"; return 0; }
	fail "$1"
}

# run FAMILY [ERRNOS]: the paths of FAMILY under faults; the C zram's run
# (REF=1) is the reference: its outcomes are reported, not judged.
run() {
	local fam=$1 ctl=/sys/class/$1-control id d b loop out=$IMG/$1.out e=${2:-ENOMEM,EIO,ENOSPC}
	: >"$out"
	# hot_add: ENOMEM, and EINVAL for one of the allocations it reaches, on
	# the C zram too (seen in both runs; its call site is not traced).
	failnth -e $e,EINVAL hot_add $ctl | tee -a "$out" || check "$fam: hot_add under faults"
	# A new device with a backing device.
	id=$(cat $ctl/hot_add) || fail "hot_add"
	d=/sys/block/$fam$id
	b=/dev/$fam$id
	truncate -s 32M $IMG/back.img
	loop=$(losetup -f --show $IMG/back.img) || fail "losetup"
	echo "$loop" >$d/backing_dev || fail "$fam: backing_dev"
	echo 16M >$d/disksize || fail "$fam: disksize"
	# Writes and reads among data that must survive.
	dd if=/dev/urandom of=$IMG/data bs=4k count=32 2>/dev/null
	dd if=/dev/zero bs=4k count=32 2>/dev/null | tr '\0' 'z' >>$IMG/data
	dd if=$IMG/data of=$b bs=4k oflag=direct 2>/dev/null || fail "$fam: write"
	for k in c r s; do
		failnth -e $e -k $k pw $b 70 | sed "s/^/[$k] /" | tee -a "$out" ||
			check "$fam: write ($k) under faults"
	done
	# Every allocation failing at once, fallbacks included: a write must
	# fail cleanly (or need none), keeping the old data.
	all_fail on
	for k in c r s; do
		failnth -A -e $e -k $k pw $b 71 | sed "s/^/[$k] /" | tee -a "$out" ||
			check "$fam: write ($k) with every allocation failing"
	done
	all_fail off
	failnth -e $e pr $b 70 | tee -a "$out" || check "$fam: read under faults"
	failnth -e $e pr $b 3 | tee -a "$out" || check "$fam: read of an incompressible page under faults"
	cmp -n $((64 * 4096)) $IMG/data $b || check "$fam: data changed by the faults"
	# Writeback of idle pages.
	echo all >$d/idle || fail "$fam: idle"
	failnth -e $e w $d/writeback idle | tee -a "$out" || check "$fam: writeback under faults"
	cmp -n $((64 * 4096)) $IMG/data $b || check "$fam: data changed by the writeback faults"
	echo "$fam: bd_stat $(cat $d/bd_stat), mm_stat $(cat $d/mm_stat)"
	# Empty: discard everything; the pool must come back to nothing.
	blkdiscard -f $b || fail "$fam: blkdiscard"
	for i in $(seq 100); do
		read -r orig compr used _ <$d/mm_stat
		[ "$orig$compr$used" = 000 ] && break
		sleep 0.1
	done
	[ "$orig$compr$used" = 000 ] || check "$fam: after discarding everything, mm_stat $(cat $d/mm_stat)"
	echo 1 >$d/reset || fail "$fam: reset"
	echo "$id" >$ctl/hot_remove || fail "$fam: hot_remove"
	losetup -d "$loop"
	rm -f $IMG/back.img
}

# run_disksize FAMILY: disksize (the slot table, the pool, the streams) under
# faults, on a new device; each success is undone by a reset. After the leak
# scan: when an allocation fails inside SLUB's sysfs registration of one of
# zsmalloc's caches, kmem_cache_create() leaks the cache's kobject name
# (mm/slub.c, sysfs_slab_add(): no kobject_put() after kobject_init_and_add()
# fails; upstream 6.12, in the C zram's path too), which kmemleak reports.
run_disksize() {
	local fam=$1 ctl=/sys/class/$1-control id d out=$IMG/$1.out
	id=$(cat $ctl/hot_add) || fail "hot_add"
	d=/sys/block/$fam$id
	failnth -r $d/reset w $d/disksize 16M | tee -a "$out" || check "$fam: disksize under faults"
	[ "$(cat $d/disksize)" = 16777216 ] || check "$fam: disksize after the faults: $(cat $d/disksize)"
	echo 1 >$d/reset || fail "$fam: reset"
	echo "$id" >$ctl/hot_remove || fail "$fam: hot_remove"
}

# run_recompress FAMILY: recompress under faults, on a new device whose one
# page, rewritten before each attempt, is stored with lzo-rle and recompressed
# with zstd; the last attempt, without a fault, must have recompressed it.
run_recompress() {
	local fam=$1 ctl=/sys/class/$1-control id d bs out=$IMG/$1.out
	id=$(cat $ctl/hot_add) || fail "hot_add"
	d=/sys/block/$fam$id
	echo lzo-rle >$d/comp_algorithm || fail "$fam: comp_algorithm"
	echo algo=zstd >$d/recomp_algorithm || fail "$fam: recomp_algorithm"
	echo 1M >$d/disksize || fail "$fam: disksize"
	failnth rc /dev/$fam$id 5 $d type=idle | tee -a "$out" || check "$fam: recompress under faults"
	bs=$dbg/$fam/$fam$id/block_state
	if [ -f "$bs" ]; then
		awk '$1 == 5 && $3 ~ /r/ { found = 1 } END { exit !found }' "$bs" ||
			check "$fam: the page was not recompressed: $(grep -m1 '^ *5 ' "$bs")"
	fi
	echo 1 >$d/reset || fail "$fam: reset"
	echo "$id" >$ctl/hot_remove || fail "$fam: hot_remove"
}

# leaks: kmemleak's report of what the run leaked (it reports an object once
# it has been unreferenced for 5 s), then forget it all.
leaks() {
	[ -f $leak ] || return 0
	sleep 6
	echo scan >$leak
	sleep 6
	echo scan >$leak
	cat $leak >$IMG/leaks
	echo clear >$leak
	if [ -s $IMG/leaks ]; then
		head -60 $IMG/leaks
		return 1
	fi
	echo "kmemleak: nothing new"
}

REF=0
run "$DEV"
run_recompress "$DEV"
leaks || fail "kmemleak reports leaks after the $DEV run"
run_disksize "$DEV"
# The C zram, as the reference. Its
# leaks are not scanned for (a scan would print them in the log).
if [ "$DEV" != zram ] && [ -d /sys/class/zram-control ]; then
	REF=1
	run zram
	run_recompress zram
	run_disksize zram
fi
for f in $IMG/*.out; do
	echo "== $(basename "$f" .out)"
	cat "$f"
done
