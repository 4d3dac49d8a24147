#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Configure and build a kernel out of tree.
#
# Usage: kernel.sh ARCH [VARIANT]
#   VARIANT test  (default) our tree, base + qemu-ARCH + rzram + debug + kasan; on
#                 arm64 also the KUnit suites (kunit.kunitconfig), which
#                 kunit.py runs from this build (scripts/kunit.sh) and the
#                 in-guest boots leave off (kunit.enable=0)
#           bench our tree, base + qemu-ARCH + rzram + bench (no debug
#                 options; the binding benchmark rust_zsmalloc_bench)
#           trace bench plus the ftrace function profiler (make profile)
#           kcsan the test kernel with KCSAN instead of KASAN (make kcsan;
#                 on x86_64 in compat mode, as the x86_64 test kernel)
#           kcsan-strict  kcsan with KCSAN's strict rules (KCSAN_STRICT=1
#                 make kcsan)
#           pi    arm64 only: the Raspberry Pi kernel of make pi, Debian's
#                 arm64 configuration (debian_arm64_config, lib.sh) +
#                 qemu-arm64 + rzram + compat + rpi4-narrow + rpi4 through
#                 olddefconfig, with its modules and the Broadcom device
#                 trees, into build/arm64-pi (also boots QEMU raspi3b and virt)
#           stock pristine tree (no patches, no overlay), base + qemu-ARCH
#                 + zswap (zswap, off until enabled, and brd)
#           pre-zswap, zswap  the series up to the patch before its zswap
#                 patch, and up to that patch, base + qemu-ARCH + zswap, as
#                 stock (make bench's zswap munmap part)
#           p3    pristine + the series up to its third zsmalloc patch (the
#                 zs_free locking changes alone), base + qemu-ARCH
#           p3-*  p3 plus bench/variants/<variant>.patch, a zsmalloc-internal
#                 deferral for make bench's layering breakdown (p3-zspage:
#                 the empty zspages' release; p3-zsfree: zs_free() itself),
#                 built from p3's tree (patched for the build, then restored)
#                 into build/ARCH-<variant>
#   kernel.sh arm zsmalloc32: the 32-bit compile check, arm32.config, builds
#           only mm/zsmalloc.o (and the zsmalloc KUnit object when present)
#
# The config is allnoconfig plus the fragments, merged with the kernel's
# merge_config.sh (the pi variant: Debian's configuration plus the fragments,
# through olddefconfig). Every option a fragment asks for must survive; a
# silent Kconfig dependency miss fails the build.
. "$(dirname "$0")/lib.sh"

arch=${1:-}
variant=${2:-test}
[ -n "$arch" ] || die "usage: kernel.sh ARCH [test|bench|stock] (ARCH: $SUPPORTED_ARCHES)"
if [ "$variant" = zsmalloc32 ]; then
	[ "$arch" = arm ] || die "the zsmalloc32 variant is ARCH=arm only"
else
	check_arch "$arch"
fi
toolchain_env

frags=("$FRAG/base.config" "$FRAG/qemu-$arch.config")
# A distribution's configuration under the fragments (pi), or none: allnoconfig.
basecfg=
case "$variant" in
zsmalloc32) frags=("$FRAG/arm32.config"); out=$BUILD/arm ;;
test)
	frags+=("$FRAG/rzram.config" "$FRAG/debug.config" "$FRAG/kasan.config")
	# x86_64 tests rzram alone, in compat mode (zram names), without the C zram,
	# and without access times (the arm64 kernel has them).
	[ "$arch" = x86_64 ] && frags+=("$FRAG/compat.config" "$FRAG/rzram-lean.config")
	# One arm64 build serves the guest tests and kunit.py: the suites are built
	# in and run only when kunit.py boots the kernel.
	[ "$arch" = arm64 ] && frags+=("$FRAG/kunit.kunitconfig")
	# arm64 has the C zram next to rzram, with its optional features, so
	# that the ABI test compares them.
	[ "$arch" = arm64 ] && frags+=("$FRAG/zram-full.config")
	out=$BUILD/$arch
	;;
kunit)
	# make kunit ARCH=x86_64: the test kernel's checks with rzram built in,
	# so that its suites run when kunit.py boots it (x86_64's test kernel has
	# rzram as a module). arm64's test kernel runs KUnit itself.
	[ "$arch" = x86_64 ] || die "the kunit variant is x86_64's: arm64's test kernel runs KUnit"
	frags+=("$FRAG/rzram.config" "$FRAG/debug.config" "$FRAG/kasan.config" "$FRAG/kunit.kunitconfig")
	out=$BUILD/$arch-kunit
	;;
