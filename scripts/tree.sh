#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Assemble the kernel tree: pristine extract (committed and tagged), then the
# patches in patches/series applied with git am, then the overlay (our new
# files at their kernel paths) copied in.
#
# Incremental: the extract happens once; the series is re-applied only when
# the series or a patch changed; the overlay copy touches only files whose
# content differs, so kbuild rebuilds only what changed.
#
# Usage: tree.sh [--tarball T] [--patches DIR] [--overlay DIR] [--dest DIR]
. "$(dirname "$0")/lib.sh"

tarball=$KSRC_TARBALL
patchdir=$TOP/patches
overlay=$TOP
dest=$SRC
while [ $# -gt 0 ]; do
	case "$1" in
	--tarball) tarball=$2; shift 2 ;;
	--patches) patchdir=$2; shift 2 ;;
	--overlay) overlay=$2; shift 2 ;;
	--dest) dest=$2; shift 2 ;;
	*) die "tree.sh: unknown argument '$1'" ;;
	esac
done

state=$dest/.git/rzram
g() { git -C "$dest" -c user.name=rzram-tree -c user.email=rzram-tree@localhost \
	-c advice.detachedHead=false "$@"; }

# 1. Pristine extract, once.
if ! g rev-parse -q --verify refs/tags/pristine >/dev/null 2>&1; then
	[ -f "$tarball" ] || die "kernel tarball $tarball not found (make deps installs $KSRC_PKG)"
	pristine_extract "$tarball" "$dest"
fi
mkdir -p "$state"

# 2. The series.
series=$patchdir/series
patches=()
if [ -f "$series" ]; then
	while read -r p _; do
		case "$p" in ''|'#'*) continue ;; esac
		[ -f "$patchdir/$p" ] || die "patches/series lists $p, which does not exist"
		patches+=("$p")
	done <"$series"
fi
want=$(hash_files "$series" "${patches[@]/#/$patchdir/}")
have=$(cat "$state/series-hash" 2>/dev/null || true)
if [ "$want" != "$have" ]; then
	rm -f "$state/series-hash"
	g am --abort >/dev/null 2>&1 || true
	g checkout -q -f --detach pristine
	for p in "${patches[@]}"; do
		if ! out=$(g am -q "$patchdir/$p" 2>&1); then
			echo "$out" >&2
			echo "--- hunks that do not apply:" >&2
			g apply --check -v "$patchdir/$p" 2>&1 | grep -E '^(error|Checking|Hunk)' >&2 || true
			g am --abort >/dev/null 2>&1 || true
			die "patch $p does not apply (see the hunks above)"
		fi
	done
	[ ${#patches[@]} -eq 0 ] || note "applied ${#patches[@]} patch(es) from $(basename "$patchdir")/series"
	echo "$want" >"$state/series-hash"
fi

# 3. The overlay: new files only; a file upstream already has is changed by a
# patch, never shadowed.
manifest=$(mktemp)
trap 'rm -f "$manifest"' EXIT
overlay_files "$overlay" >"$manifest"
shadow=
if [ -s "$manifest" ]; then
	shadow=$(xargs git -C "$dest" ls-tree -r --name-only pristine -- <"$manifest")
fi
[ -z "$shadow" ] || die "overlay files exist upstream; change them with a patch instead: $shadow"

if [ -s "$manifest" ]; then
	copied=$(rsync -rc --out-format='%n' --files-from="$manifest" "$overlay/" "$dest/")
	[ -z "$copied" ] || note "overlay: updated $(echo "$copied" | wc -l) file(s)"
fi
# Files that left the overlay leave the tree too.
if [ -f "$state/overlay-manifest" ]; then
	comm -23 "$state/overlay-manifest" "$manifest" | while read -r f; do
		note "overlay: removing $f"
		rm -f "$dest/$f"
	done
fi
cp "$manifest" "$state/overlay-manifest"
