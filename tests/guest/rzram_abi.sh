# SPDX-License-Identifier: GPL-2.0
# zram's sysfs ABI: every attribute with good and bad input. The same
# sequence runs on each device family present; each step must give the errno
# zram documents, and where the C zram is in the same kernel (arm64), rzram's
# transcript must equal zram's byte for byte.
set -u
. /tests/lib.sh

rw=/usr/local/bin/sysfs_rw
[ -x "$rw" ] || fail "$rw missing"

# run FAMILY: the transcript of the sequence on FAMILY's device 0.
run() {
	local F=$1 d=/sys/block/${1}0 c=/sys/class/${1}-control blk=/dev/${1}0 id
	[ "$(cat $d/initstate)" = 0 ] || echo 1 >$d/reset
	# Paths are printed with the family name replaced, so that transcripts
	# of zram and rzram line up column for column.
	step() { printf '%-40s %s\n' "$1 ${2/$F/DEV} '${3-}'" "$($rw "$@" | tr '\n' '|')"; }
	show() { printf '%-40s %s\n' "r ${1/$F/DEV}" "$($rw r "$1" | tr '\n' '|')"; }
	for a in initstate disksize comp_algorithm io_stat debug_stat max_comp_streams; do
		show $d/$a
	done
	step w $d/comp_algorithm "foo"
	step w $d/comp_algorithm ""
	step w $d/comp_algorithm "$(printf 'a%.0s' $(seq 200))"
	step w $d/comp_algorithm "lz4"
	show $d/comp_algorithm
	step w $d/comp_algorithm "lzo-rle\n"
	# idle before disksize.
	step w $d/idle "all"
	# Secondary algorithms (recompression).
	step w $d/recomp_algorithm "algo=zstd"
	step w $d/recomp_algorithm "algo=lz4hc priority=3"
	show $d/recomp_algorithm
	step w $d/recomp_algorithm "algo=nosuch"
	step w $d/recomp_algorithm "priority=2"
	step w $d/recomp_algorithm "algo=zstd priority=4"
	step w $d/recomp_algorithm "algo=zstd priority=0"
	step w $d/recomp_algorithm "algo="
	step w $d/recompress "type=idle"
	# algorithm_params: forms where 6.12 and newer zram agree.
	step w $d/algorithm_params "level=3"
	step w $d/algorithm_params "algo=lzo-rle level=1"
	step w $d/algorithm_params "level=abc"
	step w $d/algorithm_params "level=99999999999"
	step w $d/algorithm_params "priority=9"
	step w $d/algorithm_params "algo=nosuch"
	step w $d/algorithm_params "level"
	step w $d/algorithm_params "level="
	# Writeback, uninitialised: no backing device yet.
	show $d/backing_dev
	show $d/bd_stat
	step w $d/backing_dev "/nonexistent"
	: >/tmp/abi.regular
	step w $d/backing_dev "/tmp/abi.regular"
	show $d/backing_dev
	step w $d/writeback "idle"
	step w $d/writeback "junk"
	step w $d/writeback_limit "abc"
	step w $d/writeback_limit "-1"
	step w $d/writeback_limit "100"
	show $d/writeback_limit
	step w $d/writeback_limit_enable "x"
	step w $d/writeback_limit_enable "2"
	show $d/writeback_limit_enable
	step w $d/writeback_limit_enable "0"
	show $d/writeback_limit_enable
	step w $d/reset "0"
	step w $d/reset "x"
	step w $d/reset "70000"
	step w $d/reset "1"
	step w $d/compact "1"
	step w $d/disksize "abc"
	step w $d/disksize "0"
	step w $d/disksize "-1"
	step w $d/disksize "64M"
	step w $d/disksize "32M"
	show $d/disksize
	show $d/initstate
	step w $d/comp_algorithm "lz4"
	step w $d/mem_limit "abc"
	step w $d/mem_limit "1M"
	step w $d/mem_limit "0"
	step w $d/mem_used_max "1"
	step w $d/mem_used_max "x"
	step w $d/mem_used_max "0"
	step w $d/compact "1"
	step w $d/max_comp_streams "4"
	# Writeback, initialised, without a backing device.
	step w $d/backing_dev "/nonexistent"
	step w $d/writeback "idle"
	step w $d/writeback "huge_idle\n"
	step w $d/writeback "page_index=0"
	step w $d/writeback "page_index=99999999"
	step w $d/writeback "page_index=abc"
	step w $d/writeback "page_index"
	step w $d/writeback "nonsense"
	show $d/bd_stat
	show $d/writeback_limit
	# idle: all, an age in seconds (base 0, as kstrtoull), junk.
	step w $d/idle "all"
	step w $d/idle "all\n"
	step w $d/idle "0"
	step w $d/idle "0x10"
	step w $d/idle "3600\n"
	step w $d/idle "abc"
	step w $d/idle "-1"
	step w $d/idle "99999999999999999999"
	step w $d/idle ""
	# Recompression once initialised.
	step w $d/recomp_algorithm "algo=lz4"
	show $d/recomp_algorithm
	step w $d/recompress "type=idle"
	step w $d/recompress "type=huge_idle max_pages=4"
	step w $d/recompress "threshold=1000 algo=lz4hc"
	step w $d/recompress "threshold=99999"
	step w $d/recompress "algo=nosuch"
	step w $d/recompress "max_pages=x"
	step w $d/recompress "threshold"
	# Discarded pages count in io_stat's notify_free, one per page, as in zram.
	dd if=/dev/urandom of="$blk" bs=4k count=16 oflag=direct 2>/dev/null
	blkdiscard -o 0 -l 65536 "$blk"
	show $d/io_stat
	echo "io_stat notify_free after discarding 16 pages: $(awk '{print $4}' $d/io_stat)"
	step r $d/reset
	step w $d/mm_stat "1"
	# Open devices cannot be reset.
	exec 3<"$blk"
	step w $d/reset "1"
	exec 3<&-
	step w $d/reset "1"
	show $d/initstate
	show $d/disksize
	show $d/mm_stat
	show $d/io_stat
	step w $c/hot_remove "abc"
	step w $c/hot_remove "-1"
	step w $c/hot_remove "99999"
	id=$($rw r $c/hot_add)
	echo "hot_add gave a number: $([ "$id" -ge 1 ] 2>/dev/null && echo yes || echo "no ($id)")"
	# The new device's number is the same for both drivers; the step lines
	# below show it.
	step w $c/hot_remove "$id"
	step w $c/hot_remove "$id"
}

