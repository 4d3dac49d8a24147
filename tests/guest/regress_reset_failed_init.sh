# SPDX-License-Identifier: GPL-2.0
# Guards: a reset after a failed initialisation frees the slot table twice
# (CVE-2025-21671, "zram: fix potential UAF of zram table": a failed disksize
# freed the table without forgetting it, and the reset freed it again).
# disksize values whose table cannot be allocated fail with ENOMEM; each is
# followed by a reset, twice, then a device that works and a reset of it. The
# KASAN kernel catches a double free; the fault-injection variant fails the
# table and pool allocations of ordinary sizes too.
set -u
. /tests/lib.sh

rw=/usr/local/bin/sysfs_rw
dev0_present
[ "$(cat "$SYS/initstate")" = 0 ] || dev_reset
for size in 1T 16T; do
	got=$($rw w "$SYS/disksize" "$size")
	[ "$got" = ENOMEM ] || fail "disksize $size gave '$got', want ENOMEM"
	for i in 1 2; do
		echo 1 >"$SYS/reset" || fail "reset $i after the failed disksize $size"
	done
	[ "$(cat "$SYS/initstate")" = 0 ] || fail "initialised after disksize $size"
done
echo 16M >"$SYS/disksize" || fail "disksize 16M"
dd if=/dev/urandom of=/tmp/d bs=4k count=256 2>/dev/null
dd if=/tmp/d of="$BLK" bs=4k oflag=direct 2>/dev/null || fail "write"
cmp -n $((256 * 4096)) /tmp/d "$BLK" || fail "data differs"
dev_reset
dev_reset
echo "failed disksize then two resets, for 1T and 16T; then 16M works"
