#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make series-check: apply the exported sub-series (make series, build/series)
# in order on pristine 6.12, one patch at a time, as a maintainer would, and
# after every patch:
#  - build: arm64, LLVM=1, incremental, out of tree in build/series-check/arm64,
#    with base + qemu-arm64 + rzram + kunit.kunitconfig, so that the new code
#    and its tests are built. Options for code not introduced yet do not
#    survive Kconfig, as expected, so there is no config-check. Kconfig is
#    re-run when a patch touches a Kconfig file.
#  - checkpatch: checkpatch.pl --strict on the patch, with check.sh's --ignore
#    list (lib.sh);
#  - kernel-doc: kernel-doc -Wall -none on every .c and .h file the patch
#    touches. A warning the file did not have before the patch fails; the
#    ones it already had (upstream's own) are counted.
# One PASS/FAIL line per patch per check, then "N passed, N failed" and the
# elapsed time. A patch that does not apply stops the run.
#
# The tree is build/series-check/linux: a worktree of build/linux at its
# pristine commit, or an extract of the tarball when there is no build/linux.
#
# SERIES_CHECK_NOBUILD=1 skips the builds (and the toolchain).
#
# Usage: series-check.sh [--series DIR]
. "$(dirname "$0")/lib.sh"

t0=$(date +%s)
sdir=$BUILD/series
nobuild=${SERIES_CHECK_NOBUILD:-0}
while [ $# -gt 0 ]; do
	case "$1" in
	--series) sdir=$2; shift 2 ;;
	*) die "series-check.sh: unknown argument '$1'" ;;
	esac
