# SPDX-License-Identifier: GPL-2.0
# Guards: a written-back page freed as if it were in memory (zram 2026: the
# free of a written-back slot went down the in-memory path, so it freed a
# zsmalloc handle that was a block number and miscounted the stored data).
# Every page is written back, then freed each way a page can be: rewritten
# whole, rewritten in part through the page cache (read back from the backing
# device, changed, stored), discarded, zeroed (BLKZEROOUT), freed by swap (the
# slot-free notification of the pages a process no longer needs) and by a
# reset. After each the data left is checked against a model, and once every
# page is gone bd_stat and mm_stat must be empty; the KASAN kernel reports a
# free of anything that is not there.
# timeout: 900
set -u
. /tests/lib.sh
. /tests/wb_lib.sh

# held: memstress has filled its memory and pushed it out to swap: write all
# of it back, so that what it reads back and then frees was written back.
held() {
	echo all >"$d/idle"
	err writeback idle ok
	wb_pages=$(bd 1)
	echo "$F: $wb_pages swapped-out pages written back"
}

make_data
for f in $(wb_families); do
	wb_use $f
	loop=$(new_loop 64)
	init 32M "$loop"
	cp /tmp/data /tmp/model
	echo all >"$d/idle"
	err writeback idle ok
	[ "$(bd 1)" = 2048 ] || fail "$F: not all written back: bd_stat $(cat "$d/bd_stat")"
	# Rewritten whole: the first MiB.
	dd if=/tmp/data2 of="$blk" bs=1M count=1 oflag=direct 2>/dev/null || fail "$F: rewrite"
	dd if=/tmp/data2 of=/tmp/model bs=1M count=1 conv=notrunc 2>/dev/null
	[ "$(bd 1)" = 1792 ] || fail "$F: rewrite kept blocks: bd_stat $(cat "$d/bd_stat")"
	# Rewritten in part: 5 bytes into each of pages 300-303, through the page
	# cache, which reads each page back and then writes it whole.
	for p in 300 301 302 303; do
		printf 'patch' | dd of="$blk" bs=1 seek=$((p * 4096 + 100)) conv=notrunc 2>/dev/null
		printf 'patch' | dd of=/tmp/model bs=1 seek=$((p * 4096 + 100)) conv=notrunc 2>/dev/null
	done
	sync "$blk"
	blockdev --flushbufs "$blk"
	[ "$(bd 1)" = 1788 ] || fail "$F: partial rewrites kept blocks: bd_stat $(cat "$d/bd_stat")"
	# Discarded: the third MiB; zeroed: the fourth.
	blkdiscard -f -o $((2 << 20)) -l $((1 << 20)) "$blk" || fail "$F: discard"
	blkdiscard -f -z -o $((3 << 20)) -l $((1 << 20)) "$blk" || fail "$F: zero-out"
	dd if=/dev/zero of=/tmp/model bs=1M seek=2 count=2 conv=notrunc 2>/dev/null
	[ "$(bd 1)" = 1276 ] || fail "$F: discard and zero-out kept blocks: bd_stat $(cat "$d/bd_stat")"
	[ "$(sum)" = "$(md5sum </tmp/model | cut -d' ' -f1)" ] || fail "$F: data wrong after the frees"
	blkdiscard -f "$blk" || fail "$F: discard all"
	wb_empty "every written-back page freed"
	# By a reset, with 2048 pages written back; then the same backing
	# device takes them all again.
	dd if=/tmp/data of="$blk" bs=1M oflag=direct 2>/dev/null || fail "$F: write"
	echo all >"$d/idle"
	err writeback idle ok
	init 32M "$loop"
	echo all >"$d/idle"
	err writeback idle ok
	[ "$(bd 1)" = 2048 ] || fail "$F: after a reset with pages written back: bd_stat $(cat "$d/bd_stat")"
	[ "$(sum)" = "$want" ] || fail "$F: data wrong after a reset with pages written back"
	echo 1 >"$d/reset"

	# By swap: a process's pages pushed out, written back, read back (each
	# swap-in reads the backing device) and freed when it exits.
	echo "$loop" >"$d/backing_dev" || fail "$F: backing_dev"
	echo 64M >"$d/disksize" || fail "$F: disksize 64M"
	mkswap "$blk" >/dev/null || fail "$F: mkswap"
	swapon "$blk" || fail "$F: swapon"
	run_held held -m 24 -r 25 -p || fail "$F: swapped-out pages written back came back wrong"
	[ "$wb_pages" -gt 4096 ] || fail "$F: only $wb_pages pages written back under swap"
	swapoff "$blk" || fail "$F: swapoff"
	# Only the swap header is left, maybe written back.
	[ "$(bd 1)" -le 1 ] && [ "$(mm 1)" -le 4096 ] ||
		fail "$F: after swapoff: bd_stat $(cat "$d/bd_stat"), mm_stat $(cat "$d/mm_stat")"
	blkdiscard -f "$blk" || fail "$F: discard the swap device"
	wb_empty "swap's pages written back and freed"
	echo 1 >"$d/reset"
	free_loops
	echo "$F: written-back pages freed every way: counts and data right"
done
