#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot a kernel with the guest image, run in-guest tests, collect TAP.
#
# Usage: qemu.sh ARCH TESTS [--variant V] [--timeout S] [--mem MB]
#                [--append ARGS] [--results FILE] [--label L] [--quiet]
#                [--dev zram|rzram] [--expect-splat REGEX]
#                [--smp N] [--icount] [--qmp SOCKET] [--machine raspi3b --dtb F]
#                [--test-timeout S] [--gdb PORT]
#   TESTS      comma-separated names from tests/guest or bench/guest (may be
#              empty)
#   --dev      the device family the tests drive (default: rzram if the
#              kernel has it beside the C zram, else zram)
#   --results  append one "PASS name" / "FAIL name" / "SKIP name" line per
#              test, plus one for the kernel log's splat check
#   --expect-splat  the boot provokes a report on purpose: the log must hold
#              a line matching REGEX, and no other splat
#   --smp      the number of vCPUs (default 2)
#   --icount   arm64: one vCPU, -icount shift=0 (a guest instruction takes
#              one virtual ns: guest timings count instructions)
#   --qmp      a QMP socket, for the host to find the vCPU threads (make bench)
#   --machine  arm64: raspi3b boots QEMU's Raspberry Pi 3 (BCM2837, 4 CPUs,
#              1 GiB, the console on the mini-UART) with --dtb, its device tree
#              (make pi's kernel); the default is virt
#   --test-timeout  each test's time limit in the guest (rztimeout=, see
#              guest/init; default: the boot's --timeout), unless the test's
#              header names its own ("# timeout: S")
#   --gdb      start with the vCPUs stopped and QEMU's gdbstub on
#              127.0.0.1:PORT, for a debugger to drive (make bench's
#              breakdown part)
# RZRAM_GUEST_CPUS=LIST runs QEMU under taskset -c LIST: "0" puts both vCPUs
# on one host CPU, a guest at about half speed (the slow-machine check).
# The console log is kept in build/logs/ARCH-LABEL.log. A test with no TAP
# result (timeout, crash) counts as failed.
. "$(dirname "$0")/lib.sh"

arch=${1:-}
tests=${2:-}
[ -n "$arch" ] || die "usage: qemu.sh ARCH TESTS [options] (ARCH: $SUPPORTED_ARCHES)"
check_arch "$arch"
shift 2 || shift $#
variant=test timeout=900 mem=512 append= results=/dev/null label= quiet=0 dev= expect=
smp=2 icount=0 qmp= machine=virt dtb= test_timeout= gdb=
while [ $# -gt 0 ]; do
	case "$1" in
	--variant) variant=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--results) results=$2; shift 2 ;;
	--label) label=$2; shift 2 ;;
	--quiet) quiet=1; shift ;;
	--dev) dev=$2; shift 2 ;;
	--expect-splat) expect=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--icount) icount=1 smp=1; shift ;;
	--qmp) qmp=$2; shift 2 ;;
	--machine) machine=$2; shift 2 ;;
	--dtb) dtb=$2; shift 2 ;;
	--test-timeout) test_timeout=$2; shift 2 ;;
	--gdb) gdb=$2; shift 2 ;;
	*) die "qemu.sh: unknown option '$1'" ;;
	esac
