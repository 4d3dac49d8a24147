#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/series.sh (make series, no build): patches/new-files maps every
# overlay file to exactly one patch, and a file mapped by no patch or by two,
# a glob that matches nothing and a patch the series does not list are
# refused; the export has a cover letter and [PATCH n/m] patches per
# sub-series, creates every overlay file exactly once, and applied in order
# to pristine gives the assembled tree (pristine + patches/series + overlay).
# Takes the pristine files from build/linux, or from the tarball (about 15 s)
# on a fresh clone, where host tests run before make tree.
. "$(dirname "$0")/lib.sh"
series() { bash "$top/scripts/series.sh" --work "$tmp/work" --out "$tmp/out" "$@"; }
gw() { git -C "$tmp/work" -c user.name=t -c user.email=t@localhost -c advice.detachedHead=false "$@"; }

# The map, the series and the overlay as they are.
if out=$(series --map-only 2>&1); then ok "every overlay file is mapped to exactly one patch"; else
	bad "map check failed: $out"
fi

# The same checks on copies, broken one way at a time.
mkdir -p "$tmp/p" "$tmp/o"
cp -r "$top/patches/." "$tmp/p/"
for d in Documentation drivers include lib mm rust samples; do
	[ -d "$top/$d" ] && cp -r "$top/$d" "$tmp/o/"
done
mcheck() { series --map-only --patches "$tmp/p" --overlay "$tmp/o" 2>&1; }
refused() { # refused WHAT PATTERN: the map check fails and names PATTERN
	if out=$(mcheck); then bad "$1 accepted"; else
		if echo "$out" | grep -q -- "$2"; then ok "$1 refused"; else
			bad "$1: error does not name '$2': $out"
		fi
	fi
}
mkdir -p "$tmp/o/mm"
echo 'int unmapped;' >"$tmp/o/mm/unmapped_new.c"
refused "an unmapped overlay file" 'mm/unmapped_new.c is mapped by no patch'
rm "$tmp/o/mm/unmapped_new.c"
last=$(grep -v '^#' "$tmp/p/series" | grep . | tail -n1)
first=$(grep -v '^#' "$tmp/p/series" | grep . | head -n1)
cp "$tmp/p/new-files" "$tmp/map"
echo "$last mm/no_such_file_*.c" >>"$tmp/p/new-files"
refused "a glob that matches nothing" "'mm/no_such_file_\*.c'"
cp "$tmp/map" "$tmp/p/new-files"
f=$(grep -v '^#' "$tmp/map" | grep . | head -n1 | awk '{ print $2 }')
echo "$first $f" >>"$tmp/p/new-files"
refused "a file mapped by two patches" "is mapped by two patches"
cp "$tmp/map" "$tmp/p/new-files"
echo "9999-no-such.patch $f" >>"$tmp/p/new-files"
refused "a patch the series does not list" "9999-no-such.patch is not in"
cp "$tmp/map" "$tmp/p/new-files"

# A file mapped to a later patch than the one that wires it up.
kunit_patch=$(awk '$2 == "mm/zsmalloc_kunit.c" { print $1 }' "$tmp/map")
next_patch=$(grep -v '^#' "$tmp/p/series" | grep . | grep -A1 -xF -- "$kunit_patch" | tail -n1)
if [ -n "$kunit_patch" ] && [ "$next_patch" != "$kunit_patch" ]; then
	awk -v p="$next_patch" '$2 == "mm/zsmalloc_kunit.c" { $1 = p } { print }' "$tmp/map" >"$tmp/p/new-files"
	if out=$(series --patches "$tmp/p" --out "$tmp/late" 2>&1); then bad "a file wired up before its patch accepted"; else
		if echo "$out" | grep -q "$kunit_patch: mm/Makefile adds .*zsmalloc_kunit.o"; then
			ok "a file wired up before its patch refused"
		else
			bad "wiring error unclear: $out"
		fi
	fi
	cp "$tmp/map" "$tmp/p/new-files"