done
mapfile -t subs < <(find "$sdir" -mindepth 1 -maxdepth 1 -type d -name '[0-9][0-9]-*' 2>/dev/null | sort)
[ ${#subs[@]} -gt 0 ] || die "no exported series in ${sdir#"$TOP"/}: make series"

base=$BUILD/series-check
wt=$base/linux
out=$base/arm64
logs=$base/logs
mkdir -p "$base" "$logs"
g() { git -C "$wt" -c user.name=rzram-series -c user.email=rzram-series@localhost \
	-c advice.detachedHead=false "$@"; }

# The tree: a git checkout of pristine 6.12 of its own (never a directory
# that git would resolve to an enclosing repository).
wt_ok() {
	[ -e "$wt/.git" ] &&
		[ "$(git -C "$wt" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$wt" && pwd -P)" ] &&
		git -C "$wt" rev-parse -q --verify refs/tags/pristine >/dev/null 2>&1
}
if ! wt_ok; then
	rm -rf "$wt"
	if [ -d "$SRC/.git" ] && git -C "$SRC" rev-parse -q --verify refs/tags/pristine >/dev/null; then
		note "series-check tree: a worktree of ${SRC#"$TOP"/} at pristine"
		git -C "$SRC" worktree prune
		git -C "$SRC" worktree add -q --detach "$wt" pristine
	else
		[ -f "$KSRC_TARBALL" ] || die "kernel tarball $KSRC_TARBALL not found (make deps installs $KSRC_PKG)"
		pristine_extract "$KSRC_TARBALL" "$wt"
	fi
	wt_ok || die "could not set up the series-check tree $wt"
fi
g am --abort >/dev/null 2>&1 || true
g checkout -q -f --detach pristine
g clean -q -f -d

# Also for checkpatch: its spdxcheck.py wants the system python3 (python3-ply).
toolchain_env
if [ "$nobuild" = 0 ]; then
	SRC=$wt
	frags=("$FRAG/base.config" "$FRAG/qemu-arm64.config" "$FRAG/rzram.config" "$FRAG/kunit.kunitconfig")
	mkdir -p "$out"
	kmake "$out" arm64 rustavailable >"$logs/rustavailable.log" 2>&1 ||
		{ cat "$logs/rustavailable.log" >&2; die "Rust is not available for arm64 with this toolchain"; }
	(cd "$wt" && scripts/kconfig/merge_config.sh -m -O "$out" "${frags[@]}") >"$logs/merge.log"
	mv "$out/.config" "$out/.config.requested"
	configured=0
fi

pass=0
fail=0
res() {
	printf '%s %-10s %s\n' "$1" "$2" "$3${4:+ ($4)}"
	if [ "$1" = PASS ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

# kdoc_warnings FILE: kernel-doc's warnings for FILE, without file and line.
kdoc_warnings() {
	(cd "$wt" && perl scripts/kernel-doc -Wall -none "$1" 2>&1 >/dev/null) |
		sed -E 's/^[^:]*:[0-9]+: //' | sort
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stopped=
for sub in "${subs[@]}"; do
	s=$(basename "$sub")
	mapfile -t ps < <(find "$sub" -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name '0000-cover-letter.patch' | sort)
	[ ${#ps[@]} -gt 0 ] || die "$s has no patches"
	for p in "${ps[@]}"; do
		name=$s/$(basename "$p")
		if [ -n "$stopped" ]; then
			res FAIL apply "$name" "not applied: $stopped did not apply"
			continue
		fi
		if ! msg=$(g am -q "$p" 2>&1); then
			echo "$msg"
			g am --abort >/dev/null 2>&1 || true
			res FAIL apply "$name"
			stopped=$name
			continue
		fi
		mapfile -t changed < <(g diff-tree -r --no-commit-id --name-only --diff-filter=AMR HEAD)

		if [ "$nobuild" = 0 ]; then
			log=$logs/${s}-$(basename "$p" .patch).log
			: >"$log"
			kconfig=0
			for f in "${changed[@]}"; do
				case "$(basename "$f")" in Kconfig*) kconfig=1 ;; esac
			done
			if [ "$configured" = 0 ] || [ $kconfig = 1 ]; then
				kmake "$out" arm64 KCONFIG_ALLCONFIG="$out/.config.requested" allnoconfig >>"$log" 2>&1 || true
				configured=1
			fi
			if kmake "$out" arm64 Image >>"$log" 2>&1; then
				# Warnings are shown, not failed: the first build compiles all
				# of upstream too.
				w=$(grep -c 'warning:' "$log" || true)
				[ "$w" = 0 ] || grep -A3 'warning:' "$log" | head -n 40
				res PASS build "$name" "$([ "$w" = 0 ] || echo "$w warning(s), ${log#"$TOP"/}")"
			else
				if grep -qE 'error|warning' "$log"; then
					grep -E -A5 'error|warning' "$log" | head -n 40 || true
				else
					tail -n 40 "$log"
				fi
				res FAIL build "$name" "${log#"$TOP"/}"
			fi
		fi

		if out_cp=$(cd "$wt" && perl scripts/checkpatch.pl --strict --quiet --no-summary \
			--ignore "$CHECKPATCH_IGNORE" "$p" 2>&1) && [ -z "$out_cp" ]; then
			res PASS checkpatch "$name"
		else
			echo "$out_cp"
			res FAIL checkpatch "$name"
		fi

		new=
		old_n=0
		n_c=0
		for f in "${changed[@]}"; do
			case "$f" in *.c | *.h) ;; *) continue ;; esac
			n_c=$((n_c + 1))
			kdoc_warnings "$f" >"$tmp/after"
			: >"$tmp/before"
			if g cat-file -e "HEAD~1:$f" 2>/dev/null; then
				mkdir -p "$tmp/old"
				g show "HEAD~1:$f" >"$tmp/old/$(basename "$f")"
				kdoc_warnings "$tmp/old/$(basename "$f")" >"$tmp/before"
			fi
			old_n=$((old_n + $(comm -12 "$tmp/before" "$tmp/after" | wc -l)))
			added=$(comm -13 "$tmp/before" "$tmp/after" | sed "s|^|$f: |")
			[ -z "$added" ] || new+="$added"$'\n'
		done
		if [ -n "$new" ]; then
			printf '%s' "$new"
			res FAIL kernel-doc "$name"
		elif [ $n_c = 0 ]; then
			res PASS kernel-doc "$name" "no .c or .h file"
		else
			detail="$n_c file(s)"
			[ $old_n = 0 ] || detail+=", $old_n warning(s) they had before"
			res PASS kernel-doc "$name" "$detail"
		fi
	done
done
[ "$nobuild" = 0 ] || note "SERIES_CHECK_NOBUILD=1: builds skipped"
g am --abort >/dev/null 2>&1 || true
t=$(($(date +%s) - t0))
echo "$pass passed, $fail failed"
echo "elapsed: $((t / 60))m$((t % 60))s"
[ $fail = 0 ]
