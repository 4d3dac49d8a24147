#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Static gates: checkpatch --strict on every patch in the series and on every
# new C and Rust file of the overlay (for Rust: line length, whitespace, SPDX); rustfmt over the Rust code; clippy (CLIPPY=1,
# which also enforces a SAFETY comment on every unsafe block) and rustdoc over
# our Rust files; no raw bindings in the driver and the samples; the
# compile-fail tests of tests/compile_fail (scripts/compile-fail.sh). The Rust
# gates need a configured (compile-fail: built) arm64 tree, which make test has
# by then.
#
# Usage: check.sh [--results FILE]
. "$(dirname "$0")/lib.sh"

results=/dev/null
[ "${1:-}" = --results ] && results=$2
toolchain_env
fails=0
rec() {
	result "$results" "$1" "check:$2"
	[ "$1" = PASS ] || { echo "check: $2 FAILED" >&2; fails=$((fails + 1)); }
}

checkpatch() {
	# The assembled tree has checkpatch's data files (spelling, const structs).
	# The ignore list (lib.sh) is shared with series-check.sh.
	(cd "$SRC" && perl scripts/checkpatch.pl --strict --quiet --no-summary \
		--ignore "$CHECKPATCH_IGNORE" "$@")
}

if [ -f "$TOP/patches/series" ]; then
	while read -r p _; do
		case "$p" in ''|'#'*) continue ;; esac
		if out=$(checkpatch "$TOP/patches/$p" 2>&1) && [ -z "$out" ]; then
			rec PASS "checkpatch:$p"
		else
			echo "$out"
			rec FAIL "checkpatch:$p"
		fi
	done <"$TOP/patches/series"
fi

while read -r f; do
	[ -n "$f" ] || continue
	if out=$(checkpatch --file "$SRC/$f" 2>&1) && [ -z "$out" ]; then
		rec PASS "checkpatch:$f"
	else
		echo "$out"
		rec FAIL "checkpatch:$f"
	fi
done < <(cd "$TOP" && find mm drivers samples rust lib include -name '*.[ch]' -o -name '*.rs' 2>/dev/null |
	sort)

if [ -f "$BUILD/arm64/.config" ]; then
	if kmake "$BUILD/arm64" arm64 rustfmtcheck; then
		rec PASS rustfmt
	else
		rec FAIL rustfmt
	fi
else
	rec FAIL "rustfmt (no configured arm64 tree: make kernel ARCH=arm64)"
fi
# Our Rust files, as paths in the tree: warnings that name them fail the gates.
ours=$(cd "$TOP" && find rust drivers samples -name '*.rs' 2>/dev/null | sort || true)
ours_re=$(echo "$ours" | sed 's/[.]/[.]/g' | paste -sd'|')

# Unsafe code lives in rust/kernel only.
raw=$(cd "$TOP" && grep -rn 'bindings::\|unsafe' drivers/block/rzram samples/rust 2>/dev/null || true)
if [ -z "$raw" ]; then
	rec PASS "no-unsafe-outside-rust-kernel"
else
	echo "$raw"
	rec FAIL "no-unsafe-outside-rust-kernel"
fi

# Compile-fail tests (tests/compile_fail/, one result per file): the kernel's
# doctests cannot be compile_fail, so the type-level guarantees of our
# abstractions are checked against the arm64 kernel crate here.
if [ -f "$BUILD/arm64/rust/libkernel.rmeta" ]; then
	cf=$(bash "$TOP/scripts/compile-fail.sh" arm64 2>&1) || echo "$cf"
	n=0
	while read -r res name; do
		case "$res $name" in
		'PASS compile-fail:'* | 'FAIL compile-fail:'*)
			rec "$res" "$name"
			n=$((n + 1))
			;;
		esac
	done <<<"$cf"
	[ $n -gt 0 ] || rec FAIL "compile-fail (no result; see scripts/compile-fail.sh's output above)"
else
	rec FAIL "compile-fail (no built arm64 kernel crate: make kernel ARCH=arm64)"
fi

if [ -f "$BUILD/arm64/.config" ]; then
	# A tree of its own with the test kernel's config, so that CLIPPY=1 does
	# not rebuild the test kernel's Rust objects.
	cdir=$BUILD/arm64-clippy
	mkdir -p "$cdir"
	cmp -s "$BUILD/arm64/.config" "$cdir/.config" || cp "$BUILD/arm64/.config" "$cdir/.config"
	targets=(rust/)
	for d in samples/rust drivers/block/rzram; do
		[ -d "$TOP/$d" ] && targets+=("$d/")
	done
	kmake "$cdir" arm64 olddefconfig >/dev/null
	# rust_gate NAME MAKE-ARGS...: build, then fail on any warning naming our files.
	rust_gate() {
		local name=$1 log=$BUILD/logs/$1.log warn
		shift
		if kmake "$cdir" arm64 "$@" >"$log" 2>&1; then
			warn=$(grep -A6 -E '^(warning|error)' "$log" | grep -E -B3 "$ours_re" || true)
			if [ -z "$warn" ]; then
				rec PASS "$name"
			else
				echo "$warn"
				rec FAIL "$name"
			fi
		else
			tail -40 "$log"
			rec FAIL "$name (build failed; build/logs/$name.log)"
		fi
	}
	rust_gate clippy CLIPPY=1 "${targets[@]}"
	rust_gate rustdoc rustdoc
else
	rec FAIL "clippy, rustdoc (no configured arm64 tree: make kernel ARCH=arm64)"
fi
[ $fails = 0 ]