bench) frags+=("$FRAG/rzram.config" "$FRAG/bench.config"); out=$BUILD/$arch-bench ;;
trace) frags+=("$FRAG/rzram.config" "$FRAG/trace.config"); out=$BUILD/$arch-trace ;;
kcsan | kcsan-strict)
	frags+=("$FRAG/rzram.config" "$FRAG/debug.config" "$FRAG/kcsan.config")
	[ "$variant" = kcsan-strict ] && frags+=("$FRAG/kcsan-strict.config")
	# As the x86_64 test kernel: rzram_block_state expects no access times there.
	[ "$arch" = x86_64 ] && frags+=("$FRAG/compat.config" "$FRAG/rzram-lean.config")
	out=$BUILD/$arch-$variant
	;;
pi)
	[ "$arch" = arm64 ] || die "the pi variant is arm64 only"
	basecfg=$(debian_arm64_config)
	[ -s "$basecfg" ] || die "no Debian arm64 configuration"
	out=$BUILD/$arch-pi
	mkdir -p "$out"
	# Whole driver directories narrowed to a keep list (rpi4-keep.list):
	# the generated fragment goes unchecked (what it turns off may be
	# selected by what stays), the options it keeps are checked.
	python3 "$TOP/scripts/pi-narrow.py" "$SRC" "$basecfg" "$FRAG/rpi4-keep.list" \
		"$out/rpi4-keep.config" || die "rpi4-keep.list does not fit Debian's configuration"
	basecfg="$basecfg $out/rpi4-keep.config"
	frags=("$FRAG/qemu-$arch.config" "$FRAG/rzram.config" "$FRAG/compat.config"
		"$FRAG/rpi4-narrow.config" "$out/rpi4-keep.config.keep" "$FRAG/rpi4.config")
	;;
stock | pre-zswap | zswap)
	frags+=("$FRAG/zswap.config")
	out=$BUILD/$arch-$variant
	SRC=$BUILD/linux-$variant
	;;
p3) out=$BUILD/$arch-p3; SRC=$BUILD/linux-p3 ;;
p3-*)
	vpatch=$TOP/bench/variants/$variant.patch
	[ -f "$vpatch" ] || die "unknown variant '$variant': no $vpatch"
	out=$BUILD/$arch-$variant
	SRC=$BUILD/linux-p3
	;;
*) die "unknown variant '$variant' (test, kunit, bench, trace, kcsan, kcsan-strict, pi, stock, pre-zswap, zswap, p3, p3-*)" ;;
esac
for f in "${frags[@]}"; do [ -f "$f" ] || die "missing config fragment $f"; done

# The stock, p3 and zswap trees are worktrees of build/linux at pristine, at
# the series' third zsmalloc commit, and at (or before) its zswap commit (same
# content each time tree.sh re-applies it).
case "$variant" in
stock | p3* | pre-zswap | zswap)
	rev=pristine
	if [ "$variant" = zswap ] || [ "$variant" = pre-zswap ]; then
		# The first zswap patch.
		rev=$(git -C "$BUILD/linux" log --reverse --format='%H %s' pristine..HEAD |
			grep ' mm/zswap: ' | head -n 1 | cut -d' ' -f1)
		[ -n "$rev" ] || die "the series has no zswap patch"
		[ "$variant" = pre-zswap ] && rev=$(git -C "$BUILD/linux" rev-parse "$rev^")
	elif [ "$variant" != stock ]; then
		# The third zsmalloc patch: the series starts with zram fixes.
		rev=$(git -C "$BUILD/linux" log --reverse --format='%H %s' pristine..HEAD |
			grep ' mm/zsmalloc: ' | sed -n 3p | cut -d' ' -f1)
		[ -n "$rev" ] || die "the series has fewer than three zsmalloc patches"
	fi
	if [ ! -d "$SRC" ]; then
		note "creating the $variant tree $SRC"
		git -C "$BUILD/linux" worktree add -q --detach "$SRC" "$rev"
	else
		# -f: drops a variant's patch that an interrupted build left.
		git -C "$SRC" checkout -q -f --detach "$rev"
	fi
	if [ -n "${vpatch:-}" ]; then
		git -C "$SRC" apply "$vpatch" || die "$vpatch does not apply to p3"
		trap 'git -C "$SRC" checkout -q -f --detach "$rev"' EXIT
	fi
	;;
esac
mkdir -p "$out"

case "$arch" in
arm64) target=Image; image=arch/arm64/boot/Image ;;
x86_64) target=bzImage; image=arch/x86/boot/bzImage ;;
arm)
	target=mm/zsmalloc.o
	[ -f "$SRC/mm/zsmalloc_kunit.c" ] && target="$target mm/zsmalloc_kunit.o"
	image=$target
	;;
esac

