# SPDX-License-Identifier: GPL-2.0
# disksize values the memory cannot back (1T, 16T, 2^64 - 4096) fail with
# ENOMEM, quietly (no allocation warning: the boot log's splat scan checks
# that), and leave the device uninitialised and usable: 64M then works. Runs on
# the device under test only (on arm64 the C zram is next to it, and zram has
# a splat of its own for 2^64 - 4096).
set -u
. /tests/lib.sh

rw=/usr/local/bin/sysfs_rw
[ -x "$rw" ] || fail "$rw missing"
[ "$(cat "$SYS/initstate")" = 0 ] || dev_reset
for size in 1T 16T 18446744073709547520; do
	got=$($rw w "$SYS/disksize" "$size")
	echo "disksize $size: $got"
	[ "$got" = ENOMEM ] || fail "disksize $size gave '$got', want ENOMEM"
	[ "$(cat "$SYS/initstate")" = 0 ] || fail "disksize $size left the device initialised"
done
echo 64M >"$SYS/disksize" || fail "disksize 64M after the failures"
[ "$(cat "$SYS/disksize")" = 67108864 ] || fail "disksize reads $(cat "$SYS/disksize")"
dd if=/dev/urandom of=/tmp/d bs=4k count=64 2>/dev/null
dd if=/tmp/d of="$BLK" bs=4k oflag=direct 2>/dev/null || fail "write after the failures"
cmp -n $((64 * 4096)) /tmp/d "$BLK" || fail "data differs"
dev_reset
echo "1T, 16T and 2^64-4096 refused with ENOMEM; 64M works after them"
