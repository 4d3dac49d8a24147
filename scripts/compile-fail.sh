#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Compile-fail tests of the kernel crate's type-level guarantees.
#
# The kernel's doctest flow turns every doctest of the kernel crate into a
# KUnit case and cannot run `compile_fail` ones, so the guarantees that a
# mistake does not compile are checked here instead: each tests/compile_fail/
# *.rs is a small library crate that rustc checks against the kernel crate
# already built in build/ARCH, with the flags kbuild used for an in-tree Rust
# module object (taken from its .cmd file), emitting only metadata.
#
# Each file starts with one or more header lines "// expect: TEXT".
#   fail_NAME.rs must not compile, and rustc's output must contain every TEXT
#                (so it fails for the stated reason); pass_NAME.rs, the same
#                code without the mistake, must exist.
#   pass_NAME.rs must compile without errors or warnings (TEXT is not checked).
#
# Prints "PASS compile-fail:NAME" or "FAIL compile-fail:NAME" per file (NAME
# without .rs), followed on failure by the reason and rustc's output; exits
# non-zero if any file failed.
#
# Usage: compile-fail.sh [-v] [ARCH] (default arm64); -v shows rustc's output
# for every file.
. "$(dirname "$0")/lib.sh"

verbose=
[ "${1:-}" = -v ] && { verbose=1; shift; }
arch=${1:-arm64}
check_arch "$arch"
toolchain_env
obj=$BUILD/$arch
tests=$TOP/tests/compile_fail

[ -f "$obj/rust/libkernel.rmeta" ] ||
	die "no built kernel crate in $obj (rust/libkernel.rmeta): make kernel ARCH=$arch"

# The command kbuild ran for a Rust object of a module that uses the kernel
# crate: rzram's or the zsmalloc sample's, else any other.
cmdfile=
for f in drivers/block/rzram/.rzram.o.cmd samples/rust/.rust_zsmalloc.o.cmd; do
	[ -f "$obj/$f" ] && { cmdfile=$obj/$f; break; }
done
if [ -z "$cmdfile" ]; then
	cmdfile=$(cd "$obj" && grep -rlsF --include='.*.o.cmd' -e '--extern kernel --crate-type rlib' \
		samples drivers 2>/dev/null | head -1 || true)
	[ -n "$cmdfile" ] && cmdfile=$obj/$cmdfile
fi
[ -n "$cmdfile" ] ||
	die "no kbuild command of a Rust module object in $obj (.*.o.cmd): make kernel ARCH=$arch"

saved=$(sed -n 's/^savedcmd_[^ ]* := //p' "$cmdfile")
source=$(sed -n 's/^source_[^ ]* := //p' "$cmdfile")
[ -n "$saved" ] && [ -n "$source" ] || die "cannot read the command of $cmdfile"
# Only the rustc command: objtool (x86_64) follows it after a ';'.
saved=${saved%%;*}
# kbuild's own quoting (-Zcrate-attr='feature(...)'); the file is our build's.
eval "words=($saved)"

# Split into environment, compiler and flags; drop what names kbuild's source
# and outputs.
env_words=()
flags=()
compiler=
skip=
for w in "${words[@]}"; do
	if [ -n "$skip" ]; then
		skip=
		continue
	fi
	if [ -z "$compiler" ]; then
		case "$w" in
		RUST_MODFILE=*) ;;
		[A-Za-z_]*=*) env_words+=("$w") ;;
		*) compiler=$w ;;
		esac
		continue
	fi
	case "$w" in
	--crate-name | --out-dir | --emit | -o) skip=1 ;;
	--crate-name=* | --out-dir=* | --emit=*) ;;
	"$source") ;;
	*) flags+=("$w") ;;
	esac
done
[ -n "$compiler" ] || die "no compiler in the command of $cmdfile"
[ "$compiler" = "$RUSTC" ] ||
	note "kbuild ran $compiler; checking with the pinned $RUSTC"

newer=$(find "$SRC/rust/kernel" -name '*.rs' -newer "$obj/rust/libkernel.rmeta" 2>/dev/null | head -3)
[ -z "$newer" ] ||
	note "the kernel crate in $obj is older than $(echo "$newer" | paste -sd' '): make kernel ARCH=$arch"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# compile FILE NAME: rustc's output in $tmp/NAME.out; rustc's status.
compile() {
	local crate=compile_fail_$2
	# kbuild runs rustc in the output directory (the flags name ./rust/ and
	# ./include/generated/), with RUSTC_BOOTSTRAP=1 from the top Makefile.
	(cd "$obj" && env "${env_words[@]}" RUSTC_BOOTSTRAP=1 RUST_MODFILE="tests/compile_fail/$2" \
		"$RUSTC" "${flags[@]}" --crate-name "$crate" \
		--emit=metadata="$tmp/lib$crate.rmeta" "$1") >"$tmp/$2.out" 2>&1
}

shopt -s nullglob
files=("$tests"/*.rs)
[ ${#files[@]} -gt 0 ] || die "no tests in $tests"
fails=0
for f in "${files[@]}"; do
	name=$(basename "$f" .rs)
	why=
	mapfile -t expect < <(sed -n '/^\/\/ expect: /!q; s/^\/\/ expect: //p' "$f")
	case "$name" in
	fail_*)
		if [ ${#expect[@]} = 0 ]; then
			why="no '// expect: TEXT' header on the first line"
		elif [ ! -f "$tests/pass_${name#fail_}.rs" ]; then
			why="no control pass_${name#fail_}.rs"
		elif compile "$f" "$name"; then
			why="compiled, but must fail with: ${expect[*]}"
		else
			for e in "${expect[@]}"; do
				grep -qF -e "$e" "$tmp/$name.out" || why="${why:+$why; }rustc's output lacks '$e'"
			done
		fi
		;;
	pass_*)
		if ! compile "$f" "$name"; then
			why="does not compile"
		elif grep -q '^warning' "$tmp/$name.out"; then
			why="compiles with warnings"
		fi
		;;
	*)
		why="not named fail_*.rs or pass_*.rs"
		;;
	esac
	if [ -z "$why" ]; then
		echo "PASS compile-fail:$name"
		[ -z "$verbose" ] || sed 's/^/  | /' "$tmp/$name.out"
	else
		echo "FAIL compile-fail:$name"
		echo "  $f: $why"
		[ -f "$tmp/$name.out" ] && sed 's/^/  | /' "$tmp/$name.out"
		fails=$((fails + 1))
	fi
done
[ $fails = 0 ]
