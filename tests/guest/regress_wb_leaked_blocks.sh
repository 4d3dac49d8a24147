# SPDX-License-Identifier: GPL-2.0
# Guards: backing-device blocks leaked by a writeback that ends early or gives
# a page up (zram 2026: a block reserved for the next write was not released
# when a batched writeback stopped, so bd_count never came back to 0 and the
# backing device filled up for good). A writeback is stopped or gives pages up
# in each way it can: the backing device full (ENOSPC), the writeback limit
# spent in the middle of a batch, pages rewritten while their writes are in
# flight, and a backing device that fails a third of its writes. After each,
# every page is checked, the device is discarded whole and bd_stat must show
# no block in use; then a full backing device must take exactly its capacity,
# twice.
set -u
. /tests/lib.sh
. /tests/wb_lib.sh

make_data
for f in $(wb_families); do
	wb_use $f
	# The C zram never uses block 0 of the backing device (its handle 0
	# means none); rzram (the device with slot_bytes) uses them all.
	cap=1024
	[ -f "$d/slot_bytes" ] || cap=1023
	small=$(new_loop 4)
	loop=$(new_loop 16)

	for round in 1 2; do
		init 32M "$small"
		echo all >"$d/idle"
		err writeback idle ENOSPC
		[ "$(bd 1)" = $cap ] || fail "$F: full backing device, round $round: bd_stat $(cat "$d/bd_stat")"
		[ "$(sum)" = "$want" ] || fail "$F: data wrong after ENOSPC"
		blkdiscard -f "$blk" || fail "$F: discard"
		wb_empty "after ENOSPC, round $round"
	done

	# The limit runs out with writes in flight (37 is not a batch's multiple).
	init 32M "$loop"
	echo 1 >"$d/writeback_limit_enable"
	echo 37 >"$d/writeback_limit"
	echo all >"$d/idle"
	err writeback idle EIO
	[ "$(bd 1)" = 37 ] || fail "$F: writeback_limit 37: bd_stat $(cat "$d/bd_stat")"
	echo 0 >"$d/writeback_limit_enable"
	[ "$(sum)" = "$want" ] || fail "$F: data wrong after the limit"
	blkdiscard -f "$blk" || fail "$F: discard"
	wb_empty "after the writeback limit"

	# Pages rewritten while their writes are in flight: the new data stays
	# (a stale completion would put the old data back), and the blocks of
	# the writes that lost come back.
	init 32M "$loop"
	echo all >"$d/idle"
	echo idle >"$d/writeback" &
	w=$!
	for i in 1 2 3 4; do
		dd if=/tmp/data2 of="$blk" bs=1M oflag=direct 2>/dev/null
	done
	wait $w || fail "$F: writeback racing writes failed"
	[ "$(sum)" = "$want2" ] || fail "$F: data wrong after writes racing writeback"
	blkdiscard -f "$blk" || fail "$F: discard"
	wb_empty "after writes racing writeback"

	# A backing device failing a third of its writes: EIO, the pages whose
	# writes failed stay in memory, and the blocks they took come back.
	if loop_fail "$loop" 0; then
		init 32M "$loop"
		echo all >"$d/idle"
		loop_fail "$loop" 33
		err writeback idle EIO
		loop_fail "$loop" 0
		n=$(bd 1)
		[ "$n" -gt 0 ] && [ "$n" -lt 2048 ] || fail "$F: a third failing: bd_stat $(cat "$d/bd_stat")"
		[ "$(sum)" = "$want" ] || fail "$F: data wrong after failed writes"
		blkdiscard -f "$blk" || fail "$F: discard"
		wb_empty "after failed writes"
		echo "$F: a third of the writes failing: $n of 2048 written back, none leaked"
	else
		echo "$F: no fail_make_request in this kernel: failing writes skipped"
	fi

	init 32M "$small"
	echo all >"$d/idle"
	err writeback idle ENOSPC
	[ "$(bd 1)" = $cap ] || fail "$F: full backing device at the end: bd_stat $(cat "$d/bd_stat")"
	echo 1 >"$d/reset"
	free_loops
	echo "$F: no block leaked"
done
