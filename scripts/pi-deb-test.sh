#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# pi-deb-test.sh DEB: installs make pi's package into a Debian arm64 root file
# system laid out as Raspberry Pi OS's (merged /usr, the boot partition at
# /boot/firmware with the firmware, config.txt, cmdline.txt, the stock
# kernel8.img and its modules), with this machine's dpkg (--root, and
# --force-script-chrootless: the maintainer scripts honour DPKG_ROOT), and
# checks, each a PASS/FAIL line in build/pi/results.txt:
#   install  the package has no file on the FAT boot partition (dpkg could
#            not replace it); every file it adds is the package's or a copy
#            its postinst makes (the boot files in rzram/, the command line),
#            no file of the root changes (no overwrite, config.txt and
#            kernel8.img untouched); installing it again changes nothing;
#   boot     rzram-pi-boot try puts rzram's tryboot.txt in place; default and
#            stock add and remove config.txt's block and leave config.txt
#            byte-identical (with and without a final newline, with DOS line
#            ends); a block without its end line is refused, and so is the
#            package's removal;
#   remove   after "default", dpkg --purge leaves the root byte-identical to
#            before the install (config.txt restored, nothing left).
# The root's packages are the guest image's arm64 packages (image.sh); its
# dpkg database is made from their control files. /var/lib/dpkg and
# /var/log are dpkg's own records and are left out of the comparisons.
. "$(dirname "$0")/lib.sh"

deb=${1:?usage: pi-deb-test.sh DEB}
debs=$BUILD/guest/debs-arm64
results=$BUILD/pi/results.txt
r=$BUILD/pi/rootfs
ls "$debs"/kmod_*_arm64.deb >/dev/null 2>&1 || die "no arm64 packages in $debs (run image.sh arm64)"

# 1. The root: merged /usr, the guest packages unpacked and registered.
rm -rf "$r"
mkdir -p "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib" "$r/etc" "$r/var/lib/dpkg/info" \
	"$r/var/lib/dpkg/updates" "$r/var/lib/dpkg/triggers" "$r/var/log" "$r/boot/firmware/overlays"