done
case "$variant" in test) kdir=$BUILD/$arch ;; *) kdir=$BUILD/$arch-$variant ;; esac
label=${label:-${tests//,/+}}
label=${label:-boot}
initrd=$BUILD/guest/$arch/initramfs.cpio.gz
mkdir -p "$BUILD/logs"
log=$BUILD/logs/$arch-$label.log

# Which device family the guest tests drive: zram<N> when rzram is zram's
# driver (CONFIG_ZRAM_DRIVER_RUST), which the guest's init loads as a
# distribution would (modprobe zram) if it is a module; rzram<N> for rzram
# under its own name beside the C zram; zram<N> again for rzram alone
# (rzram.compat=1), or for the C zram alone. A module named on the kernel
# command line is loaded with that option too.
rzdev=zram
if grep -qx 'CONFIG_ZRAM_DRIVER_RUST=y' "$kdir/.config" 2>/dev/null; then
	grep -qx 'CONFIG_ZRAM=m' "$kdir/.config" && append="rzmodprobe=zram $append"
elif grep -qE '^CONFIG_BLK_DEV_RZRAM=(y|m)$' "$kdir/.config" 2>/dev/null; then
	grep -qx 'CONFIG_BLK_DEV_RZRAM=m' "$kdir/.config" && append="rzmodprobe=rzram $append"
	if grep -qE '^CONFIG_ZRAM=(y|m)$' "$kdir/.config"; then
		rzdev=rzram
	else
		append="rzram.compat=1 $append"
	fi
fi
[ -n "$dev" ] && rzdev=$dev

# The arm64 test kernel carries the KUnit suites for kunit.py (scripts/kunit.sh);
# the in-guest tests boot it with them off.
cmdline="panic=-1 kunit.enable=0 rztests=$tests rzdev=$rzdev rztimeout=${test_timeout:-$timeout} $append"
case "$arch" in
arm64)
	kernel=$kdir/arch/arm64/boot/Image
	case "$machine" in
	virt)
		qemu=(qemu-system-aarch64 -M virt -cpu cortex-a72 -smp "$smp" -m "$mem")
		[ $icount = 0 ] || qemu+=(-icount shift=0)
		cmdline="console=ttyAMA0 $cmdline"
		;;
	raspi3b)
		# The board's fixed CPUs and memory; QEMU puts the memory size, the
		# command line and the initrd into the device tree. The console is
		# the mini-UART (ttyS0, QEMU's second serial port), as on a Pi whose
		# PL011 (uart0, the first) drives Bluetooth: the device tree hangs the
		# Bluetooth controller under it, and a kernel with serdev (make pi's)
		# takes that port from the tty layer.
		[ -f "$dtb" ] || die "--machine raspi3b needs --dtb FILE"
		[ $icount = 0 ] || die "--icount: virt only"
		qemu=(qemu-system-aarch64 -M raspi3b -m 1G -dtb "$dtb" -serial null -serial mon:stdio)
		cmdline="earlycon=uart8250,mmio32,0x3f215040 console=ttyS0 $cmdline"
		;;
	*) die "unknown --machine '$machine' (virt, raspi3b)" ;;
	esac
	;;
x86_64)
	kernel=$kdir/arch/x86/boot/bzImage
	qemu=(qemu-system-x86_64 -M pc -smp "$smp" -m "$mem")
	[ $icount = 0 ] || die "--icount: arm64 only"
	cmdline="console=ttyS0 $cmdline"
	;;
esac
[ -f "$kernel" ] || die "no kernel at $kernel (make kernel ARCH=$arch)"
[ -f "$initrd" ] || die "no guest image at $initrd (make image ARCH=$arch)"
# The kernel's module metadata (kernel.sh) goes after the image: the kernel
# unpacks concatenated archives in turn.
if [ -f "$kdir/modules.cpio.gz" ]; then
	cat "$initrd" "$kdir/modules.cpio.gz" >"$kdir/initrd-with-modules.cpio.gz"
	initrd=$kdir/initrd-with-modules.cpio.gz
fi
common=(-nographic -no-reboot -nic none -kernel "$kernel" -initrd "$initrd")
[ -z "$qmp" ] || common+=(-qmp "unix:$qmp,server=on,wait=off")
[ -z "$gdb" ] || common+=(-gdb "tcp:127.0.0.1:$gdb" -S)
# arm64 guests get an empty scratch disk, /dev/vda (virtio-mmio): a real disk
# for the file system of the writeback hybrid test. Sparse, new for each boot.
scratch=
if [ "$arch" = arm64 ] && [ "$machine" = virt ]; then
	scratch=$BUILD/logs/$arch-$label.scratch.img
	rm -f "$scratch"
	truncate -s 2G "$scratch"
	common+=(-drive "file=$scratch,if=none,format=raw,id=scratch" -device virtio-blk-device,drive=scratch)
fi

