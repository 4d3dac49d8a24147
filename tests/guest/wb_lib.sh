# SPDX-License-Identifier: GPL-2.0
# Helpers for the writeback tests (sourced after lib.sh): rzram_writeback and
# the regress_wb_* tests. Each runs on every device family whose device 0 has
# backing_dev (the arm64 C zram is built with ZRAM_WRITEBACK), with F the
# family, d its device 0's sysfs directory and blk its block device.

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

# bd N: field N of bd_stat (1: blocks in use, 2: reads, 3: writes).
bd() { awk -v i="$1" '{ print $i }' "$d/bd_stat"; }
# mm N: field N of mm_stat.
mm() { awk -v i="$1" '{ print $i }' "$d/mm_stat"; }
compr() { mm 2; }
# The checksum of the first $1 MiB (8 by default), read past the page cache.
sum() { dd if="$blk" bs=1M count="${1:-8}" iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1; }

# 8 MiB of data, 2048 pages: text (compressible, each page its own, none
# same-filled) then random bytes (huge pages). /tmp/data2 is other data of the
# same kinds.
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

# reset_during_writeback LOOP T: the device initialised on LOOP, its data
# written back in the background, and a reset after T seconds (it waits for
# the writeback, as zram's does).
reset_during_writeback() {
	local w
	init 32M "$1"
	echo all >"$d/idle"
	echo idle >"$d/writeback" &
	w=$!
	sleep "$2"
	echo 1 >"$d/reset" || fail "$F: reset during writeback"
	wait $w
}

# The families to test, and their device 0 present and uninitialised.
wb_families() {
	local f fams=""
	for f in zram rzram; do
		[ -f /sys/block/${f}0/backing_dev ] && fams="$fams $f"
	done
	[ -n "$fams" ] || fail "no device with backing_dev"
	echo $fams
}

# wb_use FAMILY: point F, d and blk at that family's device 0.
wb_use() {
	F=$1
	d=/sys/block/${F}0
	blk=/dev/${F}0
}

# The I/O of a loop device fails with probability $2 percent (0: it works),
# through fail_make_request; returns 1 if this kernel cannot.
FMR=/sys/kernel/debug/fail_make_request
loop_fail() {
	local lb=/sys/block/${1#/dev/}/make-it-fail
	[ -d $FMR ] && [ -f "$lb" ] || return 1
	if [ "$2" = 0 ]; then
		echo 0 >"$lb"
		return 0
	fi
	echo 0 >$FMR/verbose
	echo "$2" >$FMR/probability
	echo 1 >$FMR/interval
	echo -1 >$FMR/times
	echo 1 >"$lb"
}

# wb_empty WHAT: every page freed: no block, no stored data, no huge page. A
# written-back page freed as if it were in memory would leave the counts wrong
# (or wrapped) or free a zsmalloc object that is not there. Frees by swap may
# wait for zsmalloc's deferred free (a quarter of a second): allow 2 s.
wb_empty() {
	local i
	for i in $(seq 20); do
		[ "$(bd 1)" = 0 ] && [ "$(mm 1)" = 0 ] && [ "$(mm 2)" = 0 ] &&
			[ "$(mm 8)" = 0 ] && return 0
		sleep 0.1
	done
	fail "$F: $1: not empty: bd_stat $(cat "$d/bd_stat"), mm_stat $(cat "$d/mm_stat")"
}
