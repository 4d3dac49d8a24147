# SPDX-License-Identifier: GPL-2.0
# Block I/O accounting: reads and writes show in /sys/block/<dev>/stat and
# /proc/diskstats, and nothing is left in flight. The same I/O runs on each
# device family present; where the C zram is in the same kernel (arm64),
# rzram's counts must equal zram's.
set -u
. /tests/lib.sh

# stat_of DEV: read ios, read sectors, write ios, write sectors, in flight
# (fields 1, 3, 5, 7 and 9 of the stat file).
stat_of() { awk '{ print $1, $3, $5, $7, $9 }' /sys/block/$1/stat; }
diskstats_of() { awk -v d="$1" '$3 == d { print $4, $6, $8, $10, $12 }' /proc/diskstats; }

# delta DEV BEFORE: the counts since BEFORE (a stat_of line), checked
# against /proc/diskstats.
delta() {
	local now
	now=$(stat_of $1)
	[ "$now" = "$(diskstats_of $1)" ] || fail "$1: stat and diskstats differ: $now"
	set -- $2 $now
	echo "reads $(($6 - $1)) sectors $(($7 - $2)) writes $(($8 - $3)) sectors $(($9 - $4)) in_flight ${10}"
}

# run FAMILY: the counts of each step of a fixed I/O on FAMILY's device 0.
run() {
	local dev=${1}0 s
	[ "$(cat /sys/block/$dev/initstate)" = 0 ] || echo 1 >/sys/block/$dev/reset
	echo 16M >/sys/block/$dev/disksize || fail "$dev: disksize"
	# The first open after a capacity change may read (the block layer
	# rescans the device); not measured.
	dd if=/dev/$dev of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null || fail "$dev: read"
	s=$(stat_of $dev)
	dd if=/dev/urandom of=/dev/$dev bs=4k count=64 oflag=direct 2>/dev/null ||
		fail "$dev: write"
	echo "64 page writes: $(delta $dev "$s")"
	s=$(stat_of $dev)
	dd if=/dev/$dev of=/dev/null bs=4k count=32 iflag=direct 2>/dev/null || fail "$dev: read"
	echo "32 page reads: $(delta $dev "$s")"
	s=$(stat_of $dev)
	dd if=/dev/$dev of=/dev/null bs=16k count=24 iflag=direct 2>/dev/null || fail "$dev: read"
	echo "24 reads of 4 pages: $(delta $dev "$s")"
	# zram does not count discards.
	s=$(stat_of $dev)
	# -f: no probing for signatures, which would read.
	blkdiscard -f -o 0 -l 65536 /dev/$dev || fail "$dev: discard"
	echo "a discard: $(delta $dev "$s")"
	echo 1 >/sys/block/$dev/reset
}

fams=""
for f in zram rzram; do
	[ -d /sys/block/${f}0 ] && fams="$fams $f"
done
[ -n "$fams" ] || fail "no zram or rzram device"
cat >/tmp/iostat.want <<'WANT'
64 page writes: reads 0 sectors 0 writes 64 sectors 512 in_flight 0
32 page reads: reads 32 sectors 256 writes 0 sectors 0 in_flight 0
24 reads of 4 pages: reads 24 sectors 768 writes 0 sectors 0 in_flight 0
a discard: reads 0 sectors 0 writes 0 sectors 0 in_flight 0
WANT
for f in $fams; do
	run $f >/tmp/iostat.$f
	sed "s/^/$f: /" /tmp/iostat.$f
	diff -u /tmp/iostat.want /tmp/iostat.$f || fail "$f: I/O accounting differs from the expected"
done
if [ -d /sys/block/zram0 ] && [ -d /sys/block/rzram0 ]; then
	echo "rzram's I/O counts equal zram's"
fi
