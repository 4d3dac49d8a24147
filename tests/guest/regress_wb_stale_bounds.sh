# SPDX-License-Identifier: GPL-2.0
# Guards: a writeback working on the device as it was before a reset (zram
# 2026: stale scan bounds after a reset and a new disksize, so a writeback
# racing the reset walked the old number of pages over the new, smaller
# table). A writeback of the whole device races a reset after 0, 50 and 200
# ms; the device is then initialised smaller on the same backing device, and
# later larger. Each size's writeback must write back exactly its own pages,
# page_index past its end must be refused, and the data must be right.
set -u
. /tests/lib.sh
. /tests/wb_lib.sh

make_data
small_want=$(head -c $((4 << 20)) /tmp/data | md5sum | cut -d' ' -f1)
for f in $(wb_families); do
	wb_use $f
	loop=$(new_loop 16)
	for t in 0 0.05 0.2; do
		reset_during_writeback "$loop" $t
		echo "$loop" >"$d/backing_dev" || fail "$F: backing_dev after the racing reset"
		echo 4M >"$d/disksize" || fail "$F: disksize 4M"
		dd if=/tmp/data of="$blk" bs=1M count=4 oflag=direct 2>/dev/null
		err writeback page_index=1024 EINVAL
		echo all >"$d/idle"
		err writeback idle ok
		[ "$(bd 1)" = 1024 ] || fail "$F: 4M after a reset at ${t}s: bd_stat $(cat "$d/bd_stat")"
		err writeback page_index=1023 ok
		[ "$(bd 1)" = 1024 ] || fail "$F: page_index=1023 again: bd_stat $(cat "$d/bd_stat")"
		[ "$(sum 4)" = "$small_want" ] || fail "$F: 4M device data wrong"
	done
	# Larger again on the same backing device: the scan covers all of it.
	echo 1 >"$d/reset"
	init 32M "$loop"
	err writeback page_index=8192 EINVAL
	err writeback page_index=8191 ok
	echo all >"$d/idle"
	err writeback idle ok
	[ "$(bd 1)" = 2048 ] || fail "$F: 32M after 4M: bd_stat $(cat "$d/bd_stat")"
	[ "$(sum)" = "$want" ] || fail "$F: 32M device data wrong"
	echo 1 >"$d/reset"
	free_loops
	echo "$F: resets racing writeback, then 4M and 32M: each wrote back its own pages"
done
