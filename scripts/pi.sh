#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make pi: the Raspberry Pi kernel, Debian's arm64 configuration narrowed to
# the Pi 4 B, 400, CM4 and 3 with rzram built in as zram's driver (kernel.sh
# arm64 pi; .config.fragments/rpi4*.config and rpi4-keep.list), its Debian
# package (pi-deb.sh), and every check this machine can run on them:
#   - the fragments' options survive Kconfig (kernel.sh);
#   - dt-pi4, dt-pi3: each device-tree node the Pi needs to boot without an
#     initramfs (console, SD, USB, Ethernet, reboot), and each node those
#     depend on, has a built-in driver (pi-dtcheck.py, with its self-test);
#   - dt-coverage: every enabled node of the Pi 4 B, 400 and CM4 device
#     trees has a driver, built in or a module, wherever Debian's own arm64
#     configuration has one (pi-dtcover.py, which lists both counts and the
#     nodes left uncovered);
#   - docker: Docker's check-config.sh (Debian's docker.io package) finds
#     every "Generally Necessary" option on;
#   - modules: the installed module tree agrees with depmod and modinfo;
#   - pi-raspi3b: the Image boots QEMU raspi3b with the Pi 3 device tree and
#     the modules in its root file system; udev loads the drivers by alias
#     (pi_udev_modules), then swap on rzram with every page verified;
#   - pi-virt: the Image boots QEMU virt (Cortex-A72, the Pi 4's core) and
#     passes the swap tests;
#   - deb-*: the package installs into an arm64 root laid out as Raspberry Pi
#     OS's without overwriting anything, tries once, becomes the default and
#     goes back, and its removal leaves the root as it was (pi-deb-test.sh).
# Results go to build/pi/results.txt, one PASS/FAIL line each; the script
# fails if any check failed.
#
# Usage: pi.sh [--no-boot]   (--no-boot: build, package and static checks)
. "$(dirname "$0")/lib.sh"

boot=1
[ "${1:-}" = --no-boot ] && boot=0
kdir=$BUILD/arm64-pi
out=$BUILD/pi
results=$out/results.txt
mkdir -p "$out"
: >"$results"

cold=no
[ -f "$kdir/vmlinux" ] || cold=yes
start=$(date +%s)
bash "$TOP/scripts/kernel.sh" arm64 pi
build_s=$(($(date +%s) - start))
rel=$(cat "$kdir/include/config/kernel.release")
dts=$kdir/arch/arm64/boot/dts/broadcom
for f in "$kdir/arch/arm64/boot/Image" "$dts/bcm2711-rpi-4-b.dtb" "$dts/bcm2837-rpi-3-b.dtb"; do
	[ -f "$f" ] || die "make pi: $f was not built"
done
deb=$(bash "$TOP/scripts/pi-deb.sh")
nmod=$(grep -c . "$kdir/modroot/lib/modules/$rel/modules.order" || true)
note "make pi: $rel, $nmod modules; package ${deb#"$TOP"/} ($(du -h "$deb" | cut -f1))"

check() {
	local name=$1
	shift
	check_to "$results" "$out/$name.txt" "pi:$name" "$@"
}

# Device trees: the boot set, built in.
dtc=$kdir/scripts/dtc/dtc
pi4_nodes=(/soc/serial@7e215040 /emmc2bus/mmc@7e340000 /scb/pcie@7d500000
	/scb/pcie@7d500000/pci@0,0/usb@0,0 /scb/ethernet@7d580000 /soc/watchdog@7e100000
	/timer obj:drivers/usb/host/xhci-pci.o)
pi3_nodes=(/soc/serial@7e201000 /soc/serial@7e215040 /soc/mmc@7e202000
	/soc/watchdog@7e100000 /timer)
check dt-pi4 python3 "$TOP/scripts/pi-dtcheck.py" "$dtc" "$kdir" "$SRC" \
	"$dts/bcm2711-rpi-4-b.dtb" "${pi4_nodes[@]}"
check dt-pi3 python3 "$TOP/scripts/pi-dtcheck.py" "$dtc" "$kdir" "$SRC" \
	"$dts/bcm2837-rpi-3-b.dtb" "${pi3_nodes[@]}"
check dt-selftest python3 "$TOP/scripts/pi-dtcheck.py" --selftest "$dtc" "$kdir" "$SRC" \
	"$dts/bcm2711-rpi-4-b.dtb" "${pi4_nodes[@]}"

# Device trees: every enabled node, against Debian's configuration.
debcfg=$(debian_arm64_config)
check dt-coverage python3 "$TOP/scripts/pi-dtcover.py" "$dtc" "$SRC" "$kdir/.config" "$debcfg" \
	"$kdir" "$dts/bcm2711-rpi-4-b.dtb" "$dts/bcm2711-rpi-400.dtb" "$dts/bcm2711-rpi-cm4-io.dtb"
grep -E '^bcm[0-9a-z-]+: ' "$out/dt-coverage.txt" >&2 || true

