# SPDX-License-Identifier: GPL-2.0
# rzram as zram's driver (CONFIG_ZRAM_DRIVER_RUST) is zram to every tool that
# checks: what LTP's zram tests read (tst_check_drivers: "/zram.ko" in
# modules.dep or modules.builtin; zram03's tst_kconfig: CONFIG_ZRAM in the
# kernel's config, here /boot/config-<release> as a distribution installs it),
# what modinfo and lsmod show, and /sys/module/zram. Each also says that it is
# the Rust driver: the module's path, the config's choice, the description.
set -u
. /tests/lib.sh

rel=$(uname -r)
m=/lib/modules/$rel
grep -qE '/zram\.ko(\.[a-z]+)?:' $m/modules.dep 2>/dev/null ||
	grep -qE '/zram\.ko(\.[a-z]+)?$' $m/modules.builtin 2>/dev/null ||
	fail "zram.ko is in neither modules.dep nor modules.builtin: LTP would find no zram"
ko=$(grep -hoE '^[^:]*/zram\.ko[^:]*' $m/modules.dep $m/modules.builtin 2>/dev/null | head -n 1)
echo "zram's module: $ko"
case "$ko" in
*/drivers/block/rzram/zram.ko*) ;;
*) fail "zram.ko is not built from drivers/block/rzram: $ko" ;;
esac
grep -qE '/rzram\.ko' $m/modules.dep $m/modules.builtin 2>/dev/null && fail "rzram.ko is listed too"

cfg=/boot/config-$rel
[ -f $cfg ] || fail "no $cfg"
grep -E '^CONFIG_(ZRAM|ZRAM_DRIVER_RUST|BLK_DEV_RZRAM)=' $cfg
grep -qE '^CONFIG_ZRAM=(y|m)$' $cfg || fail "CONFIG_ZRAM is not set: LTP's zram03 would not run"
grep -qx 'CONFIG_ZRAM_DRIVER_RUST=y' $cfg || fail "CONFIG_ZRAM_DRIVER_RUST is not set"
grep -qE '^CONFIG_BLK_DEV_RZRAM=' $cfg && fail "rzram is also built under its own name"

name=$(modinfo -F name zram) || fail "modinfo zram"
desc=$(modinfo -F description zram)
echo "modinfo zram: name $name, description '$desc'"
[ "$name" = zram ] || fail "modinfo zram names $name"
[ "$desc" = "Compressed RAM block device (Rust)" ] || fail "modinfo zram: not rzram's description"
modinfo -F parm zram | grep -q '^num_devices:' || fail "modinfo zram: no num_devices"

if grep -qx 'CONFIG_ZRAM=m' $cfg; then
	lsmod | grep -q '^zram ' || fail "lsmod shows no zram"
	lsmod | grep -q '^rzram ' && fail "lsmod shows rzram"
fi
[ -d /sys/module/zram ] || fail "no /sys/module/zram"
[ -e /sys/module/rzram ] && fail "/sys/module/rzram exists"
rust_zram || fail "/sys/module/zram is not rzram's (no compat parameter)"
echo "zram is rzram to LTP's checks, modinfo, lsmod and sysfs"