if [ "$variant" != zsmalloc32 ]; then
	kmake "$out" "$arch" rustavailable >"$out/rustavailable.log" 2>&1 ||
		{ cat "$out/rustavailable.log" >&2; die "Rust is not available for $arch with this toolchain"; }
fi

# Re-merge the config only when its inputs changed, so that a no-change
# rebuild stays a no-op.
kconfigs=$(cd "$TOP" && find drivers rust mm samples -name 'Kconfig*' 2>/dev/null | sort || true)
want=$(hash_files $basecfg "${frags[@]}" "$TOP/scripts/pi-narrow.py" $kconfigs "$SRC/.git/rzram/series-hash" | cut -c1-16)-$variant
if [ ! -f "$out/.config" ] || [ "$(cat "$out/.rzram-config" 2>/dev/null)" != "$want" ]; then
	note "configuring $arch ($variant): $(basename -a $basecfg "${frags[@]}" | tr '\n' ' ')"
	(cd "$SRC" && scripts/kconfig/merge_config.sh -m -O "$out" "${frags[@]}") >"$out/merge.log"
	mv "$out/.config" "$out/.config.requested"
	if [ -n "$basecfg" ]; then
		# The fragments over the base; what the base asks for is not
		# checked (narrowing drops some of it), what the fragments ask is.
		# shellcheck disable=SC2086 # $basecfg: the base, then its narrowing
		(cd "$SRC" && scripts/kconfig/merge_config.sh -m -O "$out" $basecfg "${frags[@]}") >>"$out/merge.log"
		kmake "$out" "$arch" olddefconfig >>"$out/merge.log"
	else
		kmake "$out" "$arch" KCONFIG_ALLCONFIG="$out/.config.requested" allnoconfig >>"$out/merge.log"
	fi
	"$TOP/scripts/config-check.sh" "$out/.config.requested" "$out/.config" ||
		die "$arch ($variant): options above did not survive Kconfig"
	echo "$want" >"$out/.rzram-config"
fi

# A kernel with loadable modules (x86_64's test kernel has zram.ko, rzram as
# zram's driver) builds them too.
grep -qx 'CONFIG_MODULES=y' "$out/.config" 2>/dev/null && target="$target modules"
# The Pi kernel's device trees (those of the Broadcom boards it enables).
[ "$variant" = pi ] && target="$target dtbs"
note "building $arch ($variant) in ${out#"$TOP"/}"
start=$(date +%s)
# shellcheck disable=SC2086 # $target may name several objects
kmake "$out" "$arch" $target
note "built ${out#"$TOP"/}/$image in $(( $(date +%s) - start ))s"

# The bench kernel's benchmark-only module (bench/notify_bench), built out of
# tree in a copy, so that no objects land in the repository.
ext=
if [ "$variant" = bench ] && grep -qx 'CONFIG_MODULES=y' "$out/.config"; then
	ext=$out/extmod/notify_bench
	rm -rf "$ext"
	mkdir -p "$ext"
	cp "$TOP"/bench/notify_bench/* "$ext/"
	kmake "$out" "$arch" M="$ext" modules
fi

# The module metadata the guest's modprobe reads (modules.builtin with its
# aliases, and the modules of a CONFIG_MODULES kernel), and the kernel's
# config as a distribution installs it (/boot/config-<release>, which LTP's
# kconfig checks read), as an initramfs that qemu.sh appends to the guest
# image.
if [ "$variant" != zsmalloc32 ] && [ -f "$out/modules.builtin" ]; then
	rel=$(cat "$out/include/config/kernel.release")
	mroot=$out/modroot
	rm -rf "$mroot"
	mkdir -p "$mroot/lib/modules/$rel" "$mroot/boot"
	cp "$out/.config" "$mroot/boot/config-$rel"
	if grep -qx 'CONFIG_MODULES=y' "$out/.config"; then
		kmake "$out" "$arch" modules_install INSTALL_MOD_PATH="$mroot" INSTALL_MOD_STRIP=1 >/dev/null
		[ -z "$ext" ] || kmake "$out" "$arch" M="$ext" modules_install \
			INSTALL_MOD_PATH="$mroot" INSTALL_MOD_STRIP=1 >/dev/null
		depmod -b "$mroot" "$rel" || die "command failed: depmod -b $mroot $rel"
		rm -f "$mroot/lib/modules/$rel/build"
	else
		cp "$out/modules.builtin" "$out/modules.builtin.modinfo" "$mroot/lib/modules/$rel/"
		: >"$mroot/lib/modules/$rel/modules.order"
		depmod -b "$mroot" "$rel" || die "command failed: depmod -b $mroot $rel"
	fi
	(cd "$mroot" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) \
		>"$out/modules.cpio.gz"
fi
