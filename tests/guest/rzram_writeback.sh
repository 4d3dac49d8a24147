# SPDX-License-Identifier: GPL-2.0
# Writeback to a backing device (a loop device over a file): backing_dev,
# writeback in every mode, writeback_limit, bd_stat, block_state and reads of
# written-back pages, which fail with EIO while the backing device fails its
# I/O (fail_make_request) and work again after. Every page is checked
# against its original after each step. The races and error paths of zram's
# 2026 writeback fixes have tests of their own: regress_wb_completion,
# regress_wb_leaked_blocks, regress_wb_stale_bounds and
# regress_wb_freed_slots.
#
# The 6.12 interface runs on each device family that has it (the arm64 C zram
# is built with ZRAM_WRITEBACK), so the two are held to the same outcome; the
# newer forms (type=, page_indexes=, writeback_batch_size,
# compressed_writeback) on rzram alone.
set -u
. /tests/lib.sh
. /tests/wb_lib.sh

# The 6.12 interface, on device 0 of family $F.
common() {
	local loop c0 w r n
	loop=$(new_loop 16)
	[ "$(cat "$d/initstate")" = 0 ] || echo 1 >"$d/reset"
	[ "$(cat "$d/backing_dev")" = none ] || fail "$F: backing_dev not none after reset"
	err backing_dev /nonexistent ENOENT
	truncate -s 1M $IMG/regular.img
	err backing_dev $IMG/regular.img ENOTBLK
	err writeback idle EINVAL
	init 32M "$loop"
	[ "$(cat "$d/backing_dev")" = "$loop" ] || fail "$F: backing_dev shows $(cat "$d/backing_dev")"
	err backing_dev "$loop" EBUSY
	err writeback all EINVAL
	err writeback "\\n" EINVAL
	err writeback page_index=8192 EINVAL
	err writeback page_index=x EINVAL
	[ "$(bd 1)" = 0 ] || fail "$F: bd_stat not 0 before writeback: $(cat "$d/bd_stat")"

	# huge: the random half, 1024 pages.
	c0=$(compr)
	err writeback huge ok
	w=$(bd 3)
	[ "$w" = 1024 ] && [ "$(bd 1)" = 1024 ] || fail "$F: writeback huge: bd_stat $(cat "$d/bd_stat")"
	[ "$(compr)" -lt "$c0" ] || fail "$F: compressed size did not drop"
	[ "$(sum)" = "$want" ] || fail "$F: data wrong after writeback huge"
	r=$(bd 2)
	[ "$r" -ge 1024 ] || fail "$F: only $r pages read from the backing device"
	# idle: nothing idle yet; then all of it (the huge half is written back
	# already, and its reads above do not make it stored again).
	err writeback idle ok
	[ "$(bd 3)" = "$w" ] || fail "$F: writeback idle wrote pages not idle"
	echo all >"$d/idle"
	err writeback idle ok
	[ "$(bd 1)" = 2048 ] || fail "$F: writeback idle: bd_stat $(cat "$d/bd_stat")"
	[ "$(sum)" = "$want" ] || fail "$F: data wrong after writeback idle"
	bs=/sys/kernel/debug/$F/${F}0/block_state
	if [ -f "$bs" ]; then
		n=$(awk '$3 ~ /^.w/' "$bs" | wc -l)
		[ "$n" = 2048 ] || fail "$F: block_state shows $n pages w, want 2048"
	fi
	# Written-back pages freed: rewritten (the first MiB) and discarded (the
	# second): their blocks come back.
	dd if=/tmp/data of="$blk" bs=1M count=1 oflag=direct 2>/dev/null
	[ "$(bd 1)" = 1792 ] || fail "$F: rewrite kept blocks: bd_stat $(cat "$d/bd_stat")"
	blkdiscard -f -o $((1 << 20)) -l $((1 << 20)) "$blk" || fail "$F: discard"
	[ "$(bd 1)" = 1536 ] || fail "$F: discard kept blocks: bd_stat $(cat "$d/bd_stat")"
	dd if=/tmp/data of="$blk" bs=1M count=1 skip=1 seek=1 oflag=direct 2>/dev/null
	[ "$(sum)" = "$want" ] || fail "$F: data wrong after rewrite and discard"
	# page_index: one page, once.
	echo all >"$d/idle"
	err writeback page_index=3 ok
	[ "$(bd 1)" = 1537 ] || fail "$F: page_index=3: bd_stat $(cat "$d/bd_stat")"
	err writeback page_index=3 ok
	[ "$(bd 1)" = 1537 ] || fail "$F: page_index=3 twice: bd_stat $(cat "$d/bd_stat")"

	# writeback_limit: 40 pages (4 KiB units), then EIO.
	echo 1 >"$d/writeback_limit_enable"
	echo 40 >"$d/writeback_limit"
	err writeback idle EIO
	[ "$(bd 1)" = 1577 ] || fail "$F: writeback_limit 40: bd_stat $(cat "$d/bd_stat")"
	[ "$(cat "$d/writeback_limit")" = 0 ] || fail "$F: limit left: $(cat "$d/writeback_limit")"
	echo 0 >"$d/writeback_limit_enable"
	[ "$(sum)" = "$want" ] || fail "$F: data wrong after the limit"

	echo 1 >"$d/reset"

	# A backing device that fails its I/O: reads of written-back pages fail
	# with EIO, and succeed again once it works; nothing is lost.
	if loop_fail "$loop" 0; then
		init 32M "$loop"
		err writeback huge ok
		loop_fail "$loop" 100
		dd if="$blk" of=/dev/null bs=1M skip=4 count=4 iflag=direct 2>/dev/null &&
			fail "$F: reads of written-back pages did not fail"
		loop_fail "$loop" 0
		[ "$(sum)" = "$want" ] || fail "$F: data wrong after backing-device errors"
		echo 1 >"$d/reset"
	fi
	echo "$F: 6.12 writeback interface: ok"
	free_loops
}

