#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest initramfs for ARCH from Debian packages of that architecture.
#
# The package closure is downloaded once (apt-get download) and unpacked with
# dpkg-deb -x. Only the programs the tests use are copied into the image, each
# with the shared libraries it needs (its ELF NEEDED closure), so fio's many
# optional back-end libraries cost download time but not guest RAM.
#
# Usage: image.sh ARCH   ->  build/guest/ARCH/initramfs.cpio.gz
. "$(dirname "$0")/lib.sh"

arch=${1:-}
[ -n "$arch" ] || die "usage: image.sh ARCH ($SUPPORTED_ARCHES)"
check_arch "$arch"
case "$arch" in
arm64) debarch=arm64; triplet=aarch64-linux-gnu; cc=aarch64-linux-gnu-gcc ;;
x86_64) debarch=amd64; triplet=x86_64-linux-gnu; cc=gcc ;;
esac

GUEST_PKGS="busybox-static bash util-linux mount e2fsprogs fio coreutils kmod bc systemd-zram-generator udev"
# Architecture-independent packages, named without an architecture.
GUEST_PKGS_ALL="zram-tools"
# Packages in the dependency closure that provide nothing the image runs.
SKIP_RE='^(python3|libpython3|perl|libperl|debconf|init-system-helpers|dpkg|tzdata|media-types|readline-common|netbase|base-files|debianutils|sensible-utils)'
# Programs copied into the image: name -> looked up in the unpacked packages.
PROGS="bash mkswap swapon swapoff zramctl blkdiscard losetup fallocate mke2fs e2fsck fio
sha256sum md5sum dd stat sync timeout nproc kmod bc zramswap udevadm"

gdir=$BUILD/guest/$arch
debs=$BUILD/guest/debs-$debarch
pkgroot=$gdir/pkgroot
root=$gdir/root
mkdir -p "$debs" "$gdir"

