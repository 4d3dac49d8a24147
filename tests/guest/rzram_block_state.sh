# SPDX-License-Identifier: GPL-2.0
# debugfs block_state: one line per stored page, "index time flags", with
# the flags s (same), h (huge) and i (idle) as zram sets them. The same pages
# go to each device family present; where the C zram is in the same kernel
# (arm64, built with ZRAM_MEMORY_TRACKING), rzram's lines must equal zram's
# but for the access times, which are checked against the uptime.
#
# Access times need CONFIG_RZRAM_TRACK_ENTRY_ACTIME (zram's MEMORY_TRACKING
# selects its TRACK_ENTRY_ACTIME): the arm64 test kernel has it
# (rzram.config), the x86_64 one not (rzram-lean.config, scripts/kernel.sh).
# With it, "idle <seconds>" works and the times are seconds since boot;
# without it, "idle <seconds>" fails with EINVAL, as zram's without
# TRACK_ENTRY_ACTIME, "idle all" still works, and every time is 0.
set -u
. /tests/lib.sh

mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug

# run FAMILY: the block_state of device 0 after a fixed sequence.
run() {
	local dev=${1}0 bs=/sys/kernel/debug/${1}/${1}0/block_state up
	[ "$(cat /sys/block/$dev/initstate)" = 0 ] || echo 1 >/sys/block/$dev/reset
	[ -f $bs ] || fail "$bs missing"
	cat $bs >/dev/null 2>&1 && fail "$bs readable before disksize (zram: EINVAL)"
	echo 16M >/sys/block/$dev/disksize || fail "$dev: disksize"
	# Page 0 incompressible, 1 and 3 compressible, 2 zeroes, 4 never written.
	head -c 4096 /dev/urandom >/tmp/p0
	yes "rzram block_state" | head -c 4096 >/tmp/p1
	dd if=/tmp/p0 of=/dev/$dev bs=4k seek=0 oflag=direct 2>/dev/null
	dd if=/tmp/p1 of=/dev/$dev bs=4k seek=1 oflag=direct 2>/dev/null
	dd if=/dev/zero of=/dev/$dev bs=4k seek=2 count=1 oflag=direct 2>/dev/null
	dd if=/tmp/p1 of=/dev/$dev bs=4k seek=3 oflag=direct 2>/dev/null
	if [ "$actime" = 1 ]; then
		echo 100000 >/sys/block/$dev/idle || fail "$dev: idle 100000 refused with access times"
	elif echo 1 >/sys/block/$dev/idle 2>/tmp/idle.err; then
		fail "$dev: idle 1 accepted without access times (zram: EINVAL)"
	else
		grep -q "Invalid argument" /tmp/idle.err || fail "$dev: idle 1: $(cat /tmp/idle.err), not EINVAL"
	fi
	echo all >/sys/block/$dev/idle || fail "$dev: idle all"
	# A read clears page 3's idle mark.
	dd if=/dev/$dev of=/dev/null bs=4k skip=3 count=1 iflag=direct 2>/dev/null
	cat $bs >/tmp/bs.$1.raw || fail "read $bs"
	up=$(cut -d. -f1 /proc/uptime)
	# Access times: seconds since boot, not in the future, and not 0 (the
	# tests run seconds after boot); all 0 without access times.
	if [ "$actime" = 1 ]; then
		awk -v up="$up" '{ split($2, t, "."); if (t[1] > up + 1 || t[1] < 1) { print "bad time " $0; exit 1 } }' \
			/tmp/bs.$1.raw || fail "$1: access time out of range"
	else
		awk '$2 != "0.000000" { print "time without tracking: " $0; exit 1 }' \
			/tmp/bs.$1.raw || fail "$1: an access time without CONFIG_RZRAM_TRACK_ENTRY_ACTIME"
	fi
	awk '{ print $1, $3 }' /tmp/bs.$1.raw
	echo 1 >/sys/block/$dev/reset
}

fams=""
for f in zram rzram; do
	[ -d /sys/block/${f}0 ] && [ -d /sys/kernel/debug/$f ] && fams="$fams $f"
done
[ -n "$fams" ] || fail "no zram or rzram device with a debugfs directory"
case $(uname -m) in
x86_64) actime=0 ;;
*) actime=1 ;;
esac
echo "access times expected: $actime"
cat >/tmp/bs.want <<'WANT'
0 ..hi..
1 ...i..
2 s.....
3 ......
WANT
for f in $fams; do
	run $f >/tmp/bs.$f
	sed "s/^/$f: /" /tmp/bs.$f
	sed "s/^/$f raw: /" /tmp/bs.$f.raw
	diff -u /tmp/bs.want /tmp/bs.$f || fail "$f: block_state differs from the expected"
done
if [ -d /sys/block/zram0 ] && [ -d /sys/block/rzram0 ]; then
	# Column widths too: the line without the time.
	for f in zram rzram; do
		sed 's/ *[0-9]*\.[0-9]* / T /' /tmp/bs.$f.raw >/tmp/bs.$f.cols
	done
	diff -u /tmp/bs.zram.cols /tmp/bs.rzram.cols || fail "rzram's block_state columns differ from zram's"
	echo "rzram's block_state equals zram's but for the access times"
fi
