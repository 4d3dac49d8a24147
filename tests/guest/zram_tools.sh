# SPDX-License-Identifier: GPL-2.0
# Debian's zram-tools, unchanged, on rzram as zram's driver: `modprobe zram`
# finds it (zram.ko, from drivers/block/rzram), `zramswap start` sets up swap
# on zram0 from /etc/default/zramswap, and with zram a module `zramswap stop`
# unloads it.
set -u
. /tests/lib.sh

[ "$DEV" = zram ] || fail "needs zram-named devices (a compat kernel)"
dev0_present
modprobe zram || fail "modprobe zram"
deps=$(modprobe --show-depends zram 2>&1)
echo "modprobe --show-depends zram: $deps"
case "$deps" in
"builtin zram" | *"/rzram/zram.ko"*) ;;
*) fail "modprobe zram does not reach rzram" ;;
esac
rust_zram || fail "zram's driver is not rzram"
[ "$(cat $SYS/initstate)" = 0 ] || dev_reset
cat >/etc/default/zramswap <<'CONF'
ALGO=lz4
SIZE=64
PRIORITY=77
CONF
zramswap start || fail "zramswap start"
swapon --show=NAME,PRIO --noheadings | tee /tmp/swaps
grep -q '^/dev/zram0 *77$' /tmp/swaps || fail "no swap on /dev/zram0 with priority 77"
[ "$(cat $SYS/disksize)" = $((64 << 20)) ] || fail "disksize $(cat $SYS/disksize)"
grep -q '\[lz4\]' $SYS/comp_algorithm || fail "comp_algorithm $(cat $SYS/comp_algorithm)"
zramswap status || fail "zramswap status"
echo "zramswap start: swap on zram0 (rzram), lz4, 64 MiB, priority 77"
if grep -q '^zram ' /proc/modules; then
	# A module: `zramswap stop` swaps off and unloads it (modprobe -r zram).
	zramswap stop || fail "zramswap stop"
	grep -q '^/dev/zram0 ' /proc/swaps && fail "still swapping on zram0"
	grep -q '^zram ' /proc/modules && fail "zramswap stop left zram loaded"
	echo "zramswap stop: swap off, zram (rzram) unloaded"
	modprobe zram || fail "modprobe zram (reload)"
else
	# Built in: stop's modprobe -r fails, as for a built-in C zram.
	swapoff /dev/zram0 || fail "swapoff"
	dev_reset
fi