# check FILE RULE...: for each rule "STEP => ERRNO", the first line of FILE
# containing STEP ends with ERRNO.
check() {
	local t=$1 rule step want got
	shift
	for rule in "$@"; do
		step=${rule%% => *} want=${rule##* => }
		got=$(grep -F "$step" "$t" | head -1 | awk '{print $NF}')
		[ "$got" = "$want|" ] || { echo "$step: got '$got' want '$want'"; return 1; }
	done
}

fams=""
for f in zram rzram; do
	[ -d /sys/block/${f}0 ] && fams="$fams $f"
done
[ -n "$fams" ] || fail "no zram or rzram device"
bad=0
for f in $fams; do
	run $f >/tmp/abi.$f 2>&1
	cp /tmp/abi.$f /tmp/abi.$f.n
	check /tmp/abi.$f.n \
		"comp_algorithm 'foo' => EINVAL" \
		"comp_algorithm 'aaaaaaaaaa => E2BIG" \
		"reset '0' => EINVAL" "reset 'x' => EINVAL" "reset '70000' => ERANGE" \
		"disksize 'abc' => EINVAL" "disksize '0' => EINVAL" "disksize '32M' => EBUSY" \
		"algorithm_params 'level=abc' => EINVAL" "algorithm_params 'priority=9' => EINVAL" \
		"algorithm_params 'algo=nosuch' => EINVAL" "algorithm_params 'level=' => EINVAL" \
		"recomp_algorithm 'algo=nosuch' => EINVAL" "recomp_algorithm 'priority=2' => EINVAL" \
		"recomp_algorithm 'algo=zstd priority=4' => EINVAL" "recomp_algorithm 'algo=lz4' => EBUSY" \
		"recompress 'threshold=99999' => EINVAL" "recompress 'algo=nosuch' => EINVAL" \
		"idle 'all' => EINVAL" "idle 'abc' => EINVAL" "idle '-1' => EINVAL" "idle '9999999999 => EINVAL" \
		"mem_limit 'abc' => EINVAL" "mem_used_max '1' => EINVAL" \
		"backing_dev '/nonexistent' => ENOENT" "backing_dev '/tmp/abi.regular' => ENOTBLK" \
		"writeback 'idle' => EINVAL" "writeback_limit 'abc' => EINVAL" \
		"writeback 'page_index=99999999' => EINVAL" "writeback 'nonsense' => EINVAL" \
		"hot_remove 'abc' => EINVAL" "hot_remove '-1' => EINVAL" \
		"hot_remove '99999' => ENODEV" || { echo "$f: wrong errno"; bad=1; }
	grep -q "^hot_add gave a number: yes" /tmp/abi.$f.n || { echo "$f: hot_add"; bad=1; }
	grep -q "^io_stat notify_free after discarding 16 pages: 16$" /tmp/abi.$f.n ||
		{ echo "$f: discards not counted in notify_free"; bad=1; }
	grep -c "" /tmp/abi.$f.n | sed "s/^/$f: transcript lines: /"
done
if [ -d /sys/block/zram0 ] && [ -d /sys/block/rzram0 ]; then
	# mm_stat's sizes depend on allocator details; compare its shape only.
	for f in zram rzram; do
		awk '/r \/sys\/block\/DEV0\/mm_stat/ { $NF = NF " fields" } { print }' \
			/tmp/abi.$f.n >/tmp/abi.$f.c
	done
	if diff -u /tmp/abi.zram.c /tmp/abi.rzram.c; then
		echo "rzram's transcript equals zram's"
	else
		bad=1
	fi
fi
# rzram's algorithm_params has newer zram's keys (6.16), and refuses what
# zram accepts: unknown and repeated keys (zram ignores the one and takes the
# last of the other), and changes once initialised. Checked on rzram only
# (the device with rzram's own slot_bytes attribute).
for f in $fams; do
	d=/sys/block/${f}0
	[ -f $d/slot_bytes ] || continue
	[ "$(cat $d/initstate)" = 0 ] || echo 1 >$d/reset
	got=$(for v in "colour=blue" "level=1 level=2" "dict=relative" "dict=/etc/dict" "deflate.winbits=12"; do
		printf '%s=%s ' "$v" "$($rw w $d/algorithm_params "$v")"
	done)
	echo 4M >$d/disksize
	got="$got level=1=$($rw w $d/algorithm_params "level=1")"
	echo 1 >$d/reset
	want="colour=blue=EINVAL level=1 level=2=EINVAL dict=relative=EINVAL dict=/etc/dict=EINVAL deflate.winbits=12=ok  level=1=EBUSY"
	echo "$f: newer algorithm_params: $got"
	[ "$got" = "$want" ] || { echo "$f: want: $want"; bad=1; }
done
# The transcripts, for the log.
for f in $fams; do
	echo "--- $f"
	cat /tmp/abi.$f
done
[ $bad = 0 ] || fail "sysfs ABI mismatch"