# Docker's own check of the configuration.
docker_check() {
	local d=$BUILD/pi-debian/docker script
	script=$d/usr/share/docker.io/contrib/check-config.sh
	if [ ! -f "$script" ]; then
		rm -rf "$d"
		mkdir -p "$d"
		(cd "$d" && apt-get download -q docker.io >/dev/null 2>&1) ||
			{ echo "apt-get download docker.io failed"; return 1; }
		dpkg-deb --fsys-tarfile "$d"/docker.io_*.deb | tar -x -C "$d" ./usr/share/docker.io/contrib/check-config.sh
	fi
	echo "check-config.sh of $(basename "$d"/docker.io_*.deb)"
	bash "$script" "$kdir/.config" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$out/docker-check-config.txt" || true
	cat "$out/docker-check-config.txt"
	local necessary missing enabled
	necessary=$(sed -n '/^Generally Necessary:/,/^Optional Features:/p' "$out/docker-check-config.txt")
	enabled=$(grep -c '^- CONFIG_.*: enabled' <<<"$necessary" || true)
	missing=$(grep -E '^- CONFIG_.*: missing' <<<"$necessary" || true)
	echo "Generally Necessary: $enabled enabled, $(grep -c . <<<"$missing" || true) missing ${missing:+($(echo "$missing" | tr '\n' ' '))}"
	echo "Optional, missing: $(sed -n '/^Optional Features:/,$p' "$out/docker-check-config.txt" |
		grep -oE 'CONFIG_[A-Z0-9_]+: missing' | cut -d: -f1 | tr '\n' ' ')"
	[ -z "$missing" ] && [ "$enabled" -ge 20 ]
}
check docker docker_check
tail -n 2 "$out/docker.txt" >&2

# The installed module tree: depmod finds what modules_install's depmod found,
# and modinfo reads every module with this release's vermagic.
modules_check() {
	local root=$kdir/modroot m f n=0 bad=0 tmp=$out/modroot-depmod
	rm -rf "$tmp"
	cp -a "$root" "$tmp"
	depmod -b "$tmp" "$rel" || { echo "depmod failed"; return 1; }
	for f in modules.dep modules.alias modules.symbols modules.softdep modules.builtin.alias.bin; do
		cmp "$root/lib/modules/$rel/$f" "$tmp/lib/modules/$rel/$f" ||
			{ echo "$f differs from a fresh depmod's"; bad=$((bad + 1)); }
	done
	rm -rf "$tmp"
	while read -r m; do
		n=$((n + 1))
		f=$root/lib/modules/$rel/$m.xz
		[ -f "$f" ] || { echo "missing: $f"; bad=$((bad + 1)); continue; }
		[ "$(modinfo -F vermagic "$f" | cut -d' ' -f1)" = "$rel" ] ||
			{ echo "vermagic of $m is not $rel"; bad=$((bad + 1)); }
	done <"$root/lib/modules/$rel/modules.order"
	grep -q '/zram.ko$' "$root/lib/modules/$rel/modules.builtin" || { echo "zram is not in modules.builtin"; bad=$((bad + 1)); }
	echo "$n modules of modules.order installed, each with vermagic $rel; depmod's indexes current; $bad problems"
	[ "$bad" = 0 ] && [ "$n" -gt 0 ]
}
check modules modules_check
tail -n 1 "$out/modules.txt" >&2

if [ $boot = 1 ]; then
	bash "$TOP/scripts/image.sh" arm64
	# raspi3b: 4 vCPUs on this machine's cores, so the swap workload is
	# sized by mem= (the tests size it from MemTotal): 512 MiB, of which
	# Debian's CMA takes 64 and the root file system, modules included,
	# about 190 while it is unpacked.
	t0=$(date +%s)
	bash "$TOP/scripts/qemu.sh" arm64 pi_udev_modules,swap_onoff,swap_pressure --variant pi \
		--machine raspi3b --dtb "$dts/bcm2837-rpi-3-b.dtb" --append "mem=512M" \
		--label pi-raspi3b --quiet --timeout 1800 --results "$results" || true
	raspi_s=$(($(date +%s) - t0))
	t0=$(date +%s)
	bash "$TOP/scripts/qemu.sh" arm64 smp,swap_onoff,swap_pressure,rzram_zramctl --variant pi \
		--label pi-virt --quiet --timeout 1800 --results "$results" || true
	virt_s=$(($(date +%s) - t0))
	note "make pi: boots: raspi3b ${raspi_s}s, virt ${virt_s}s (logs build/logs/arm64-pi-*.log)"
	bash "$TOP/scripts/pi-deb-test.sh" "$deb" || true
fi

pass=$(grep -c '^PASS' "$results" || true)
fail=$(grep -c '^FAIL' "$results" || true)
grep '^FAIL' "$results" >&2 || true
note "make pi: kernel built in ${build_s}s (cold: $cold); $pass passed, $fail failed; the package: ${deb#"$TOP"/}"
[ "$fail" = 0 ]
