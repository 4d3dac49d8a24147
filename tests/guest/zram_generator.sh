# SPDX-License-Identifier: GPL-2.0
# systemd's zram-generator (Debian's systemd-zram-generator 1.1.2, the
# program unchanged) sets up rzram in compat mode from its configuration:
# `zram-generator --setup-device zram0`, which systemd-zram-setup@zram0
# runs, writes comp_algorithm and disksize and calls systemd-makefs to make
# the swap. The guest has no systemd: systemd-makefs is a stand-in that runs
# mkswap, as the real one does for "swap". Its writeback-device (a loop
# device over a file) becomes backing_dev. 1.1.2 knows no algorithm_params,
# recompression or resident limit (1.2 and later do).
set -u
. /tests/lib.sh

gen=/lib/systemd/system-generators/zram-generator
[ -x $gen ] || fail "$gen missing"
[ "$DEV" = zram ] || fail "needs zram-named devices (a compat kernel)"
dev0_present
[ "$(cat $SYS/initstate)" = 0 ] || dev_reset
mkdir -p /etc/systemd /lib/systemd
cat >/lib/systemd/systemd-makefs <<'SH'
#!/bin/sh
# Stand-in for systemd-makefs: "systemd-makefs swap DEVICE".
[ "$1" = swap ] || exit 1
exec mkswap "$2"
SH
chmod 755 /lib/systemd/systemd-makefs
truncate -s 32M /tmp/zgback.img
loop=$(losetup -f --show /tmp/zgback.img) || fail "losetup"
cat >/etc/systemd/zram-generator.conf <<CONF
[zram0]
zram-size = 48
compression-algorithm = zstd
swap-priority = 50
writeback-device = $loop
CONF
$gen --setup-device zram0 2>&1 | tee /tmp/zg.log
[ "${PIPESTATUS[0]}" = 0 ] || fail "zram-generator --setup-device zram0 failed"
grep -q '\[zstd\]' $SYS/comp_algorithm || fail "comp_algorithm: $(cat $SYS/comp_algorithm)"
[ "$(cat $SYS/disksize)" = $((48 << 20)) ] || fail "disksize: $(cat $SYS/disksize)"
[ "$(cat $SYS/backing_dev)" = "$loop" ] || fail "backing_dev: $(cat $SYS/backing_dev), want $loop"
dd if=$BLK bs=4096 count=1 2>/dev/null | tail -c 10 | grep -q SWAPSPACE2 || fail "no swap signature"
swapon -p 50 $BLK || fail "swapon"
grep -q "^$BLK " /proc/swaps || fail "not swapping on $BLK"
swapoff $BLK || fail "swapoff"
$gen --reset-device zram0 || fail "zram-generator --reset-device zram0"
[ "$(cat $SYS/initstate)" = 0 ] || fail "--reset-device left zram0 initialised"
[ "$(cat $SYS/backing_dev)" = none ] || fail "--reset-device left backing_dev $(cat $SYS/backing_dev)"
losetup -d "$loop"
echo "zram-generator set up zram0 (rzram): zstd, 48 MiB, backing device $loop, swap signature; reset it"
