#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/tree.sh on a scratch tarball and a sample series: patches and the
# overlay land, re-runs copy only what changed, a removed overlay file leaves,
# a patch that does not apply is named with its hunk, and an overlay file that
# would shadow an upstream file is refused.
. "$(dirname "$0")/lib.sh"
tree() { bash "$top/scripts/tree.sh" --tarball "$tmp/k.tar.xz" --patches "$tmp/patches" \
	--overlay "$tmp/overlay" --dest "$tmp/tree" "$@"; }
gw() { git -C "$tmp/work" -c user.name=t -c user.email=t@localhost "$@"; }

# A tiny "kernel" and a two-patch series made from it with format-patch.
mkdir -p "$tmp/src/linux-x/mm" "$tmp/patches" "$tmp/overlay/drivers/new"
printf 'obj-y += mm/\n' >"$tmp/src/linux-x/Makefile"
seq 1 40 | sed 's/^/int line_/; s/$/;/' >"$tmp/src/linux-x/mm/a.c"
tar -C "$tmp/src" -cJf "$tmp/k.tar.xz" linux-x
cp -r "$tmp/src/linux-x" "$tmp/work"
gw init -q && gw add -A && gw commit -qm base
sed -i 's/^int line_10;/int line_10_patched;/' "$tmp/work/mm/a.c"
gw commit -qam "mm: patch line 10"
sed -i 's/^int line_30;/int line_30_patched;/' "$tmp/work/mm/a.c"
gw commit -qam "mm: patch line 30"
gw format-patch -q -o "$tmp/patches" HEAD~2
(cd "$tmp/patches" && ls -- *.patch) >"$tmp/patches/series"
echo 'int new_file;' >"$tmp/overlay/drivers/new/x.c"

if out=$(tree 2>&1); then ok "assembles"; else bad "assembly failed: $out"; fi
grep -q line_10_patched "$tmp/tree/mm/a.c" && grep -q line_30_patched "$tmp/tree/mm/a.c" &&
	ok "series applied" || bad "series not applied"
cmp -s "$tmp/overlay/drivers/new/x.c" "$tmp/tree/drivers/new/x.c" && ok "overlay copied" || bad "overlay missing"
[ "$(git -C "$tmp/tree" log --format=%s | head -n1)" = "mm: patch line 30" ] &&
	ok "patches are commits on the pristine tag" || bad "tree history wrong"

touch -d '2001-01-01' "$tmp/tree/drivers/new/x.c" "$tmp/tree/mm/a.c"
out=$(tree 2>&1)
[ "$(stat -c %Y "$tmp/tree/drivers/new/x.c")" = "$(stat -c %Y "$tmp/tree/mm/a.c")" ] &&
	[ "$(stat -c %Y "$tmp/tree/mm/a.c")" = "$(date -d 2001-01-01 +%s)" ] &&
	ok "no-change re-run touches nothing" || bad "no-change re-run rewrote files: $out"

echo 'int new_file_v2;' >"$tmp/overlay/drivers/new/x.c"
echo 'int other;' >"$tmp/overlay/drivers/new/y.c"
out=$(tree 2>&1)
cmp -s "$tmp/overlay/drivers/new/x.c" "$tmp/tree/drivers/new/x.c" && [ -f "$tmp/tree/drivers/new/y.c" ] &&
	echo "$out" | grep -q 'updated 2 file' && ok "edited overlay files recopied" || bad "edit not recopied: $out"

rm "$tmp/overlay/drivers/new/y.c"
tree >/dev/null 2>&1
[ ! -e "$tmp/tree/drivers/new/y.c" ] && ok "removed overlay file leaves the tree" || bad "stale overlay file"

# A patch whose context is not in the tree.
cat >"$tmp/patches/0003-mm-broken.patch" <<'PATCH'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: t <t@localhost>
Subject: [PATCH] mm: broken

---
 mm/a.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/mm/a.c b/mm/a.c
--- a/mm/a.c
+++ b/mm/a.c
@@ -20,3 +20,3 @@
 int no_such_line_19;
-int no_such_line_20;
+int no_such_line_20_patched;
 int no_such_line_21;
--
2.39.5
PATCH
echo 0003-mm-broken.patch >>"$tmp/patches/series"
if out=$(tree 2>&1); then
	bad "broken patch was not reported"
else
	echo "$out" | grep -q '0003-mm-broken.patch' && ok "broken patch named" || bad "patch not named: $out"
	echo "$out" | grep -q 'mm/a.c:20' && ok "failing hunk named" || bad "hunk not named: $out"
fi
sed -i '/0003-mm-broken.patch/d' "$tmp/patches/series"
rm "$tmp/patches/0003-mm-broken.patch"
tree >/dev/null 2>&1 && grep -q line_30_patched "$tmp/tree/mm/a.c" &&
	ok "recovers once the series is fixed" || bad "no recovery after fixing the series"

mkdir -p "$tmp/overlay/mm"
echo 'int shadow;' >"$tmp/overlay/mm/a.c"
if out=$(tree 2>&1); then bad "shadowing overlay accepted"; else
	echo "$out" | grep -q 'mm/a.c' && ok "overlay shadowing an upstream file refused" || bad "shadow error unclear: $out"
fi
[ $fails = 0 ]
