# SPDX-License-Identifier: GPL-2.0
# systemd's zram-generator (Debian's systemd-zram-generator 1.1.2, the
# program unchanged) sets up rzram in compat mode from its configuration:
# `zram-generator --setup-device zram0`, which systemd-zram-setup@zram0
# runs, writes comp_algorithm and disksize and calls systemd-makefs to make
# the swap. The guest has no systemd: systemd-makefs is a stand-in that runs
# mkswap, as the real one does for "swap". 1.1.2 knows no algorithm_params,
# recompression or resident limit (1.2 and later do); its writeback-device
# needs backing_dev, which rzram does not have yet, so it warns and goes on,
# as it does on a C zram built without ZRAM_WRITEBACK.
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
cat >/etc/systemd/zram-generator.conf <<'CONF'
[zram0]
zram-size = 48
compression-algorithm = zstd
swap-priority = 50
CONF
$gen --setup-device zram0 2>&1 | tee /tmp/zg.log
[ "${PIPESTATUS[0]}" = 0 ] || fail "zram-generator --setup-device zram0 failed"
grep -q '\[zstd\]' $SYS/comp_algorithm || fail "comp_algorithm: $(cat $SYS/comp_algorithm)"
[ "$(cat $SYS/disksize)" = $((48 << 20)) ] || fail "disksize: $(cat $SYS/disksize)"
dd if=$BLK bs=4096 count=1 2>/dev/null | tail -c 10 | grep -q SWAPSPACE2 || fail "no swap signature"
swapon -p 50 $BLK || fail "swapon"
grep -q "^$BLK " /proc/swaps || fail "not swapping on $BLK"
swapoff $BLK || fail "swapoff"
$gen --reset-device zram0 || fail "zram-generator --reset-device zram0"
[ "$(cat $SYS/initstate)" = 0 ] || fail "--reset-device left zram0 initialised"
echo "zram-generator set up zram0 (rzram): zstd, 48 MiB, swap signature; reset it"
