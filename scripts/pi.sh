#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make pi: a Raspberry Pi 4 kernel with rzram built in as zram's driver, its
# artefacts in build/pi/rzram/ (a folder to copy to the Pi's boot partition),
# and every check this machine can run on it:
#   - the fragments' options survive Kconfig (kernel.sh);
#   - each device-tree node the Pi 4 needs for boot, console, SD, USB,
#     ethernet and reboot, and each node those depend on, has a built-in
#     driver (scripts/pi-dtcheck.py, with its self-test: a missing SD driver
#     is caught); the same for the Pi 3 nodes QEMU's raspi3b boot uses;
#   - the Image boots QEMU raspi3b with the Pi 3 device tree and swaps on
#     rzram with every page verified (BCM2837: the mailbox, firmware, SD host,
#     UARTs and interrupt controllers of the BCM283x family);
#   - the Image boots QEMU virt (Cortex-A72, the Pi 4's core) and passes the
#     swap tests.
# Results go to build/pi/results.txt, one PASS/FAIL line each; the script
# fails if any check failed.
#
# Usage: pi.sh [--no-boot]   (--no-boot: build and static checks only)
. "$(dirname "$0")/lib.sh"

boot=1
[ "${1:-}" = --no-boot ] && boot=0
kdir=$BUILD/arm64-pi
out=$BUILD/pi
dest=$out/rzram
results=$out/results.txt
mkdir -p "$out"
: >"$results"

start=$(date +%s)
bash "$TOP/scripts/kernel.sh" arm64 pi
build_s=$(($(date +%s) - start))
rel=$(cat "$kdir/include/config/kernel.release")
dts=$kdir/arch/arm64/boot/dts/broadcom
for f in "$kdir/arch/arm64/boot/Image" "$dts/bcm2711-rpi-4-b.dtb" "$dts/bcm2837-rpi-3-b.dtb"; do
	[ -f "$f" ] || die "make pi: $f was not built"
done

# The folder for the boot partition.
rm -rf "$dest"
mkdir -p "$dest"
cp "$kdir/arch/arm64/boot/Image" "$dts/bcm2711-rpi-4-b.dtb" "$dts/bcm2837-rpi-3-b.dtb" "$dest/"
cp -r "$kdir/modroot/lib" "$dest/"
cat >"$dest/cmdline.txt" <<'EOF'
console=ttyS0,115200 console=tty1 root=PARTUUID=@ROOT@ rootfstype=ext4 fsck.repair=yes rootwait
EOF
cat >"$dest/tryboot.txt" <<'EOF'
# Read instead of config.txt for one boot only (sudo reboot '0 tryboot');
# the next reboot goes back to config.txt and Raspberry Pi OS's kernel.
[all]
arm_64bit=1
enable_uart=1
os_prefix=rzram/
kernel=Image
EOF
sed -e "s/@REL@/$rel/g" "$TOP/docs/pi-INSTALL.txt" >"$dest/INSTALL"
note "make pi: $(du -sh "$dest" | cut -f1) in ${dest#"$TOP"/}: $(cd "$dest" && ls | tr '\n' ' ')"

# Static checks.
dtc=$kdir/scripts/dtc/dtc
pi4_nodes=(/soc/serial@7e215040 /emmc2bus/mmc@7e340000 /scb/pcie@7d500000
	/scb/pcie@7d500000/pci@0,0/usb@0,0 /scb/ethernet@7d580000 /soc/watchdog@7e100000
	/timer obj:drivers/usb/host/xhci-pci.o)
pi3_nodes=(/soc/serial@7e201000 /soc/serial@7e215040 /soc/mmc@7e202000
	/soc/watchdog@7e100000 /timer)
check() {
	local name=$1
	shift
	if "$@" >"$out/$name.txt" 2>&1; then
		result "$results" PASS "pi:$name"
	else
		result "$results" FAIL "pi:$name"
		sed 's/^/  | /' "$out/$name.txt" >&2
	fi
}
check dt-pi4 python3 "$TOP/scripts/pi-dtcheck.py" "$dtc" "$kdir" "$SRC" \
	"$dts/bcm2711-rpi-4-b.dtb" "${pi4_nodes[@]}"
check dt-pi3 python3 "$TOP/scripts/pi-dtcheck.py" "$dtc" "$kdir" "$SRC" \
	"$dts/bcm2837-rpi-3-b.dtb" "${pi3_nodes[@]}"
check dt-selftest python3 "$TOP/scripts/pi-dtcheck.py" --selftest "$dtc" "$kdir" "$SRC" \
	"$dts/bcm2711-rpi-4-b.dtb" "${pi4_nodes[@]}"

if [ $boot = 1 ]; then
	bash "$TOP/scripts/image.sh" arm64
	# raspi3b: 4 vCPUs on this machine's cores, so the swap workload is
	# sized by mem= (the tests size it from MemTotal).
	t0=$(date +%s)
	bash "$TOP/scripts/qemu.sh" arm64 swap_onoff,swap_pressure --variant pi \
		--machine raspi3b --dtb "$dts/bcm2837-rpi-3-b.dtb" --append "mem=384M" \
		--label pi-raspi3b --quiet --timeout 1800 --results "$results" || true
	raspi_s=$(($(date +%s) - t0))
	t0=$(date +%s)
	bash "$TOP/scripts/qemu.sh" arm64 smp,swap_onoff,swap_pressure,rzram_zramctl --variant pi \
		--label pi-virt --quiet --timeout 1800 --results "$results" || true
	virt_s=$(($(date +%s) - t0))
	note "make pi: boots: raspi3b ${raspi_s}s, virt ${virt_s}s (logs build/logs/arm64-pi-*.log)"
fi

pass=$(grep -c '^PASS' "$results" || true)
fail=$(grep -c '^FAIL' "$results" || true)
grep '^FAIL' "$results" >&2 || true
note "make pi: kernel built in ${build_s}s; $pass passed, $fail failed; ${dest#"$TOP"/} is the folder for the boot partition (see its INSTALL)"
[ "$fail" = 0 ]
