# SPDX-License-Identifier: GPL-2.0
# rzram as a loadable module: zram.ko, as zram's driver (x86_64's test kernel,
# CONFIG_ZRAM_DRIVER_RUST). An open device pins it;
# it unloads cleanly with devices present, initialised and holding data; it
# reloads with parameters, swaps, and reloads again; compat=0 gives rzram<N>;
# bad parameter values fail the load and leave nothing behind.
# Left loaded with one device, as the guest's init loaded it.
set -u
. /tests/lib.sh

grep -q '^zram ' /proc/modules || fail "zram is not a loaded module"
rust_zram || fail "zram's driver is not rzram"
dev0_present
ctl=/sys/class/zram-control
loaded() { grep -q '^zram ' /proc/modules; }

# An open device (swap on it) pins the module.
dev_setup 64M
mkswap "$BLK" >/dev/null || fail "mkswap"
swapon "$BLK" || fail "swapon"
rmmod zram 2>/dev/null && fail "zram unloaded while swap is on $BLK"
loaded || fail "zram gone after a refused rmmod"
swapoff "$BLK" || fail "swapoff"

# Unload with an initialised device holding data and a hot-added one.
dd if=/dev/urandom of=/tmp/data bs=4k count=256 2>/dev/null
dd if=/tmp/data of="$BLK" bs=4k conv=fsync 2>/dev/null || fail "write $BLK"
id=$(cat $ctl/hot_add) || fail "hot_add"
echo 16M >/sys/block/zram$id/disksize || fail "disksize of zram$id"
modprobe -r zram || fail "modprobe -r zram"
loaded && fail "zram still loaded"
[ -e /sys/block/zram0 ] || [ -e /sys/block/zram$id ] || [ -e $ctl ] &&
	fail "devices or class left behind"
dmesg | grep -q "Removed device: zram$id\$" || fail "no 'Removed device: zram$id' at unload"
echo "unloaded with zram0 (1 MiB of data) and zram$id present"

# Reload with parameters; swap under pressure on one of the devices.
modprobe zram num_devices=3 || fail "modprobe zram num_devices=3"
for i in 0 1 2; do [ -b /dev/zram$i ] || fail "no /dev/zram$i"; done
dev_setup 256M
mkswap "$BLK" >/dev/null || fail "mkswap"
swapon "$BLK" || fail "swapon"
off() {
	swapoff "$BLK" || fail "swapoff"
}
run_held off -m 64 -r 25 -p || fail "data paged out to the reloaded module did not come back intact"
dev_reset
echo "reloaded with num_devices=3; swap round trip intact"

# compat=0: rzram's own names.
modprobe -r zram || fail "modprobe -r zram (2)"
modprobe zram compat=0 || fail "modprobe zram compat=0"
[ -b /dev/rzram0 ] && [ -d /sys/class/rzram-control ] || fail "compat=0: no rzram0"
rmmod zram || fail "rmmod zram"

# Bad parameter values: the load fails (the kernel's parameter parsers give
# EINVAL or ERANGE, as they do for the C zram's num_devices), leaves nothing
# behind, and the next load works.
for p in num_devices=abc num_devices=-1 num_devices=4294967296 num_devices= num_devices=1x \
	num_devices=0x compat=maybe compat=2 compat= lockdep_selftest=x; do
	if modprobe zram "$p" 2>/tmp/modprobe.err; then
		rmmod zram
		fail "modprobe zram $p loaded"
	fi
	loaded && fail "zram loaded after modprobe zram $p failed"
	[ -e $ctl ] || [ -e /sys/class/rzram-control ] && fail "a control class left by $p"
done
dmesg | grep -q "invalid for parameter .num_devices" ||
	fail "no 'invalid for parameter' message for num_devices"
echo "10 bad parameter values refused, nothing left behind"

# As the guest's init left it.
modprobe zram || fail "modprobe zram (3)"
[ -b /dev/zram0 ] || fail "no /dev/zram0 after the last reload"
echo "compat=0 gives rzram0; reloaded as zram0"
