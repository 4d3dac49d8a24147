# SPDX-License-Identifier: GPL-2.0
# Guards: a writeback's completions touching its context after the writeback
# returned and freed it (zram 2026: a use-after-free of the writeback context
# at bio completion, when a batched writeback ended with writes still in
# flight). Writebacks end early with writes in flight in each way they can: a
# backing device failing a third of its writes, the writeback limit spent in
# the middle of a batch, the backing device full. Each is followed at once by
# a reset; and writebacks run in the background while a reset, or the removal
# of their device, comes after 0 to 200 ms. The KASAN kernel reports any
# access to freed memory; the data is checked wherever it is kept.
set -u
. /tests/lib.sh
. /tests/wb_lib.sh

ctl=/sys/class
make_data
for f in $(wb_families); do
	wb_use $f
	loop=$(new_loop 16)
	small=$(new_loop 2)
	fails=0
	loop_fail "$loop" 0 && fails=1
	for round in 1 2; do
		if [ $fails = 1 ]; then
			init 32M "$loop"
			echo all >"$d/idle"
			loop_fail "$loop" 33
			err writeback idle EIO
			loop_fail "$loop" 0
			# Round 1 checks the data; the others reset at once.
			if [ $round = 1 ]; then
				[ "$(sum)" = "$want" ] || fail "$F: data wrong after failed writes"
			fi
			echo 1 >"$d/reset"
		fi
		init 32M "$loop"
		echo 1 >"$d/writeback_limit_enable"
		echo $((20 + round * 17)) >"$d/writeback_limit"
		echo all >"$d/idle"
		err writeback idle EIO
		echo 1 >"$d/reset"
		echo 0 >"$d/writeback_limit_enable"
		init 32M "$small"
		echo all >"$d/idle"
		err writeback idle ENOSPC
		echo 1 >"$d/reset"
	done
	for t in 0 0.05 0.2; do
		reset_during_writeback "$loop" $t
	done
	# A device of its own, removed while its writeback runs: zram's removal
	# waits for the writeback (it takes the lock the writeback holds), and so
	# must rzram's.
	for t in 0 0.1; do
		id=$(cat $ctl/$F-control/hot_add) || fail "$F: hot_add"
		n=/sys/block/$F$id
		echo "$loop" >"$n/backing_dev" || fail "$F: backing_dev of $F$id"
		echo 32M >"$n/disksize" || fail "$F: disksize of $F$id"
		dd if=/tmp/data of=/dev/$F$id bs=1M oflag=direct 2>/dev/null || fail "$F: write $F$id"
		echo all >"$n/idle"
		echo idle >"$n/writeback" &
		w=$!
		sleep $t
		r=$(sysfs_rw w $ctl/$F-control/hot_remove "$id")
		wait $w
		[ "$r" = ok ] || fail "$F: hot_remove of $F$id during its writeback: $r"
		[ -e "$n" ] && fail "$F: $F$id still there after hot_remove"
	done
	free_loops
	echo "$F: writebacks ended early, reset or removed in flight: no fault"
done
