# SPDX-License-Identifier: GPL-2.0
# Everything at once on one device, every read checked against a shadow model
# (tests/src/torture.c): O_DIRECT reads, writes, discards and write-zeroes
# from several threads, with buffers that start mid-page; racing writes,
# reads and frees of single blocks; sysfs traffic (compact, statistics,
# mem_limit, idle, writeback to a backing device that runs out of room and
# fails its writes, and disksize, reset and comp_algorithm, which must fail
# with EBUSY); hot_add/hot_remove of other
# devices while they are probed; and processes swapping in and out of a
# second device of the same family.
#
# Afterwards every block must read back as the model says, the whole device
# discarded must leave no data and no memory in the pool, the swap device
# must be empty after swapoff, and both must report zero after reset.
#
# Where the C zram is in the kernel too (arm64), the same run with the same
# seed goes to it as the reference, and the sysfs outcomes of the two must
# be the same.
#
# TORTURE_SECS sets the length of each run; TORTURE_REFERENCE=0 skips the C
# zram's run.
# timeout: 900
set -u
. /tests/lib.sh

SECS=${TORTURE_SECS:-40}
SEED=${TORTURE_SEED:-$(date +%s)}
IMG=/tmp/torture
mkdir -p $IMG

# mm_stat_zero FAMILY ID WHAT: fail unless the data, memory, same-filled and
# huge-page fields of FAMILY<ID>'s mm_stat are zero (polled: frees may be
# deferred).
mm_stat_zero() {
	local f=/sys/block/$1$2/mm_stat i orig compr used same huge
	for i in $(seq 100); do
		read -r orig compr used _ _ same _ huge _ <"$f"
		[ "$orig$compr$used$same$huge" = 00000 ] && return 0
		sleep 0.1
	done
	fail "$1$2 $3: mm_stat $(cat "$f") (data, memory, same and huge should be 0)"
}

# On any exit, the swap device and the loop device go, so that a failure
# leaves the next tests a clean slate.
cleanup() {
	if [ -n "${SWAPID:-}" ]; then
		swapoff /dev/$RUNFAM$SWAPID 2>/dev/null
		echo 1 >/sys/block/$RUNFAM$SWAPID/reset 2>/dev/null
		echo "$SWAPID" >/sys/class/$RUNFAM-control/hot_remove 2>/dev/null
	fi
	[ -n "${RUNFAM:-}" ] && echo 1 >/sys/block/${RUNFAM}0/reset 2>/dev/null
	[ -n "${LOOP:-}" ] && losetup -d "$LOOP" 2>/dev/null && umount $IMG/wb 2>/dev/null
	SWAPID= LOOP= RUNFAM=
}
trap cleanup EXIT

# run FAMILY: the torture run on FAMILY0, swapping on a new FAMILY device.
run() {
	local fam=$1 ctl=/sys/class/$1-control sys=/sys/block/${1}0 swapid loop rc
	[ -d "$sys" ] || fail "$sys missing"
	RUNFAM=$fam
	[ "$(cat $sys/initstate)" = 0 ] || echo 1 >$sys/reset || fail "reset $sys"
	# The backing device's file lives on a 1 MiB tmpfs: once its 256 blocks
	# are taken, the backing device fails its writes (ENOSPC) while reads of
	# what it holds go on working, so writeback's error path runs under the
	# load.
	mkdir -p $IMG/wb
	mount -t tmpfs -o size=1M rzwb $IMG/wb || fail "tmpfs for the backing file"
	truncate -s 64M $IMG/wb/back.img
	loop=$(losetup -f --show $IMG/wb/back.img) || fail "losetup"
	LOOP=$loop
	echo "$loop" >$sys/backing_dev || fail "backing_dev of $sys"
	echo 64M >$sys/disksize || fail "disksize of $sys"
	swapid=$(cat $ctl/hot_add) || fail "hot_add"
	SWAPID=$swapid
	echo 192M >/sys/block/$fam$swapid/disksize || fail "disksize of $fam$swapid"
	mkswap /dev/$fam$swapid >/dev/null || fail "mkswap"
	swapon /dev/$fam$swapid || fail "swapon"

	torture -d ${fam}0 -t "$SECS" -j 3 -r -y -W -H 2 -w 2 -m 24 -s "$SEED" -z \
		>$IMG/$fam.out 2>&1
	rc=$?
	cat $IMG/$fam.out
	[ $rc = 0 ] || fail "torture on ${fam}0"
	echo "swap device $fam$swapid at the end: mm_stat $(cat /sys/block/$fam$swapid/mm_stat)"
	swapoff /dev/$fam$swapid || fail "swapoff"
	# Only the swap header is left; discarded, no memory may stay behind.
	read -r orig _ </sys/block/$fam$swapid/mm_stat
	[ "$orig" = 4096 ] || fail "$fam$swapid after swapoff: mm_stat $(cat /sys/block/$fam$swapid/mm_stat) (only the header's 4096 bytes should be left)"
	blkdiscard -f /dev/$fam$swapid || fail "blkdiscard $fam$swapid"
	mm_stat_zero "$fam" "$swapid" "after swapoff and a discard"
	echo 1 >/sys/block/$fam$swapid/reset || fail "reset $fam$swapid"
	echo "$swapid" >$ctl/hot_remove || fail "hot_remove $fam$swapid"
	SWAPID=
	echo "backing device at the end: bd_stat $(cat $sys/bd_stat), $(du -k $IMG/wb/back.img | cut -f1) KiB of its file written"
	# Everything was discarded: a block still in use was leaked.
	read -r inuse _ <$sys/bd_stat
	[ "$inuse" = 0 ] || fail "$fam: $inuse backing-device blocks in use after discarding everything"
	echo 1 >$sys/reset || fail "reset $sys"
	mm_stat_zero "$fam" 0 "after reset"
	losetup -d "$loop"
	LOOP= RUNFAM=
	rm -f $IMG/wb/back.img
	umount $IMG/wb
}

echo "seed $SEED, $SECS s a run"
run "$DEV"
if [ "$DEV" != zram ] && [ -d /sys/class/zram-control ] && [ "${TORTURE_REFERENCE:-1}" = 1 ]; then
	run zram
	# The outcomes by errno, without their counts. A writeback's success or
	# ENOSPC depends on whether the backing device's room ran out by then
	# (timing): those two are left out of the comparison, any other errno
	# (which torture already fails on) is not.
	for f in zram "$DEV"; do
		grep '^sysfs ' $IMG/$f.out | sed -E 's/ [0-9]+//g' |
			sed -E '/^sysfs write writeback=/s/ (ok|ENOSPC)//g' >$IMG/$f.outcomes
	done
	if ! diff $IMG/zram.outcomes $IMG/$DEV.outcomes >$IMG/diff; then
		cat $IMG/diff
		fail "sysfs outcomes differ from the C zram's (< zram, > $DEV)"
	fi
	echo "sysfs outcomes: the same as the C zram's"
fi
