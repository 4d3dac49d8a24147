# SPDX-License-Identifier: GPL-2.0
# Writeback to a backing device (a loop device over a file): backing_dev,
# writeback in every mode, bd_stat, reads of written-back pages, and the
# races and error paths zram's 2026 fixes were about: a page rewritten or
# discarded while its write is in flight, blocks leaked by a writeback that
# stops early, a reset (and a smaller re-initialisation) racing a writeback,
# written-back pages freed, a backing device that fails its I/O. Every page is
# checked against its original after each step.
#
# The 6.12 interface runs on each device family that has it (the arm64 C zram
# is built with ZRAM_WRITEBACK), so the two are held to the same outcome; the
# newer forms (type=, page_indexes=, writeback_batch_size,
# writeback_compressed) on rzram alone.
set -u
. /tests/lib.sh

IMG=/tmp/wb
mkdir -p $IMG

# A loop device over a new sparse file of $1 MiB.
new_loop() {
	local f=$IMG/back$RANDOM.img
	truncate -s "$1M" "$f" || fail "truncate $f"
	losetup -f --show "$f" || fail "losetup $f"
}

free_loops() {
	losetup -D
	rm -f $IMG/*.img
}

# err ATTR VALUE WANT: the write gives WANT ("ok" or an errno name).
err() {
	local r
	r=$(sysfs_rw w "$d/$1" "$2")
	[ "$r" = "$3" ] || fail "$F: $1 <- '$2': $r, want $3"
}

bd() { awk -v i="$1" '{ print $i }' "$d/bd_stat"; }
compr() { awk '{ print $2 }' "$d/mm_stat"; }
# The checksum of the first $1 MiB (8 by default), read past the page cache.
sum() { dd if="$blk" bs=1M count="${1:-8}" iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1; }

# 8 MiB of data, 2048 pages: text (compressible, each page its own, none
# same-filled) then
# random bytes (huge pages). /tmp/data2 is other data of the same kinds.
text() {
	awk -v tag="$1" 'BEGIN {
		for (i = 0; i < 1024; i++) {
			s = sprintf("%s page %06d of rzram writeback data\n", tag, i); l = ""
			while (length(l) < 4096) l = l s
			printf "%s", substr(l, 1, 4096)
		} }'
}

make_data() {
	text one >/tmp/data
	head -c $((4 << 20)) /dev/urandom >>/tmp/data
	text two >/tmp/data2
	head -c $((4 << 20)) /dev/urandom >>/tmp/data2
	[ "$(stat -c %s /tmp/data)" = $((8 << 20)) ] || fail "no 8 MiB of data"
	want=$(md5sum </tmp/data | cut -d' ' -f1)
	want2=$(md5sum </tmp/data2 | cut -d' ' -f1)
}

# init SIZE LOOP: reset, set the backing device, initialise, write the data.
init() {
	[ "$(cat "$d/initstate")" = 0 ] || echo 1 >"$d/reset" || fail "$F: reset"
	echo "$2" >"$d/backing_dev" || fail "$F: backing_dev $2"
	echo "$1" >"$d/disksize" || fail "$F: disksize"
	dd if=/tmp/data of="$blk" bs=1M oflag=direct 2>/dev/null || fail "$F: write"
	[ "$(sum)" = "$want" ] || fail "$F: data wrong before writeback"
}

# The 6.12 interface, on device 0 of family $F.
common() {
	local loop small c0 w r n cap
	loop=$(new_loop 16)
	# The C zram never uses block 0 of the backing device (its handle 0
	# means none); rzram (the device with slot_bytes) uses them all.
	cap=1024
	[ -f "$d/slot_bytes" ] || cap=1023
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

	# The backing device fills up: ENOSPC, and blocks are not leaked: after
	# the rest is written back and everything discarded, none is in use.
	echo 1 >"$d/reset"
	[ "$(cat "$d/backing_dev")" = none ] || fail "$F: backing_dev kept by reset"
	small=$(new_loop 4)
	init 32M "$small"
	echo all >"$d/idle"
	err writeback idle ENOSPC
	[ "$(bd 1)" = $cap ] || fail "$F: full backing device: bd_stat $(cat "$d/bd_stat")"
	[ "$(sum)" = "$want" ] || fail "$F: data wrong after ENOSPC"
	blkdiscard -f "$blk" || fail "$F: discard all"
	[ "$(bd 1)" = 0 ] || fail "$F: blocks leaked: bd_stat $(cat "$d/bd_stat")"
	dd if=/tmp/data of="$blk" bs=1M oflag=direct 2>/dev/null
	echo all >"$d/idle"
	err writeback idle ENOSPC
	[ "$(bd 1)" = $cap ] || fail "$F: second fill: bd_stat $(cat "$d/bd_stat")"

	# Pages rewritten while their writes are in flight: the new data stays
	# (a stale completion would put the old data back).
	echo 1 >"$d/reset"
	init 32M "$loop"
	echo all >"$d/idle"
	echo idle >"$d/writeback" &
	w=$!
	for i in 1 2 3 4; do
		dd if=/tmp/data2 of="$blk" bs=1M oflag=direct 2>/dev/null
	done
	wait $w || fail "$F: writeback racing writes failed"
	[ "$(sum)" = "$want2" ] || fail "$F: data wrong after writes racing writeback"
	blkdiscard -f "$blk" || fail "$F: discard all"
	[ "$(bd 1)" = 0 ] || fail "$F: blocks leaked by writes racing writeback: bd_stat $(cat "$d/bd_stat")"

	# A reset racing a writeback (it waits for the writeback, as zram's),
	# then a smaller device on the same backing device: the old scan never
	# reaches the new slots.
	dd if=/tmp/data of="$blk" bs=1M oflag=direct 2>/dev/null
	echo all >"$d/idle"
	echo idle >"$d/writeback" &
	w=$!
	sleep 0.1
	echo 1 >"$d/reset" || fail "$F: reset during writeback"
	echo "$loop" >"$d/backing_dev" || fail "$F: backing_dev right after the racing reset"
	wait $w
	echo 4M >"$d/disksize"
	dd if=/tmp/data of="$blk" bs=1M count=4 oflag=direct 2>/dev/null
	echo all >"$d/idle"
	err writeback idle ok
	[ "$(bd 1)" = 1024 ] || fail "$F: small device: bd_stat $(cat "$d/bd_stat")"
	[ "$(sum 4)" = "$(head -c $((4 << 20)) /tmp/data | md5sum | cut -d' ' -f1)" ] ||
		fail "$F: small device data wrong"
	echo 1 >"$d/reset"

	# A backing device that fails its I/O: the writeback fails with EIO and
	# keeps the pages; reads of pages already written back fail, and succeed
	# again once the device works.
	fmr=/sys/kernel/debug/fail_make_request
	lb=/sys/block/${loop#/dev/}/make-it-fail
	if [ -d $fmr ] && [ -f "$lb" ]; then
		init 32M "$loop"
		echo 0 >$fmr/verbose
		echo 100 >$fmr/probability
		echo -1 >$fmr/times
		err writeback huge ok
		echo 1 >"$lb"
		echo all >"$d/idle"
		err writeback idle EIO
		[ "$(bd 1)" = 1024 ] || fail "$F: failed writes kept blocks: bd_stat $(cat "$d/bd_stat")"
		dd if="$blk" of=/dev/null bs=1M skip=4 count=4 iflag=direct 2>/dev/null &&
			fail "$F: reads of written-back pages did not fail"
		echo 0 >"$lb"
		[ "$(sum)" = "$want" ] || fail "$F: data wrong after backing-device errors"
		echo 1 >"$d/reset"
		echo "$F: backing-device faults: writeback EIO, reads EIO, nothing lost"
	else
		echo "$F: no fail_make_request in this kernel: fault part skipped"
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
	err writeback_compressed maybe EINVAL
	for c in 0 1; do
		err writeback_compressed $c ok
		[ "$(cat "$d/compressed_writeback")" = $c ] || fail "compressed_writeback is not writeback_compressed"
		init 32M "$loop"
		err writeback_compressed $c EBUSY
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
		echo "rzram: writeback_compressed=$c: bd_stat $(cat "$d/bd_stat")"
		echo 1 >"$d/reset"
	done
	err writeback_compressed 0 ok
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
fams=""
for f in zram rzram; do
	[ -f /sys/block/${f}0/backing_dev ] && fams="$fams $f"
done
[ -n "$fams" ] || fail "no device with backing_dev"
for F in $fams; do
	d=/sys/block/${F}0
	blk=/dev/${F}0
	common
done
if [ -f "$SYS/writeback_batch_size" ]; then
	F=$DEV d=$SYS blk=$BLK
	newer
fi