# The newer interface, rzram only.
newer() {
	local loop a b
	loop=$(new_loop 16)
	[ "$(cat "$d/writeback_batch_size")" = 32 ] || fail "writeback_batch_size default $(cat "$d/writeback_batch_size")"
	err writeback_batch_size 0 EINVAL
	err writeback_batch_size x EINVAL
	err writeback_batch_size 4294967296 EINVAL
	err writeback_batch_size 1 ok
	# zram 7.0's name; writeback_compressed, the name before its release, is not offered.
	[ ! -e "$d/writeback_compressed" ] || fail "writeback_compressed exists"
	err compressed_writeback maybe EINVAL
	for c in 0 1; do
		err compressed_writeback $c ok
		[ "$(cat "$d/compressed_writeback")" = $c ] || fail "compressed_writeback reads $(cat "$d/compressed_writeback"), not $c"
		init 32M "$loop"
		err compressed_writeback $c EBUSY
		err writeback type=all EINVAL
		err writeback page_indexes=5-4 ERANGE
		err writeback page_indexes=0-8192 ERANGE
		err writeback page_indexes=7 EINVAL
		# page_indexes and type= (the huge pages among 1000-1499: 1024 up).
		err writeback "page_indexes=1000-1499 type=huge" ok
		[ "$(bd 1)" = 476 ] || fail "wc=$c: page_indexes with type=huge: bd_stat $(cat "$d/bd_stat")"
		err writeback "page_index=0 page_index=1 page_indexes=2-9" ok
		[ "$(bd 1)" = 486 ] || fail "wc=$c: page_index list: bd_stat $(cat "$d/bd_stat")"
		# A page named twice is written back once, while it is rewritten.
		dd if=/tmp/data of="$blk" bs=1M count=1 oflag=direct 2>/dev/null &
		err writeback "page_index=20 page_index=20 page_indexes=20-21 page_indexes=21-21" ok
		wait
		[ "$(bd 1)" -le 488 ] || fail "wc=$c: repeated pages: bd_stat $(cat "$d/bd_stat")"
		[ "$(sum)" = "$want" ] || fail "wc=$c: data wrong after repeated pages"
		echo 32 >"$d/writeback_batch_size"
		echo all >"$d/idle"
		err writeback type=idle ok
		n=$(bd 1)
		[ "$n" = 2048 ] || fail "wc=$c: type=idle: bd_stat $(cat "$d/bd_stat")"
		[ "$(sum)" = "$want" ] || fail "wc=$c: data wrong"
		echo "rzram: compressed_writeback=$c: bd_stat $(cat "$d/bd_stat")"
		echo 1 >"$d/reset"
	done
	err compressed_writeback 0 ok
	# Two devices cannot share a backing device (exclusive open).
	id=$(cat /sys/class/${DEV}-control/hot_add)
	echo "$loop" >"$d/backing_dev" || fail "backing_dev"
	r=$(sysfs_rw w /sys/block/${DEV}$id/backing_dev "$loop")
	[ "$r" = EBUSY ] || fail "a second device took the backing device: $r"
	echo "$id" >/sys/class/${DEV}-control/hot_remove
	echo 1 >"$d/reset"
	echo "rzram: newer writeback interface: ok"
	free_loops
}

make_data
for f in $(wb_families); do
	wb_use $f
	common
done
if [ -f "$SYS/writeback_batch_size" ]; then
	F=$DEV d=$SYS blk=$BLK
	newer
fi
