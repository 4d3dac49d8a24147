#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install the toolchain and guest-image prerequisites. Idempotent: when all is
# present it only checks and returns. Only package registries are used.
. "$(dirname "$0")/lib.sh"

DEB_PKGS="$KSRC_PKG rustc-web rust-web-src rust-web-clippy rustfmt-web
clang-$LLVM_VER lld-$LLVM_VER llvm-$LLVM_VER libclang-$LLVM_VER-dev
qemu-system-arm qemu-system-x86 gcc-aarch64-linux-gnu libc6-dev-arm64-cross
gcc libc6-dev ccache flex bison bc libelf-dev libssl-dev cpio python3 rsync
xz-utils git binutils gzip make perl python3-ply python3-git gdb-multiarch"

# run CMD...: run a command, naming it if it fails.
run() {
	"$@" || die "command failed (exit $?): $*"
}

missing=()
for p in $DEB_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done

need_update=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	note "adding the arm64 architecture for guest packages"
	run dpkg --add-architecture arm64
	need_update=1
fi
if [ -z "$(apt-cache policy busybox-static:arm64 2>/dev/null | awk '/Candidate:/ && $2 != "(none)"')" ]; then
	need_update=1
fi
if [ ${#missing[@]} -gt 0 ] || [ $need_update = 1 ]; then
	note "apt-get update"
	run apt-get update -q
fi
if [ ${#missing[@]} -gt 0 ]; then
	note "installing: ${missing[*]}"
	run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

[ -f "$KSRC_TARBALL" ] || die "$KSRC_PKG is installed but $KSRC_TARBALL is missing (dpkg -L $KSRC_PKG)"
[ -x "$RUSTC" ] || die "$RUSTC missing: install rustc-web"
[ -d "$($RUSTC --print sysroot)/lib/rustlib/src/rust/library" ] ||
	die "rust-web-src missing: $($RUSTC --print sysroot)/lib/rustlib/src/rust/library"

# bindgen-cli into a project-local prefix, built with whatever cargo the
# machine has (it only builds bindgen; the kernel never sees that rustc).
if ! "$BINDGEN" --version 2>/dev/null | grep -qx "bindgen $BINDGEN_VER"; then
	command -v cargo >/dev/null || die "cargo not found: needed to install bindgen-cli $BINDGEN_VER"
	note "cargo install bindgen-cli $BINDGEN_VER into $TOOLS"
	mkdir -p "$TOOLS"
	# A machine-wide target dir lets a fresh clone relink instead of rebuild.
	run env CARGO_TARGET_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/rzram/cargo-target" \
		cargo install --locked --quiet --root "$TOOLS" "bindgen-cli@$BINDGEN_VER"
fi

mkdir -p "$BUILD"
touch "$BUILD/.deps-ok"
