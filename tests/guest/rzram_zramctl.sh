# SPDX-License-Identifier: GPL-2.0
# zramctl drives the device through zram's ABI: find and configure a device,
# list it, reset it. As zram's driver (x86_64's test kernel, the Pi's) rzram's
# devices are zram<N>, as they are with rzram.compat=1 in a kernel without the
# C zram: this is the tool unchanged.
set -u
. /tests/lib.sh

[ "$DEV" = zram ] || fail "needs zram-named devices (C zram, or rzram.compat=1)"
if rust_zram || grep -q "rzram" /proc/cmdline; then
	echo "driver: rzram, with zram's names"
else
	echo "driver: C zram"
fi
d=$(zramctl --find --size 64M --algorithm lz4) || fail "zramctl --find"
echo "zramctl configured $d"
[ -b "$d" ] || fail "$d is not a block device"
zramctl || fail "zramctl list"
line=$(zramctl --noheadings --output NAME,ALGORITHM,DISKSIZE "$d") || fail "zramctl $d"
echo "$line"
echo "$line" | grep -q "lz4" || fail "algorithm not lz4: $line"
echo "$line" | grep -q "64M" || fail "size not 64M: $line"
mkswap "$d" >/dev/null && swapon "$d" || fail "swap on $d"
zramctl --noheadings --output NAME,DATA "$d"
swapoff "$d" || fail "swapoff $d"
zramctl --reset "$d" || fail "zramctl --reset"
# zramctl resets the device, then removes it through zram-control/hot_remove.
s=/sys/block/$(basename "$d")
if [ -d "$s" ]; then
	[ "$(cat $s/initstate)" = 0 ] || fail "$d not reset"
	echo "$d reset"
else
	echo "$d reset and removed"
fi
d2=$(zramctl --find --size 32M) || fail "zramctl --find after the reset"
echo "zramctl then created and configured $d2"
zramctl --reset "$d2" || fail "zramctl --reset $d2"
echo "configured, listed, swapped on, reset and removed through zramctl"
# Leave device 0 as the boot made it, for the tests that follow.
dev0_present
