#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Static gates: checkpatch --strict on every patch in the series and on every
# new C file of the overlay; rustfmt over the Rust code (needs a configured
# arm64 tree, which make test has by then).
#
# Usage: check.sh [--results FILE]
. "$(dirname "$0")/lib.sh"

results=/dev/null
[ "${1:-}" = --results ] && results=$2
toolchain_env
fails=0
rec() {
	echo "$1 check:$2" >>"$results"
	[ "$1" = PASS ] || { echo "check: $2 FAILED" >&2; fails=$((fails + 1)); }
}

checkpatch() {
	# The assembled tree has checkpatch's data files (spelling, const structs).
	(cd "$SRC" && perl scripts/checkpatch.pl --strict --quiet --no-summary \
		--ignore FILE_PATH_CHANGES "$@")
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
done < <(cd "$TOP" && find mm drivers samples rust lib include -name '*.[ch]' 2>/dev/null | sort)

if [ -f "$BUILD/arm64/.config" ]; then
	if kmake "$BUILD/arm64" arm64 rustfmtcheck; then
		rec PASS rustfmt
	else
		rec FAIL rustfmt
	fi
else
	rec FAIL "rustfmt (no configured arm64 tree: make kernel ARCH=arm64)"
fi
[ $fails = 0 ]
