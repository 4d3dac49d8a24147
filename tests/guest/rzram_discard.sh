# SPDX-License-Identifier: GPL-2.0
# Discard and write-zeroes free what they cover and read back as zeroes; the
# rest of the device is untouched.
set -u
. /tests/lib.sh

dev_setup 32M
dd if=/dev/urandom of=/tmp/data bs=1M count=8 2>/dev/null
dd if=/tmp/data of="$BLK" bs=1M conv=fsync 2>/dev/null || fail "write"
read -r orig _ <"$SYS/mm_stat"
echo "stored $orig bytes"
# Discard the first 2 MiB, write-zeroes the next 2 MiB.
blkdiscard -o 0 -l $((2 << 20)) "$BLK" || fail "blkdiscard"
blkdiscard -z -o $((2 << 20)) -l $((2 << 20)) "$BLK" || fail "blkdiscard -z"
echo 3 >/proc/sys/vm/drop_caches
cmp -n $((4 << 20)) /dev/zero "$BLK" || fail "discarded range does not read as zeroes"
cmp -n $((4 << 20)) /tmp/data "$BLK" $((4 << 20)) $((4 << 20)) || fail "data after the range changed"
read -r after _ <"$SYS/mm_stat"
echo "after discard and write-zeroes: $after bytes"
[ "$after" -le $((orig - (4 << 20))) ] || fail "the ranges were not freed ($orig -> $after)"
dev_reset
