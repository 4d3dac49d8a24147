#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# pi-deb.sh: the Debian package (arm64) of make pi's kernel, rzram-pi-kernel,
# into build/pi/. It installs beside Raspberry Pi OS's kernel and changes
# nothing of the firmware's default boot:
#   /usr/lib/rzram-pi-kernel/boot/  Image, the upstream device trees of the Pi
#                               4 B, 400, CM4 (IO board) and Pi 3 B/B+, and
#                               tryboot.txt (os_prefix=rzram/), which the
#                               postinst copies to /boot/firmware/rzram/ (dpkg
#                               itself cannot replace files on the FAT boot
#                               partition: it backs them up with hard links)
#   /lib/modules/<release>/     the modules, with depmod's indexes
#   /boot/config-<release>      the configuration
#   /usr/sbin/rzram-pi-boot     try once, make default, go back (see it)
# Its maintainer scripts (scripts/pi-deb/) run rzram-pi-boot install on
# configure (the boot files, the stock command line with the console on
# ttyS0) and rzram-pi-boot uninstall on removal (config.txt restored if
# rzram's kernel was made the default, an rzram tryboot.txt and rzram/
# removed). They honour DPKG_ROOT, so that pi-deb-test.sh installs the
# package into a root file system on this machine (dpkg
# --force-script-chrootless).
#
# Usage: pi-deb.sh   (after kernel.sh arm64 pi); prints the package's path
. "$(dirname "$0")/lib.sh"

kdir=$BUILD/arm64-pi
out=$BUILD/pi
rel=$(cat "$kdir/include/config/kernel.release")
dts=$kdir/arch/arm64/boot/dts/broadcom
pkg=rzram-pi-kernel
# The upstream version, then the project's commit count: a rebuilt package
# of a later commit is an upgrade.
ver=${rel%%-*}+rzram$(git -C "$TOP" rev-list --count HEAD 2>/dev/null || echo 1)
stage=$out/deb
rm -rf "$stage"
lib=$stage/usr/lib/$pkg
mkdir -p "$stage/DEBIAN" "$lib/boot" "$stage/boot" "$stage/lib/modules" \
	"$stage/usr/sbin" "$stage/usr/share/doc/$pkg"

install -m 644 "$kdir/arch/arm64/boot/Image" "$lib/boot/Image"
for b in bcm2711-rpi-4-b bcm2711-rpi-400 bcm2711-rpi-cm4-io bcm2837-rpi-3-b bcm2837-rpi-3-b-plus; do
	install -m 644 "$dts/$b.dtb" "$lib/boot/$b.dtb"
done
install -m 644 "$TOP/scripts/pi-deb/tryboot.txt" "$lib/boot/tryboot.txt"
echo "$rel" >"$lib/release"
install -m 644 "$kdir/.config" "$stage/boot/config-$rel"
cp -a "$kdir/modroot/lib/modules/$rel" "$stage/lib/modules/"
rm -f "$stage/lib/modules/$rel/build" "$stage/lib/modules/$rel/source"
install -m 755 "$TOP/scripts/pi-deb/rzram-pi-boot" "$stage/usr/sbin/rzram-pi-boot"
sed -e "s/@REL@/$rel/g" "$TOP/docs/pi-INSTALL.txt" >"$stage/usr/share/doc/$pkg/README"
cat >"$stage/usr/share/doc/$pkg/copyright" <<EOT
Linux $rel with rzram, built by the rzram project's make pi from Debian's
linux-source-6.12 with the rzram patches and files.

License: GPL-2.0-only
 The Linux kernel, rzram and this package's scripts are licensed under the
 GNU General Public License version 2; on Debian systems its text is in
 /usr/share/common-licenses/GPL-2. Some kernel files carry other compatible
 licenses, as their SPDX-License-Identifier lines say.
EOT
chmod 644 "$stage/usr/share/doc/$pkg/README" "$stage/usr/share/doc/$pkg/copyright"
for s in preinst postinst prerm postrm; do
	install -m 755 "$TOP/scripts/pi-deb/$s" "$stage/DEBIAN/$s"
done
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOT
Package: $pkg
Version: $ver
Architecture: arm64
Maintainer: rzram developers <rzram@users.noreply.example>
Section: kernel
Priority: optional
Depends: kmod
Installed-Size: $size
Description: Linux $rel for the Raspberry Pi with rzram as zram's driver
 Debian's arm64 kernel configuration narrowed to the Raspberry Pi 4 B, 400,
 CM4 and 3, with rzram (zram in Rust) built in as zram's driver. It installs
 beside Raspberry Pi OS's kernel, in /boot/firmware/rzram, and leaves the
 firmware's default boot as it is: "rzram-pi-boot try" boots it once.
EOT
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
	xargs -0 md5sum >DEBIAN/md5sums)
deb=$out/${pkg}_${ver}_arm64.deb
rm -f "$out"/"${pkg}"_*.deb
dpkg-deb --root-owner-group -Zgzip --build "$stage" "$deb" >/dev/null
echo "$deb"
