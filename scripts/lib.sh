# SPDX-License-Identifier: GPL-2.0
# Common settings for the rzram scripts. Sourced, never run.
#
# Everything that pins the toolchain lives here, so that every kernel make
# (ours, kunit.py's, merge_config.sh's) sees the same compilers.

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
SRC=$BUILD/linux
FRAG=$TOP/.config.fragments
JOBS=${JOBS:-$(nproc)}
SUPPORTED_ARCHES="arm64 x86_64"

# Kernel version we build on: Debian's linux-source-6.12.
KSRC_PKG=linux-source-6.12
KSRC_TARBALL=/usr/src/linux-source-6.12.tar.xz

# Toolchain pins (see README.md "Toolchain").
LLVM_VER=19
BINDGEN_VER=0.69.5
TOOLS=$BUILD/tools
BINDGEN=$TOOLS/bin/bindgen
RUSTC=/usr/bin/rustc
RUSTDOC=/usr/bin/rustdoc
RUSTFMT=/usr/bin/rustfmt
CLIPPY_DRIVER=/usr/bin/clippy-driver
CCACHE_CC=/usr/lib/ccache/clang-$LLVM_VER

die() { echo "error: $*" >&2; exit 1; }
note() { echo ">>> $*" >&2; }

llvm_bindir() {
	if command -v llvm-config-$LLVM_VER >/dev/null 2>&1; then
		llvm-config-$LLVM_VER --bindir
	else
		echo /usr/lib/llvm-$LLVM_VER/bin
	fi
}

# Export the environment every kernel make runs in. The llvm-19 tools come
# first on PATH and the Debian rustc is named explicitly, so neither an older
# clang nor the rustup rustc (which has no rust-src) can be picked up.
toolchain_env() {
	PATH="$(llvm_bindir):$TOOLS/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	export PATH
	export LLVM=1
	export RUSTC RUSTDOC RUSTFMT CLIPPY_DRIVER BINDGEN
	export HOSTRUSTC=$RUSTC
	RUST_LIB_SRC="$($RUSTC --print sysroot)/lib/rustlib/src/rust/library"
	export RUST_LIB_SRC
	export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
	# Fresh clones live at different paths: hash relative to the tree.
	export CCACHE_BASEDIR=$BUILD
	export CCACHE_NOHASHDIR=1
	export CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
	export KBUILD_BUILD_USER=rzram KBUILD_BUILD_HOST=rzram
	export KBUILD_BUILD_TIMESTAMP="2024-11-17"
}

# result FILE STATUS NAME: the one writer of a results file (make test's
# build/results.txt, and those of make pi and the scripts make test runs):
# one line "STATUS NAME", STATUS being PASS, FAIL or SKIP, which make test's
# summary counts. FILE may be /dev/null.
result() {
	case "$2" in
	PASS | FAIL | SKIP) ;;
	*) die "result: status '$2' is not PASS, FAIL or SKIP" ;;
	esac
	[ -n "${3:-}" ] || die "result: a $2 without a name"
	echo "$2 $3" >>"$1"
}

# Map our arch names to the kernel's ARCH= values.
karch() {
	case "$1" in
	arm64) echo arm64 ;;
	x86_64) echo x86_64 ;;
	arm) echo arm ;;
	*) die "unsupported ARCH '$1' (supported: $SUPPORTED_ARCHES; 'arm' only for the 32-bit zsmalloc compile)" ;;
	esac
}

check_arch() {
	local a
	for a in $SUPPORTED_ARCHES; do [ "$a" = "$1" ] && return 0; done
	die "unsupported ARCH '$1' (supported: $SUPPORTED_ARCHES)"
}

# The make variables that pin the toolchain, one per line (kunit.py wants
# them as separate --make_options).
kmake_vars() {
	# ccache through Debian's masquerade link: one word, since rustc also
	# gets HOSTCC as its linker.
	printf '%s\n' LLVM=1 "CC=$CCACHE_CC" "HOSTCC=$CCACHE_CC" \
		"RUSTC=$RUSTC" "RUSTDOC=$RUSTDOC" "RUSTFMT=$RUSTFMT" \
		"HOSTRUSTC=$RUSTC" "BINDGEN=$BINDGEN" "CLIPPY_DRIVER=$CLIPPY_DRIVER"
}

# kmake OUTDIR ARCH [make args...]: make in the assembled tree, out of tree.
kmake() {
	local out=$1 arch=$2
	shift 2
	local -a vars
	mapfile -t vars < <(kmake_vars)
	make -s -C "$SRC" O="$out" ARCH="$(karch "$arch")" -j"$JOBS" "${vars[@]}" "$@"
}

# Top-level directories of the overlay: our new files at their kernel paths,
# which tree.sh copies over the patched tree and series.sh folds into the
# patches that patches/new-files names.
OVERLAY_DIRS="Documentation drivers include lib mm rust samples"

# overlay_files DIR: the overlay's files under DIR, relative to it, sorted.
overlay_files() {
	local d
	for d in $OVERLAY_DIRS; do
		[ -d "$1/$d" ] || continue
		(cd "$1" && find "$d" -type f ! -name '*~' ! -name '.*.swp')
	done | sort
}

# checkpatch.pl's --ignore list for every gate that runs it (check.sh,
# series-check.sh). The tree has no upstream history, so the commit ids that
# Fixes: tags and commit references cite cannot be looked up:
# UNKNOWN_COMMIT_ID.
CHECKPATCH_IGNORE=FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID

