#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make pi's raspi3b boot: the Pi kernel's drivers are modules under
# /lib/modules/<release>, and udev loads them by alias, as on Raspberry Pi OS.
# systemd-udevd replays the boot's uevents (udevadm trigger); its
# 80-drivers.rules loads each device's driver by its MODALIAS through
# libkmod. Then every device whose modalias names a module in modules.alias
# must have that module loaded (lsmod), the modules' metadata must agree with
# depmod's (modinfo of each loaded module), and at least the drivers of the
# board's emulated devices that are modules must be among them.
set -eu
. /tests/lib.sh
rel=$(uname -r)
mdir=/lib/modules/$rel
[ -f "$mdir/modules.alias" ] || skip "no modules installed for $rel"
grep -qx 'CONFIG_MODULES=y' "/boot/config-$rel" || skip "no loadable modules in this kernel"
grep -q '\.ko' "$mdir/modules.order" || skip "this kernel builds every driver in"

mkdir -p /run/udev
/lib/systemd/systemd-udevd --daemon --resolve-names=never ||
	fail "systemd-udevd did not start"
udevadm trigger --type=subsystems --action=add
udevadm trigger --type=devices --action=add
udevadm settle --timeout=180 || fail "udevadm settle timed out"
echo "lsmod:"
lsmod | sed 's/^/  /'

# Module names have underscores where their files may have dashes.
builtin_names=$(sed 's|.*/||; s|\.ko$||; s|-|_|g' "$mdir/modules.builtin")
builtin() { grep -qx "${1//-/_}" <<<"$builtin_names"; }
loaded() { [ -d "/sys/module/${1//-/_}" ]; }
n=0 missing=0
# (A file, not <(...): the guest has no /dev/fd.)
aliases=/tmp/pi_udev_modaliases
find /sys/devices -name modalias >"$aliases"
while read -r f; do
	alias=$(cat "$f" 2>/dev/null) || continue
	[ -n "$alias" ] || continue
	for m in $(modprobe -R "$alias" 2>/dev/null); do
		builtin "$m" && continue
		n=$((n + 1))
		if loaded "$m"; then
			echo "ok: ${f%/modalias}: $alias -> $m"
		else
			echo "NOT LOADED: ${f%/modalias}: $alias -> $m"
			missing=$((missing + 1))
		fi
	done
done <"$aliases"
echo "devices whose driver is a module: $n; not loaded: $missing"
[ "$missing" = 0 ] || fail "$missing drivers were not loaded by udev"
[ "$n" -gt 0 ] || fail "no device of this board has its driver as a module"

# The board's own devices that QEMU raspi3b emulates, with drivers kept as
# modules: the BCM2835 random number generator and the PL011's Bluetooth
# controller (serdev, hci_uart).
for m in bcm2835_rng hci_uart; do
	loaded "$m" || fail "$m (a driver of the board's devices) is not loaded"
done

# depmod and modinfo agree on every loaded module: its file is the one
# modules.dep names, and each of its dependencies is loaded too.
for m in $(lsmod | awk 'NR > 1 { print $1 }'); do
	file=$(modinfo -F filename "$m") || fail "modinfo $m failed"
	rel_file=${file#"$mdir"/}
	grep -q "^$rel_file:" "$mdir/modules.dep" || fail "$m: $rel_file is not in modules.dep"
	for d in $(modinfo -F depends "$m" | tr ',' ' '); do
		loaded "$d" || fail "$m depends on $d, which is not loaded"
	done
done
echo "udev loaded $(lsmod | awk 'NR > 1' | wc -l) modules by alias; modinfo agrees with modules.dep"
