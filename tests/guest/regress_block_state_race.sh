# SPDX-License-Identifier: GPL-2.0
# Guards: debugfs block_state reading the device's size before it takes the
# device's lock (CVE-2026-89719: zram's read_block_state() took disksize
# before init_lock, so a read that a reset and a smaller disksize overtook
# walked the old number of slots over the new, smaller table, out of bounds).
#
# Two threads read /sys/kernel/debug/<family>/<family>0/block_state from
# start to end, over and over, one in reads of 600 bytes and the other in
# reads of 640 (a pass is many reads, and a reset may come between any two),
# while the device is reset and re-initialised 4 MiB -> 256 KiB -> 4 MiB ...,
# with pages written up to the last page of each size
# (tests/src/resetrace.c). The test kernel's KASAN
# and the log scan catch an access past the table. Each pass must end at the
# end of the file or with EINVAL (the device not initialised at that read);
# every line must be a whole 40-byte line of zram's format with an index
# below 4 MiB's 1024 pages, above the line before it, and known flags; every
# page written must read back right. After the race, block_state of a fresh
# 256 KiB initialisation must list exactly the pages written, with zram's
# flags for each kind (random ..hi.., text ...i.., same-filled s.....).
#
# rzram: block_state is a seq_file whose every record looks the storage up
# again and locks its slot through the table, which refuses an index past its
# end (block_state.rs): a pass may see the count of the old storage and the
# slots of the new one, never a slot past a table. zram 6.12 (arm64, with
# ZRAM_MEMORY_TRACKING) reads disksize under init_lock on each read and must
# pass the same way.
#
# The race must have happened: at least 5 whole resize cycles, and at least
# one pass of block_state during the race that listed pages, or the test
# fails.
#
# Bounded per device family by REGRESS_SECS (8) seconds and REGRESS_CYCLES
# (150) cycles, whichever comes first; a run that has not raced enough by
# then goes on until it has, for at most 60 s.
#
# Whatever happens, the exit resets device 0 of each family tested.
set -u
. /tests/lib.sh

mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
command -v resetrace >/dev/null || fail "resetrace missing from the image"
dev0_present
fams=""
for f in zram rzram; do
	[ -d /sys/block/${f}0 ] && [ -f /sys/kernel/debug/$f/${f}0/block_state ] && fams="$fams $f"
done
[ -n "$fams" ] || fail "no zram or rzram device 0 with a block_state file"
# The C zram next to rzram (arm64) has ZRAM_MEMORY_TRACKING: its block_state
# must be there, or the comparison would silently shrink to rzram alone.
if [ -d /sys/block/zram0 ] && [ -d /sys/block/rzram0 ] && [ "${fams# }" = rzram ]; then
	fail "the C zram has no block_state file (ZRAM_MEMORY_TRACKING?)"
fi
cleanup() {
	local f
	for f in $fams; do
		echo 1 >"/sys/block/${f}0/reset" || echo "$f: reset on exit failed"
	done
}
trap cleanup EXIT
for f in $fams; do
	d=/sys/block/${f}0
	[ "$(cat "$d/initstate")" = 0 ] || echo 1 >"$d/reset" || fail "$f: reset"
	resetrace bs "$f" "${REGRESS_SECS:-8}" "${REGRESS_CYCLES:-150}" ||
		fail "$f: block_state racing resets to a smaller disksize"
	echo 1 >"$d/reset" || fail "$f: reset after the race"
done