# 1. Download and unpack the package closure, once per package list.
if [ "$(cat "$pkgroot/.complete" 2>/dev/null)" != "$GUEST_PKGS | $GUEST_PKGS_ALL" ]; then
	q=()
	for p in $GUEST_PKGS; do q+=("$p:$debarch"); done
	for p in $GUEST_PKGS_ALL; do q+=("$p"); done
	list=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances "${q[@]}" 2>/dev/null |
		grep -v '^[ <]' | sort -u | grep -vE "$SKIP_RE" || true)
	[ -n "$list" ] || die "apt-cache depends found no $debarch packages (run: make deps)"
	note "downloading $(echo "$list" | wc -l) $debarch packages for the guest"
	# apt-cache names some foreign packages NAME:ARCH and others just NAME;
	# a bare name is the guest's own only if it is architecture-independent.
	# shellcheck disable=SC2086
	all=$(apt-cache show --no-all-versions $(echo "$list" | grep -v :) 2>/dev/null |
		awk '/^Package:/ { p = $2 } /^Architecture: all/ { print p }' | sort -u)
	pk=()
	for p in $list; do
		case "$p" in
		*:*) pk+=("$p") ;;
		*) if grep -qx "$p" <<<"$all"; then pk+=("$p"); else pk+=("$p:$debarch"); fi ;;
		esac
	done
	rm -f "$debs"/*.deb
	(cd "$debs" && apt-get download -q "${pk[@]}" >/dev/null 2>&1) ||
		die "command failed: apt-get download (in $debs) of: ${pk[*]}"
	rm -rf "$pkgroot"
	mkdir -p "$pkgroot"
	for d in "$debs"/*_"$debarch".deb "$debs"/*_all.deb; do
		[ -f "$d" ] || continue
		dpkg-deb -x "$d" "$pkgroot" || die "command failed: dpkg-deb -x $d"
	done
	echo "$GUEST_PKGS | $GUEST_PKGS_ALL" >"$pkgroot/.complete"
fi

# 2. Assemble the root.
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,lib/$triplet,etc,proc,sys,dev,tmp,run,mnt,tests}
cp "$pkgroot/bin/busybox" "$root/bin/busybox"
# The init installs the busybox applets as links in /bin at boot; the real
# programs go to /usr/bin and /usr/sbin, which come first on the guest's PATH.

find_prog() {
	local d
	for d in usr/sbin usr/bin sbin bin; do
		[ -f "$pkgroot/$d/$1" ] && { echo "$pkgroot/$d/$1"; return 0; }
	done
	return 1
}

find_lib() {
	local d
	for d in "lib/$triplet" "usr/lib/$triplet" lib usr/lib; do
		[ -e "$pkgroot/$d/$1" ] && { echo "$pkgroot/$d/$1"; return 0; }
	done
	find "$pkgroot/usr/lib/$triplet" "$pkgroot/lib/$triplet" -name "$1" 2>/dev/null | head -n1 | grep . || return 1
}

declare -A seen=()
add_elf() {
	local f=$1 lib p interp
	# Scripts (zramswap) need no libraries.
	[ "$(head -c4 "$f" | tail -c3)" = ELF ] || return 0
	interp=$(readelf -lW "$f" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	if [ -n "$interp" ] && [ ! -e "$root$interp" ]; then
		p=$(find_lib "$(basename "$interp")") || die "guest: no interpreter $interp for $f"
		mkdir -p "$root$(dirname "$interp")"
		cp -L "$p" "$root$interp"
	fi
	for lib in $(readelf -dW "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[ -n "${seen[$lib]:-}" ] && continue
		seen[$lib]=1
		p=$(find_lib "$lib") || die "guest: $f needs $lib, which no downloaded $debarch package has"
		cp -L "$p" "$root/lib/$triplet/$lib"
		add_elf "$root/lib/$triplet/$lib"
	done
}

for prog in $PROGS; do
	src=$(find_prog "$prog") || die "guest: program $prog not found in the $debarch packages"
	case "$src" in */sbin/*) dst=$root/usr/sbin/$prog ;; *) dst=$root/usr/bin/$prog ;; esac
	cp -L "$src" "$dst"
	add_elf "$dst"
done
ln -sf mke2fs "$root/usr/sbin/mkfs.ext4"
for p in modprobe rmmod insmod lsmod depmod modinfo; do ln -sf ../bin/kmod "$root/usr/sbin/$p"; done
# systemd's zram-generator (the program only: the guest has no systemd).
mkdir -p "$root/lib/systemd/system-generators"
cp -L "$pkgroot/lib/systemd/system-generators/zram-generator" "$root/lib/systemd/system-generators/"
add_elf "$root/lib/systemd/system-generators/zram-generator"
# udev, for the Pi kernel's boot (pi_udev_modules): udevadm is also the
# daemon, systemd-udevd, and its rule that loads a device's driver by alias.
mkdir -p "$root/lib/systemd" "$root/lib/udev/rules.d"
ln -sf /usr/bin/udevadm "$root/lib/systemd/systemd-udevd"
cp "$pkgroot/lib/udev/rules.d/80-drivers.rules" "$root/lib/udev/rules.d/"
# zram-tools' configuration, as the package installs it.
mkdir -p "$root/etc/default"
cp "$pkgroot/etc/default/zramswap" "$root/etc/default/zramswap"
# The kernel's zram selftests, unchanged, from the tree.
# (The tree exists once make tree has run; without it the test says so.)
if [ -d "$TOP/build/linux/tools/testing/selftests/zram" ]; then
	mkdir -p "$root/tests/selftests"
	cp -r "$TOP/build/linux/tools/testing/selftests/zram" "$root/tests/selftests/"
fi
ln -sf bash "$root/usr/bin/sh.bash"
# Scripts from packages (zramswap, the selftests) start with #!/bin/bash.
ln -sf /usr/bin/bash "$root/bin/bash"
[ -f "$pkgroot/etc/mke2fs.conf" ] && cp "$pkgroot/etc/mke2fs.conf" "$root/etc/"
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"

# 3. Our static programs, cross-compiled for the guest. Each is rebuilt when
# it is missing or older than a file its last build read: the compiler lists
# them (-MMD: the source and our headers, such as tests/src/sysfs.h) in OUT.d.
stale() {
	local out=$1 dep
	[ -x "$out" ] && [ -f "$out.d" ] || return 0
	for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$out.d"); do
		[ -e "$dep" ] && [ ! "$dep" -nt "$out" ] || return 0
	done
	return 1
}
for c in "$TOP"/tests/src/*.c "$TOP"/bench/*.c; do
	[ -f "$c" ] || continue
	out=$gdir/bin/$(basename "$c" .c)
	mkdir -p "$gdir/bin"
	if stale "$out"; then
		"$cc" -static -O2 -Wall -Werror -MMD -MF "$out.d" -o "$out" "$c" -lpthread ||
			die "command failed: $cc -static $c"
	fi
	cp "$out" "$root/usr/local/bin/"
done

# 4. Init and the in-guest tests.
cp "$TOP/guest/init" "$root/init"
chmod 755 "$root/init"
# The benchmarks' guest halves (bench/guest) go beside the tests: make bench
# boots them by name, as make test boots the tests.
cp "$TOP"/tests/guest/*.sh "$TOP"/bench/guest/*.sh "$root/tests/"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$gdir/initramfs.cpio.gz.tmp"
mv "$gdir/initramfs.cpio.gz.tmp" "$gdir/initramfs.cpio.gz"
note "guest image $gdir/initramfs.cpio.gz ($(du -h "$gdir/initramfs.cpio.gz" | cut -f1))"