# KVM only where a probe boot proved it works: on these machines /dev/kvm
# exists but nested guests hang or crash, so TCG is the default.
accel=(-accel tcg)
if [ "$arch" = x86_64 ] && [ "$(uname -m)" = x86_64 ] && [ -w /dev/kvm ] && [ "${RZRAM_KVM:-auto}" != 0 ]; then
	probe=$kdir/.kvm-probe
	if [ ! -f "$probe" ]; then
		note "probing KVM with a test boot (30 s at most)"
		if timeout -k 5 30 "${qemu[@]}" -accel kvm -cpu host "${common[@]}" \
			-append "console=ttyS0 panic=-1 rztests=" </dev/null 2>&1 |
			grep -q 'rzram-guest: done'; then
			echo ok >"$probe"
		else
			echo no >"$probe"
		fi
	fi
	[ "$(cat "$probe")" = ok ] && accel=(-accel kvm -cpu host)
fi
[ "$arch" = x86_64 ] && [ "${accel[1]}" = tcg ] && accel+=(-cpu max)
if [ -n "${RZRAM_GUEST_CPUS:-}" ]; then
	qemu=(taskset -c "$RZRAM_GUEST_CPUS" "${qemu[@]}")
fi

note "booting $arch ($variant, ${accel[1]}${RZRAM_GUEST_CPUS:+, host CPUs $RZRAM_GUEST_CPUS}) tests: ${tests:-none}; log ${log#"$TOP"/}"
start=$(date +%s)
set +e
if [ $quiet = 1 ]; then
	timeout -k 10 "$timeout" "${qemu[@]}" "${accel[@]}" "${common[@]}" -append "$cmdline" </dev/null >"$log" 2>&1
else
	timeout -k 10 "$timeout" "${qemu[@]}" "${accel[@]}" "${common[@]}" -append "$cmdline" </dev/null 2>&1 | tee "$log"
	test "${PIPESTATUS[0]}" = 0
fi
rc=$?
set -e
elapsed=$(($(date +%s) - start))
[ -z "$scratch" ] || rm -f "$scratch"
if [ $rc = 124 ] || [ $rc = 137 ]; then
	echo "qemu: TIMEOUT after ${timeout}s booting $arch; last console lines:" >&2
	tail -n 40 "$log" | sed 's/^/  | /' >&2
fi

# TAP results; anything without one failed. tap_result N NAME prints
# ok, skip (an "ok" with kselftest's "# SKIP" directive: guest/init's exit
# status 4), not-ok or none (a console line may carry kernel output before it).
tap_result() {
	tr -d '\r' <"$log" | awk -v n="$1" -v t="$2" '
		{ skip = ($0 ~ /[ \t]#[ \t]*SKIP/); sub(/[ \t]+#.*$/, "") }
		$0 ~ ("(^|[^a-z])not ok " n " - " t "$") { r = "not-ok"; next }
		$0 ~ ("(^|[^a-z])ok " n " - " t "$") && r == "" { r = (skip ? "skip" : "ok") }
		END { print (r == "" ? "none" : r) }'
}
fails=0
IFS=, read -ra names <<<"$tests"
i=0
for t in "${names[@]}"; do
	i=$((i + 1))
	r=$(tap_result "$i" "$t")
	if [ "$r" = ok ]; then
		result "$results" PASS "$arch:$t"
	elif [ "$r" = skip ]; then
		result "$results" SKIP "$arch:$t"
	else
		[ "$r" = none ] && echo "qemu: $arch:$t has no result (timeout or crash)" >&2
		result "$results" FAIL "$arch:$t"
		fails=$((fails + 1))
	fi
done
scan=$log
if [ -n "$expect" ]; then
	# The provoked report must be there; the rest of the log must be clean.
	scan=$log.rest
	tr -d '\r' <"$log" | grep -vE "$expect" >"$scan" || true
	# grep without -q reads to the end: under pipefail, a grep -q that exits
	# at the first match can kill tr with SIGPIPE and fail the pipeline.
	if ! tr -d '\r' <"$log" | grep -E "$expect" >/dev/null; then
		echo "qemu: $arch: the expected report /$expect/ is not in $log" >&2
		scan=/nonexistent
	fi
fi
if "$TOP/scripts/check-log.sh" "$scan"; then
	result "$results" PASS "$arch:$label:kernel-log"
else
	result "$results" FAIL "$arch:$label:kernel-log"
	fails=$((fails + 1))
fi
grep -q 'rzram-guest: done' "$log" || { echo "qemu: $arch guest did not finish" >&2; fails=$((fails + 1)); }
note "$arch guest finished in ${elapsed}s, $fails failure(s)"
[ $fails = 0 ]