ln -s usr/bin "$r/bin"
ln -s usr/sbin "$r/sbin"
ln -s usr/lib "$r/lib"
: >"$r/var/lib/dpkg/status"
: >"$r/var/lib/dpkg/available"
for d in "$debs"/*.deb; do
	# --keep-directory-symlink: /bin, /sbin and /lib stay links into /usr.
	dpkg-deb --fsys-tarfile "$d" | tar -x -C "$r" --keep-directory-symlink
	{
		dpkg-deb -f "$d" Package Version Architecture Multi-Arch Maintainer Depends \
			Pre-Depends Provides Description | sed '1a Status: install ok installed'
		echo
	} >>"$r/var/lib/dpkg/status"
	p=$(dpkg-deb -f "$d" Package)
	# dpkg names the file list pkg:arch.list for Multi-Arch: same packages.
	[ "$(dpkg-deb -f "$d" Multi-Arch)" != same ] || p=$p:$(dpkg-deb -f "$d" Architecture)
	dpkg-deb --fsys-tarfile "$d" | tar -t | sed 's|^\./|/|; s|/$||; s|^$|/.|' >"$r/var/lib/dpkg/info/$p.list"
done
dpkg --root="$r" --add-architecture arm64
# Raspberry Pi OS's boot partition and stock kernel, as placeholders with
# contents of their own.
fw=$r/boot/firmware
for f in bootcode.bin start4.elf fixup4.dat kernel8.img initramfs8 bcm2711-rpi-4-b.dtb \
	bcm2711-rpi-400.dtb bcm2711-rpi-cm4.dtb overlays/vc4-kms-v3d.dtbo; do
	echo "Raspberry Pi OS's $f" >"$fw/$f"
done
cat >"$fw/config.txt" <<'EOT'
# For more options and information see
# http://rptl.io/configtxt
dtparam=audio=on
camera_auto_detect=1
display_auto_detect=1
auto_initramfs=1
dtoverlay=vc4-kms-v3d
max_framebuffers=2
disable_fw_kms_setup=1
arm_64bit=1
disable_overscan=1
arm_boost=1

[cm4]
otg_mode=1

[all]
EOT
echo "console=serial0,115200 console=tty1 root=PARTUUID=4e639091-02 rootfstype=ext4 fsck.repair=yes rootwait quiet splash" >"$fw/cmdline.txt"
stockrel=6.12.47+rpt-rpi-v8
mkdir -p "$r/usr/lib/modules/$stockrel/kernel/drivers/block/zram"
echo "stock zram.ko" >"$r/usr/lib/modules/$stockrel/kernel/drivers/block/zram/zram.ko.xz"
echo "kernel/drivers/block/zram/zram.ko.xz:" >"$r/usr/lib/modules/$stockrel/modules.dep"

# A listing of the root: each path with its type, mode, size, link target
# and contents' hash.
manifest() {
	(cd "$r" && find . \( -path ./var/lib/dpkg -o -path ./var/log \) -prune -o -print0 |
		LC_ALL=C sort -z | while IFS= read -r -d '' p; do
			if [ -f "$p" ] && [ ! -L "$p" ]; then
				printf '%s f %s %s\n' "$p" "$(stat -c %a "$p")" "$(sha256sum <"$p" | cut -c1-64)"
			elif [ -L "$p" ]; then
				printf '%s l %s\n' "$p" "$(readlink "$p")"
			else
				printf '%s d %s\n' "$p" "$(stat -c %a "$p")"
			fi
		done)
}
check() {
	local name=$1
	shift
	check_to "$results" "$BUILD/pi/deb-$name.txt" "pi:deb-$name" "$@"
}
dp() { dpkg --root="$r" --force-script-chrootless --log=/dev/null "$@"; }
rzboot() { DPKG_ROOT=$r "$r/usr/sbin/rzram-pi-boot" "$@"; }

manifest >"$BUILD/pi/root-before.txt"
cp "$fw/config.txt" "$BUILD/pi/config.txt.stock"

# 2. Install: added paths are the package's (its ./lib is the root's usr/lib)
# and the copied command line; nothing that was there changes.
install_check() {
	dp -i "$deb" || return 1
	manifest >"$BUILD/pi/root-installed.txt"
	# A line of the listing before that is not in the one after: a path
	# changed or gone.
	local lost
	lost=$(LC_ALL=C comm -23 "$BUILD/pi/root-before.txt" "$BUILD/pi/root-installed.txt")
	local added expected
	added=$(LC_ALL=C comm -13 <(cut -d' ' -f1 "$BUILD/pi/root-before.txt") \
		<(cut -d' ' -f1 "$BUILD/pi/root-installed.txt"))
	local files
	files=$(dpkg-deb --fsys-tarfile "$deb" | tar -t | sed 's|/$||')
	if grep -q '^\./boot/firmware' <<<"$files"; then
		echo "the package has files on the FAT boot partition, which dpkg cannot replace:"
		grep '^\./boot/firmware' <<<"$files"
		return 1
	fi
	# What dpkg unpacks (its ./lib is the root's usr/lib), and what the
	# postinst copies to the boot partition: the boot files, the command line.
	expected=$( { sed 's|^\./lib/|./usr/lib/|' <<<"$files"
		echo ./boot/firmware/rzram
		echo ./boot/firmware/rzram/cmdline.txt
		sed -n 's|^\./usr/lib/rzram-pi-kernel/boot/\(.\)|./boot/firmware/rzram/\1|p' <<<"$files"; } |
		LC_ALL=C sort -u | LC_ALL=C comm -23 - <(cut -d' ' -f1 "$BUILD/pi/root-before.txt"))
	echo "added: $(echo "$added" | wc -l) paths; the package's and the command line's: $(echo "$expected" | wc -l)"
	[ -z "$lost" ] || { echo "changed or removed by the install:"; echo "$lost"; return 1; }
	[ "$added" = "$expected" ] || { echo "added paths differ from the package's:";
		diff <(echo "$expected") <(echo "$added"); return 1; }
	[ "$(sed 's/console=serial0/console=ttyS0/' "$fw/cmdline.txt")" = "$(cat "$fw/rzram/cmdline.txt")" ] ||
		{ echo "rzram/cmdline.txt is not the stock one with the console on ttyS0"; return 1; }
	cat "$fw/rzram/cmdline.txt"
	[ ! -e "$fw/tryboot.txt" ] || { echo "tryboot.txt written by the install"; return 1; }
	for f in "$r"/usr/lib/rzram-pi-kernel/boot/*; do
		cmp "$f" "$fw/rzram/$(basename "$f")" || return 1
	done
	echo "kernel8.img, config.txt, cmdline.txt and the stock modules unchanged; nothing overwritten"
	# Installed again (prerm upgrade, then postinst configure, as an
	# upgrade runs): the root stays as the first install left it.
	dp -i "$deb" || return 1
	manifest >"$BUILD/pi/root-reinstalled.txt"
	diff "$BUILD/pi/root-installed.txt" "$BUILD/pi/root-reinstalled.txt" || return 1
	echo "installed again: nothing changes"
}
check install install_check

# 3. Try once, make default, go back.
boot_check() {
	rzboot try --no-reboot || return 1
	cmp "$fw/tryboot.txt" "$fw/rzram/tryboot.txt" || return 1
	rzboot status
	rzboot default || return 1
	grep -q '^os_prefix=rzram/$' "$fw/config.txt" || { echo "default: no os_prefix"; return 1; }
	rzboot status >"$BUILD/pi/deb-status.txt" || return 1
	grep -q "default: rzram's kernel" "$BUILD/pi/deb-status.txt" || return 1
	rzboot stock || return 1
	cmp "$fw/config.txt" "$BUILD/pi/config.txt.stock" || { echo "stock: config.txt differs"; return 1; }
	# A config.txt without a final newline comes back without one.
	printf 'arm_64bit=1' >"$fw/config.txt"
	rzboot default && rzboot stock || return 1
	[ "$(cat "$fw/config.txt")" = arm_64bit=1 ] && [ "$(wc -c <"$fw/config.txt")" = 11 ] ||
		{ echo "stock: a config.txt without a final newline came back as: $(od -c "$fw/config.txt")"; return 1; }
	# Edited on another computer into DOS line ends, it still comes back
	# without the block.
	cp "$BUILD/pi/config.txt.stock" "$fw/config.txt"
	rzboot default >/dev/null || return 1
	sed -i 's/$/\r/' "$fw/config.txt"
	rzboot stock || return 1
	[ "$(sed 's/$/\r/' "$BUILD/pi/config.txt.stock")" = "$(cat "$fw/config.txt")" ] ||
		{ echo "stock: a config.txt with DOS line ends kept the block"; return 1; }
	# A block whose end line was deleted is left for a person to edit, and
	# so is the package's removal.
	cp "$BUILD/pi/config.txt.stock" "$fw/config.txt"
	rzboot default >/dev/null || return 1
	sed -i '/^# END rzram-pi-kernel$/d' "$fw/config.txt"
	cp "$fw/config.txt" "$BUILD/pi/config.txt.noend"
	if rzboot stock; then echo "stock: a block without its end line was removed"; return 1; fi
	cmp "$fw/config.txt" "$BUILD/pi/config.txt.noend" || return 1
	if dp -r rzram-pi-kernel; then echo "removed while config.txt still boots rzram's kernel"; return 1; fi
	[ -f "$fw/rzram/Image" ] || { echo "the failed removal took the kernel"; return 1; }
	cp "$BUILD/pi/config.txt.stock" "$fw/config.txt"
	echo "try, default and stock work; config.txt restored byte for byte (DOS line ends"
	echo "too); a block without its end line is left alone and blocks the removal"
}
check boot boot_check

# 4. Remove while rzram's kernel is the default and its tryboot.txt is in
# place: the root comes back as it was.
remove_check() {
	rzboot default >/dev/null || return 1
	dp --purge rzram-pi-kernel || return 1
	manifest >"$BUILD/pi/root-removed.txt"
	diff "$BUILD/pi/root-before.txt" "$BUILD/pi/root-removed.txt" || return 1
	echo "the root is as before the install, config.txt included"
}
check remove remove_check
