# SPDX-License-Identifier: GPL-2.0
# The kernel's own zram selftests (tools/testing/selftests/zram, copied from
# the tree unchanged), on rzram in compat mode: they hot-add zram devices,
# set algorithms, sizes and limits, make and fill an ext4 file system, and
# swap on a device. zram01 fills its 2 MiB file system 1 KiB at a time, one
# dd process each (about 1,900): 238 s under TCG on a slow machine alone,
# past 300 s beside make test's check lane.
# timeout: 900
set -u
. /tests/lib.sh

[ "$DEV" = zram ] || fail "needs zram-named devices (a compat kernel)"
rust_zram || fail "zram is not rzram (zram's driver is the C one, or it is not loaded)"
d=/tests/selftests/zram
[ -x $d/zram.sh ] || fail "$d/zram.sh missing (make tree before make image)"
rm -rf /tmp/zst
cp -r $d /tmp/zst
cd /tmp/zst || fail "cd"
./zram.sh >/tmp/zst.log 2>&1
rc=$?
cat /tmp/zst.log
[ $rc = 0 ] || fail "zram.sh exited with $rc"
grep -q 'FAIL' /tmp/zst.log && fail "a selftest step failed"
grep -q '^zram01 : \[PASS\]' /tmp/zst.log || fail "zram01 did not pass"
grep -q '^zram02 : \[PASS\]' /tmp/zst.log || fail "zram02 did not pass"
echo "zram01 and zram02 passed on rzram"