# check_to RESULTS LOG NAME CMD...: run CMD with its output in LOG, and
# record NAME as a PASS or a FAIL in RESULTS; a failure's output goes to
# stderr too (make pi's checks).
check_to() {
	local results=$1 log=$2 name=$3
	shift 3
	if "$@" >"$log" 2>&1; then
		result "$results" PASS "$name"
	else
		result "$results" FAIL "$name"
		sed 's/^/  | /' "$log" >&2
	fi
}

# Hash of a list of files' names and contents (missing files hash as absent).
hash_files() {
	local f
	for f in "$@"; do
		echo "== $f"
		if [ -f "$f" ]; then cat "$f"; fi
	done | sha256sum | cut -d' ' -f1
}

# pristine_extract TARBALL DEST: extract a kernel tarball into DEST as a git
# repository whose one commit, tagged "pristine", is the whole tree.
pristine_extract() {
	local tarball=$1 dest=$2
	pg() { git -C "$dest" -c user.name=rzram-tree -c user.email=rzram-tree@localhost "$@"; }
	note "extracting $(basename "$tarball") into ${dest#"$TOP"/}"
	rm -rf "$dest"
	mkdir -p "$dest"
	tar -xf "$tarball" -C "$dest" --strip-components=1
	pg init -q
	# Debian's linux-source .gitignore ignores the whole top level: force.
	pg add -A -f
	pg commit -q -m "pristine $(basename "$tarball")"
	pg tag pristine
}

# The in-guest tests of make test, per architecture, in boots by theme: each
# boot is a QEMU run of its own, short enough that its time limit leaves room
# for a machine at half the speed (GUEST_BOOT_LIMIT), and each test inside it
# has a limit of its own (guest/init: 300 s, or its "# timeout:" line).
# arm64, the architecture rzram is for (the Raspberry Pi 4's core), runs every
# theme, with the C zram next to rzram (the ABI, bad-input, torture and
# regression tests compare them). x86_64 has rzram alone, a module in compat
# mode: make test boots there what x86_64 adds (the compat module and the
# tools that drive zram, CPU hotplug) with the torture test, which runs every
# I/O, sysfs, hotplug and swap path at once on the second architecture. The
# themes' tests are the same Rust code on both; RZRAM_X86_64_THEMES=1 boots
# every theme on x86_64 too (as make kcsan always does), at about 14 more
# minutes on a fast machine.
# Each boot's tests are listed one per line in tests/guest/boots/BOOT.list,
# or ARCH-BOOT.list for one architecture's (arm64's swap boot, x86_64's
# compat and tools boots).
GUEST_BOOTS="basic swap stress writeback"
GUEST_BOOTS_arm64=$GUEST_BOOTS
GUEST_BOOTS_x86_64="compat tools"
if [ "${RZRAM_X86_64_THEMES:-0}" = 1 ]; then
	GUEST_BOOTS_x86_64="$GUEST_BOOTS compat tools"
fi
# Each boot's time limit in seconds: at least twice what the slowest boot
# needs on the fast machine (docs/testing.md has the figures).
GUEST_BOOT_LIMIT=1500

# guest_tests ARCH BOOT: the tests of one boot, comma-separated, from its
# list: tests/guest/boots/ARCH-BOOT.list if there is one, else BOOT.list; one
# name per line, '#' to the end of a line a comment.
guest_tests() {
	local f=$TOP/tests/guest/boots/$1-$2.list
	[ -f "$f" ] || f=$TOP/tests/guest/boots/$2.list
	[ -f "$f" ] || die "no test list for the $1 boot $2 (tests/guest/boots/$2.list)"
	sed 's/#.*//' "$f" | awk 'NF { print $1 }' | paste -sd, -
}

# guest_tests_all ARCH [BOOTS]: the in-guest tests of ARCH's boots (default:
# make test's), in boot order, each once (make kcsan boots them in one), or
# GUEST_TESTS when that is set.
guest_tests_all() {
	local b v t all=,
	if [ -n "${GUEST_TESTS:-}" ]; then
		echo "$GUEST_TESTS"
		return
	fi
	v=GUEST_BOOTS_$1
	for b in ${2:-${!v}}; do
		for t in $(guest_tests "$1" "$b" | tr ',' ' '); do
			case "$all" in *,"$t",*) ;; *) all=$all$t, ;; esac
		done
	done
	all=${all#,}
	echo "${all%,}"
}

# debian_arm64_config: prints the path of Debian's arm64 kernel configuration
# (the "arm64" flavour of the linux-config-6.12 package, which make pi starts
# from), downloading and unpacking the package into build/pi-debian once.
# The package's version goes to build/pi-debian/version.
debian_arm64_config() {
	local d=$BUILD/pi-debian cfg
	cfg=$d/config-arm64
	if [ ! -s "$cfg" ]; then
		rm -rf "$d"
		mkdir -p "$d/x"
		(cd "$d" && apt-get download -q linux-config-6.12:arm64 >/dev/null 2>&1) ||
			die "command failed: apt-get download linux-config-6.12:arm64 (run: apt-get update)"
		dpkg-deb -x "$d"/linux-config-6.12_*_arm64.deb "$d/x"
		dpkg-deb -f "$d"/linux-config-6.12_*_arm64.deb Version >"$d/version"
		xz -dc "$d/x/usr/src/linux-config-6.12/config.arm64_none_arm64.xz" >"$cfg.tmp"
		mv "$cfg.tmp" "$cfg"
	fi
	echo "$cfg"
}
