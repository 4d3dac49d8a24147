# SPDX-License-Identifier: GPL-2.0
# Guards: a writeback that reads the device's size before it takes the
# device's lock (CVE-2026-89718: zram's writeback_store() took disksize, and
# checked page_index= and page_indexes= against it, before init_lock; a reset
# and a smaller disksize in between left it walking the old number of slots
# over the new, smaller table, out of bounds).
#
# Writebacks in every mode race resets and re-initialisations that shrink
# the device, over and over (tests/src/resetrace.c): device 0 goes 4 MiB ->
# 256 KiB -> 4 MiB ..., on one loop device, with pages written up to the
# last page of each size and marked idle, while two threads write idle,
# huge, huge_idle, incompressible and page_index=N (N anywhere in 4 MiB) to
# writeback and, on rzram, the newer forms too (type=, page_indexes= across
# the end of the small size, lists of page_index) and recompress (type=idle,
# threshold=1024, zstd as the secondary), which enters the same way. The
# C zram is not given recompress: 6.12's recompress_store() reads disksize
# before init_lock, this very bug class, unfixed there. The test kernel's KASAN
# and the log scan catch an access past the table; each writeback must
# succeed or fail with EINVAL (not initialised, page_index past the end),
# EAGAIN (the other writeback under way) or, for page_indexes, ERANGE; every
# page must read back as written, before and after the writebacks meet it;
# after the race a writeback idle of the small device must write back
# exactly its non-same-filled pages, which must read back right.
#
# rzram: a writeback holds a reference to the storage it started with, and
# takes its bounds from that storage's own table, never from a size read
# elsewhere: a reset and a new disksize give the device new storage, and the
# old one goes when that writeback returns (writeback.rs, "Races"). A
# writeback that took the storage just before a reset used to run on it after
# the reset returned, holding the backing device open, so backing_dev right
# after the reset failed with EBUSY (found while writing this test); now it
# checks, under the lock a reset waits for, that its storage is still the
# device's (Rzram::post_processing), and gives EINVAL otherwise. backing_dev
# right after a reset must succeed.
#
# The C zram 6.12 (arm64) reads disksize under init_lock and holds the lock
# for the whole writeback, which a reset waits for: it must pass the same
# way (reset closes the backing device before its write returns). It has only
# the 6.12 forms.
#
# The race must have happened: at least 5 whole resize cycles, at least one
# write to writeback that succeeded and at least one page written back
# (bd_stat) during the race, or the test fails (a writeback that always
# failed with EINVAL would otherwise pass).
#
# Bounded per device family by REGRESS_SECS (8) seconds and REGRESS_CYCLES
# (150) cycles, whichever comes first; a run that has not raced enough by
# then goes on until it has, for at most 60 s.
#
# Whatever happens, the exit resets device 0 of each family (no backing
# device left set) and frees the loop devices.
set -u
. /tests/lib.sh
. /tests/wb_lib.sh

command -v resetrace >/dev/null || fail "resetrace missing from the image"
dev0_present
fams=$(wb_families) || fail "no device with backing_dev"
cleanup() {
	local f
	for f in $fams; do
		echo 1 >"/sys/block/${f}0/reset" || echo "$f: reset on exit failed"
	done
	free_loops
}
trap cleanup EXIT
for f in $fams; do
	wb_use "$f"
	loop=$(new_loop 8)
	[ "$(cat "$d/initstate")" = 0 ] || echo 1 >"$d/reset" || fail "$F: reset"
	# No writeback limit (an earlier test may have left one on): EIO is
	# not among the outcomes allowed.
	echo 0 >"$d/writeback_limit_enable" || fail "$F: writeback_limit_enable"
	# rzram (slot_bytes is its own attribute) has the newer writeback forms.
	kind=zram
	[ -f "$d/slot_bytes" ] && kind=rzram
	resetrace wb "$F" "${REGRESS_SECS:-8}" "${REGRESS_CYCLES:-150}" "$loop" "$kind" ||
		fail "$F: writeback racing resets to a smaller disksize"
	echo 1 >"$d/reset" || fail "$F: reset after the race"
	[ "$(cat "$d/backing_dev")" = none ] || fail "$F: backing_dev kept after reset"
	free_loops
done