else
	bad "no patch maps mm/zsmalloc_kunit.c, or it is the last one"
fi

# The export.
t0=$(date +%s)
if out=$(series 2>&1); then ok "export ($(($(date +%s) - t0)) s)"; else
	bad "export failed: $out"
	exit 1
fi
mapfile -t secs < <(sed -n 's/^# series: \([a-z0-9][a-z0-9-]*\).*/\1/p' "$top/patches/series" | awk '!seen[$0]++')
mapfile -t dirs < <(find "$tmp/out" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
want=()
for i in "${!secs[@]}"; do want+=("$(printf '%02d' $((i + 1)))-${secs[$i]}"); done
if [ "${dirs[*]}" = "${want[*]}" ]; then ok "one directory per sub-series, in order: ${dirs[*]}"; else
	bad "sub-series directories: '${dirs[*]}', want '${want[*]}'"
fi
for d in "${dirs[@]}"; do
	mapfile -t ps < <(find "$tmp/out/$d" -name '[0-9]*.patch' ! -name 0000-cover-letter.patch -printf '%f\n' | sort)
	m=${#ps[@]}
	c=$tmp/out/$d/0000-cover-letter.patch
	if [ -f "$c" ] && [ "$m" -gt 0 ] && grep -q "^Subject: \[PATCH 0*0/$m\] " "$c" &&
		! grep -q 'SUBJECT HERE\|BLURB HERE' "$c" && grep -q '^Based on Linux ' "$c"; then
		ok "$d: cover letter (subject, body, base) and $m patch(es)"
	else
		bad "$d: no cover letter, no patches, or an unfilled cover"
	fi
	n=0
	for p in "${ps[@]}"; do
		n=$((n + 1))
		grep -q "^Subject: \[PATCH 0*$n/$m\] " "$tmp/out/$d/$p" || bad "$d/$p is not [PATCH $n/$m]"
	done
done

# Independently of series.sh's own check: each overlay file is created by
# exactly one exported patch, and pristine + the export (git am) equals
# pristine + patches/series + the overlay.
# shellcheck source=/dev/null # lib.sh, for overlay_files
mapfile -t files < <(. "$top/scripts/lib.sh" && overlay_files "$top")
cat "$tmp"/out/*/[0-9]*.patch | sed -n 's|^diff --git a/\(.*\) b/.*|\1|p' | sort >"$tmp/touched"
dup=0
for f in "${files[@]}"; do
	[ "$(grep -cxF -- "$f" "$tmp/touched")" = 1 ] || { echo "  $f: in $(grep -cxF -- "$f" "$tmp/touched") patches"; dup=1; }
done
if [ $dup = 0 ]; then ok "each of ${#files[@]} overlay files is in exactly one exported patch"; else
	bad "overlay files not in exactly one exported patch"
fi

gw checkout -q -f --detach pristine && gw clean -q -fdx
while read -r p _; do
	case "$p" in '' | '#'*) continue ;; esac
	gw am -q "$top/patches/$p" 2>/dev/null || { bad "patches/$p does not apply"; break; }
done <"$top/patches/series"
for f in "${files[@]}"; do
	mkdir -p "$tmp/work/$(dirname "$f")"
	cp "$top/$f" "$tmp/work/$f"
done
gw add -A -f && gw commit -q -m assembled
assembled=$(gw rev-parse 'HEAD^{tree}')
gw checkout -q --detach pristine
for p in "$tmp"/out/*/[0-9]*.patch; do
	case "$p" in */0000-cover-letter.patch) continue ;; esac
	gw am -q "$p" 2>/dev/null || { bad "exported ${p#"$tmp"/out/} does not apply"; break; }
done
if [ "$(gw rev-parse 'HEAD^{tree}')" = "$assembled" ]; then
	ok "pristine + the exported sub-series = pristine + patches/series + overlay"
else
	bad "exported tree differs from the assembled one: $(gw diff --stat "$assembled" HEAD | tail -n1)"
fi
[ $fails = 0 ]
