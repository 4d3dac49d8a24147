#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make series: export the work as git format-patch sub-series against 6.12,
# each patch self-contained: the patches of patches/series, with the new files
# of the overlay folded into the patch that patches/new-files names for each.
#
# patches/series splits the patches into sub-series ("# series: NAME" lines).
# Each goes to OUT/NN-NAME/ as [PATCH n/m] files after a cover letter whose
# subject and body come from patches/covers/NAME.txt (first line: subject);
# the base and prerequisites (the sub-series before it) are added to it.
#
# How: a scratch repository (WORK) holds pristine 6.12's versions of the files
# the patches touch, from build/linux's pristine commit or, on a fresh clone,
# from the tarball; the exported patches are the same as from a full tree.
#  1. assembled: pristine + patches/series (git am, tree.sh's order) + the
#     whole overlay, the content tree.sh builds;
#  2. export: per sub-series, per patch, the patch's commit (cherry-picked,
#     since sub-series may reorder the apply order) amended with its files;
#     what it wires up (a Rust mod, a quoted #include, a Kconfig source, a
#     kbuild object or directory) must exist once it is applied;
#  3. format-patch per sub-series; then pristine + every exported patch, in
#     order (git am), must give the assembled tree exactly.
# Any mismatch, unmapped or doubly mapped overlay file, glob that matches
# nothing, file wired up before its patch, or patch that does not apply is
# an error.
#
# Usage: series.sh [--out DIR] [--work DIR] [--patches DIR] [--overlay DIR]
#                  [--tarball T] [--map-only]
#   --map-only  check patches/series and patches/new-files, export nothing
. "$(dirname "$0")/lib.sh"

out=$BUILD/series
work=$BUILD/series-work
patchdir=$TOP/patches
overlay=$TOP
tarball=$KSRC_TARBALL
map_only=0
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--patches) patchdir=$2; shift 2 ;;
	--overlay) overlay=$2; shift 2 ;;
	--tarball) tarball=$2; shift 2 ;;
	--map-only) map_only=1; shift ;;
	*) die "series.sh: unknown argument '$1'" ;;
	esac
done
series=$patchdir/series
map=$patchdir/new-files
[ -f "$series" ] || die "no $series"
[ -f "$map" ] || die "no $map (which patch introduces each overlay file)"

# 1. The series: apply order, the sub-series of each patch, sub-series order.
patches=()
sections=()
declare -A sect_of=() count=()
sect=
n=0
while read -r first rest; do
	n=$((n + 1))
	case "$first" in
	'') continue ;;
	'#'*)
		if [[ "$first $rest" =~ ^'# series: '([a-z0-9][a-z0-9-]*) ]]; then
			sect=${BASH_REMATCH[1]}
			[ -n "${count[$sect]:-}" ] || { sections+=("$sect"); count[$sect]=0; }
		fi
		continue
		;;
	esac
	[ -f "$patchdir/$first" ] || die "${series#"$TOP"/}:$n: $first does not exist"
	[ -n "$sect" ] || die "${series#"$TOP"/}:$n: $first comes before the first '# series: NAME' line"
	[ -z "${sect_of[$first]:-}" ] || die "${series#"$TOP"/}:$n: $first is listed twice"
	patches+=("$first")
	sect_of[$first]=$sect
	count[$sect]=$((count[$sect] + 1))
done <"$series"
[ ${#patches[@]} -gt 0 ] || die "${series#"$TOP"/} lists no patch"
for s in "${sections[@]}"; do
	[ "${count[$s]}" -gt 0 ] || die "${series#"$TOP"/}: sub-series $s has no patch"
done

# 2. The map: every overlay file goes with exactly one patch.
mapfile -t files < <(overlay_files "$overlay")
declare -A owner=() files_of=()
errs=()
n=0
while read -r -a words; do
	n=$((n + 1))
	[ ${#words[@]} -gt 0 ] || continue
	p=${words[0]}
	case "$p" in '#'*) continue ;; esac
	where="${map#"$TOP"/}:$n"
	if [ -z "${sect_of[$p]:-}" ]; then
		errs+=("$where: $p is not in ${series#"$TOP"/}")
		continue
	fi
	[ ${#words[@]} -gt 1 ] || errs+=("$where: $p names no file")
	for glob in "${words[@]:1}"; do
		hits=0
		for f in "${files[@]}"; do
			# shellcheck disable=SC2053 # $glob is a pattern
			[[ $f == $glob ]] || continue
			hits=$((hits + 1))
			if [ -n "${owner[$f]:-}" ] && [ "${owner[$f]}" != "$p" ]; then
				errs+=("$where: $f is mapped by two patches: ${owner[$f]} and $p")
				continue
			fi
			[ -n "${owner[$f]:-}" ] || files_of[$p]+="$f"$'\n'
			owner[$f]=$p
		done
		[ $hits -gt 0 ] || errs+=("$where: '$glob' ($p) matches no overlay file")
	done
done <"$map"
for f in "${files[@]}"; do
	[ -n "${owner[$f]:-}" ] || errs+=("${map#"$TOP"/}: overlay file $f is mapped by no patch")
done
if [ ${#errs[@]} -gt 0 ]; then
	printf '%s\n' "${errs[@]}" >&2
	die "${map#"$TOP"/} does not match the overlay and the series (${#errs[@]} problem(s) above)"
fi
note "${#files[@]} overlay file(s), each mapped to one of ${#patches[@]} patches in ${#sections[@]} sub-series"
[ $map_only = 0 ] || exit 0

for s in "${sections[@]}"; do
	[ -f "$patchdir/covers/$s.txt" ] || die "no cover letter text for sub-series $s: ${patchdir#"$TOP"/}/covers/$s.txt"
done

# 3. The scratch repository: pristine versions of the files the patches touch
# (and the top Makefile, for the version), committed with a fixed identity and
# date so that its commits are the same on every machine. No user or system
# git configuration: format-patch's output must not depend on it.
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
# 6.12's release date, as KBUILD_BUILD_TIMESTAMP in lib.sh.
stamp="2024-11-17 00:00:00 +0000"
ident=$(sed -n 's/^From: //p' "$patchdir/${patches[0]}" | head -n1)
[[ "$ident" =~ ^(.*)\ \<(.*)\>$ ]] || die "no 'From: NAME <EMAIL>' in ${patches[0]}"
who_name=${BASH_REMATCH[1]}
who_email=${BASH_REMATCH[2]}
g() {
	GIT_COMMITTER_DATE=$stamp git -C "$work" -c user.name="$who_name" -c user.email="$who_email" \
		-c core.abbrev=12 -c advice.detachedHead=false -c commit.gpgSign=false "$@"
}
# shellcheck disable=SC2016 # an awk program
mapfile -t touched < <( (for p in "${patches[@]}"; do echo "$patchdir/$p"; done | xargs awk '
	function flush() { if (path != "" && !created) print path; path = "" }
	FNR == 1 { flush() }
	/^diff --git a\// { flush(); path = substr($3, 3); created = 0; next }
	/^new file mode / { created = 1 }
	END { flush() }'; echo Makefile) | sort -u)
want=$(printf '%s\n' "$(basename "$tarball")" "${touched[@]}" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$work/.git/rzram-base" 2>/dev/null)" != "$want" ]; then
	rm -rf "$work"
	mkdir -p "$work"
	git -C "$work" init -q
	if [ -d "$SRC/.git" ] && git -C "$SRC" rev-parse -q --verify refs/tags/pristine >/dev/null; then
		note "scratch tree: ${#touched[@]} pristine files from ${SRC#"$TOP"/}"
		# Blobs and modes straight from its object store.
		n=0
		while read -r mode _ blob f; do
			mkdir -p "$work/$(dirname "$f")"
			git -C "$SRC" cat-file blob "$blob" >"$work/$f"
			[ "$mode" != 100755 ] || chmod +x "$work/$f"
			n=$((n + 1))
		done < <(git -C "$SRC" ls-tree -r pristine -- "${touched[@]}")
		[ $n = ${#touched[@]} ] ||
			die "the patches change files that pristine 6.12 does not have: $(cd "$work" &&
				for f in "${touched[@]}"; do [ -f "$f" ] || echo "$f"; done | paste -sd' ')"
	else
		[ -f "$tarball" ] || die "kernel tarball $tarball not found (make deps installs $KSRC_PKG)"
		note "scratch tree: ${#touched[@]} pristine files from $(basename "$tarball")"
		top=$(tar -tJf "$tarball" 2>/dev/null | head -n1 || true)
		top=${top%%/*}
		tar -xJf "$tarball" -C "$work" --strip-components=1 "${touched[@]/#/$top/}" ||
			die "the patches change files that $(basename "$tarball") does not have (see above)"
	fi
	g add -A -f
	GIT_AUTHOR_DATE=$stamp g commit -q -m "pristine $(basename "$tarball"): the files the patches touch"
	g tag pristine
	echo "$want" >"$work/.git/rzram-base"
fi
kver=$(awk -F' = ' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
	$1 == "SUBLEVEL" { s = $2 } END { print v "." p "." s }' "$work/Makefile")

# restart: an empty index and tree at pristine.
restart() {
	g am --abort >/dev/null 2>&1 || true
	g cherry-pick --abort >/dev/null 2>&1 || true
	g checkout -q -f --detach pristine
	g clean -q -f -d -x
}
# add_files FILE...: copy overlay files into the scratch tree and stage them.
add_files() {
	local f
	for f in "$@"; do
		mkdir -p "$work/$(dirname "$f")"
		cp "$overlay/$f" "$work/$f"
	done
	g add -f -- "$@"
}

# 4. Assembled: what tree.sh builds, restricted to the touched files.
restart
declare -A commit_of=()
for p in "${patches[@]}"; do
	if ! msg=$(g am -q "$patchdir/$p" 2>&1); then
		echo "$msg" >&2
		die "$p does not apply to pristine $kver + the patches before it in ${series#"$TOP"/}"
	fi
	commit_of[$p]=$(g rev-parse HEAD)
done
add_files "${files[@]}"
g commit -q --allow-empty -m "overlay"
assembled=$(g rev-parse 'HEAD^{tree}')

# wiring: what the HEAD commit adds that names another file (a Rust mod, a
# quoted #include, a Kconfig source, a kbuild object or directory), one line
# each: FILE, the line, then the files any one of which satisfies it
# ("composite:DIR/NAME": an object kbuild links from NAME-y or NAME-objs).
wiring() {
	g show --format= -U0 HEAD | awk '
	function out(alts) { print path "\t" line "\t" alts }
	/^\+\+\+ b\// { path = substr($0, 7); dir = path; sub(/\/?[^\/]*$/, "", dir)
		base = path; sub(/.*\//, "", base); next }
	/^\+\+\+ / { path = ""; next }
	!/^\+/ || path == "" { next }
	{ line = substr($0, 2); d = (dir == "" ? "" : dir "/") }
	path ~ /\.rs$/ && line ~ /^[ \t]*(pub(\([^)]*\))?[ \t]+)?mod[ \t]+[a-z0-9_]+[ \t]*;/ {
		m = line; sub(/^[ \t]*(pub(\([^)]*\))?[ \t]+)?mod[ \t]+/, "", m); sub(/[ \t]*;.*/, "", m)
		# Next to the file for a crate root (lib.rs, a kbuild object) or
		# mod.rs, else in the directory named after the file.
		b = path; sub(/\.rs$/, "", b)
		out(d m ".rs " d m "/mod.rs " b "/" m ".rs " b "/" m "/mod.rs"); next
	}
	path ~ /\.[ch]$/ && line ~ /^[ \t]*#[ \t]*include[ \t]+"[^"]+"/ {
		m = line; sub(/^[^"]*"/, "", m); sub(/".*/, "", m); out(d m); next
	}
	base ~ /^Kconfig/ && line ~ /^[ \t]*source[ \t]+"[^"]+"/ {
		m = line; sub(/^[^"]*"/, "", m); sub(/".*/, "", m); out(m); next
	}
	(base == "Makefile" || base == "Kbuild") && line ~ /^[ \t]*obj-[^=]*=/ {
		m = line; sub(/^[^=]*=/, "", m); sub(/#.*/, "", m)
		k = split(m, ws, /[ \t]+/)
		for (i = 1; i <= k; i++) {
			w = ws[i]
			if (w ~ /\/$/) out(d w "Makefile " d w "Kbuild")
			else if (w ~ /\.o$/) {
				o = w; sub(/\.o$/, "", o)
				out(d o ".c " d o ".rs " d o ".S composite:" d o)
			}
		}
	}'
}
# in_pristine PATH: whether pristine 6.12 has PATH (build/linux, or a listing
# of the tarball made once when first needed).
in_pristine() {
	if [ -d "$SRC/.git" ] && git -C "$SRC" rev-parse -q --verify refs/tags/pristine >/dev/null; then
		git -C "$SRC" cat-file -e "pristine:$1" 2>/dev/null
		return
	fi
	if [ ! -f "$work/.git/rzram-pristine-list" ]; then
		tar -tJf "$tarball" | sed 's|^[^/]*/||' >"$work/.git/rzram-pristine-list.tmp"
		mv "$work/.git/rzram-pristine-list.tmp" "$work/.git/rzram-pristine-list"
	fi
	grep -qxF -- "$1" "$work/.git/rzram-pristine-list"
}
# check_wiring PATCH: every file the patch's commit wires up exists once it
# is applied; problems are added to errs.
check_wiring() {
	local file line alts a t ok names
	while IFS=$'\t' read -r file line alts; do
		ok=0
		for a in $alts; do
			case "$a" in
			composite:*)
				t=${a#composite:}
				grep -qE "^[[:space:]]*$(basename "$t")-(y|objs|\\\$)" "$work/$file" && ok=1
				;;
			*)
				t=$(realpath -m --relative-to="$work" "$work/$a")
				if [ -e "$work/$t" ] || in_pristine "$t"; then ok=1; fi
				;;
			esac
			[ $ok = 0 ] || break
		done
		[ $ok = 0 ] || continue
		names=$(tr ' ' '\n' <<<"$alts" | grep -v '^composite:' | paste -sd' ')
		errs+=("$1: $file adds '$line', but no ${names// / or } exists with it applied: map the file to it in ${map#"$TOP"/}")
	done < <(wiring)
}

# 5. The export chain: sub-series in order, each patch with its new files,
# each checked for the files it wires up.
restart
errs=()
declare -A first_of=() last_of=()
for s in "${sections[@]}"; do
	first_of[$s]=$(g rev-parse HEAD)
	for p in "${patches[@]}"; do
		[ "${sect_of[$p]}" = "$s" ] || continue
		if ! msg=$(g cherry-pick "${commit_of[$p]}" 2>&1); then
			echo "$msg" >&2
			g diff --name-only --diff-filter=U | sed 's/^/  conflict: /' >&2
			die "$p does not apply in the export order (sub-series $s, after the ones before it)"
		fi
		if [ -n "${files_of[$p]:-}" ]; then
			mapfile -t mine < <(printf '%s' "${files_of[$p]}")
			add_files "${mine[@]}"
			g commit -q --amend --no-edit --cleanup=verbatim
		fi
		check_wiring "$p"
	done
	last_of[$s]=$(g rev-parse HEAD)
done
if [ ${#errs[@]} -gt 0 ]; then
	printf '%s\n' "${errs[@]}" >&2
	die "${#errs[@]} patch(es) wire up files that come later or not at all (above)"
fi
if [ "$(g rev-parse 'HEAD^{tree}')" != "$assembled" ]; then
	g diff --stat "$assembled" HEAD >&2
	die "the export chain's tree differs from the assembled tree (above: assembled -> export)"
fi

# 6. format-patch per sub-series, into a fresh directory that replaces OUT
# only once it is verified.
tmp=$out.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
# fill_cover COVER NAME PREREQ-TEXT PREREQ-IDS: put the subject and body of
# covers/NAME.txt, the base and the prerequisites into format-patch's
# template, dated as the sub-series' last patch.
fill_cover() {
	local cover=$1 name=$2 text=$3 ids=$4 subject body date
	subject=$(head -n1 "$patchdir/covers/$name.txt")
	[ -n "$subject" ] || die "${patchdir#"$TOP"/}/covers/$name.txt: the first line (the subject) is empty"
	body=$(tail -n +2 "$patchdir/covers/$name.txt" | sed '/./,$!d')
	printf '%s\n\n%s\n' "$body" "$text" >"$cover.body"
	printf '%s' "$ids" >"$cover.ids"
	date=$(find "$(dirname "$cover")" -name '[0-9]*.patch' | sort | tail -n1 | xargs sed -n '/^Date: /{p;q}')
	DATE=$date SUBJECT=$subject awk -v bodyf="$cover.body" -v idsf="$cover.ids" '
		/^Date: / && !dated { print ENVIRON["DATE"]; dated = 1; next }
		/^Subject: / && (i = index($0, "*** SUBJECT HERE ***")) {
			print substr($0, 1, i - 1) ENVIRON["SUBJECT"]
			next
		}
		$0 == "*** BLURB HERE ***" {
			while ((getline l < bodyf) > 0) print l
			next
		}
		$0 == "-- " && !sig {
			sig = 1
			if ((getline l < idsf) > 0) { print l; while ((getline l < idsf) > 0) print l; print "" }
		}
		{ print }' "$cover" >"$cover.new"
	grep -q 'SUBJECT HERE\|BLURB HERE' "$cover.new" &&
		die "format-patch's cover letter template changed: $cover.new"
	mv "$cover.new" "$cover"
	rm -f "$cover.body" "$cover.ids"
}

i=0
before=()
for s in "${sections[@]}"; do
	i=$((i + 1))
	dir=$tmp/$(printf '%02d' $i)-$s
	g format-patch -q --zero-commit --cover-letter -n -o "$dir" "${first_of[$s]}..${last_of[$s]}"
	if [ ${#before[@]} -eq 0 ]; then
		text="Based on Linux $kver (Debian's linux-source-${kver%.*})."
		ids=
	else
		text="Based on Linux $kver (Debian's linux-source-${kver%.*}) with these
series applied first, in this order (their patch ids follow the diffstat):"
		for b in "${before[@]}"; do
			text+=$'\n'"  $b"
		done
		ids=$(g rev-list --reverse "pristine..${first_of[$s]}" | while read -r c; do
			g show "$c" | git patch-id --stable | sed 's/ .*//; s/^/prerequisite-patch-id: /'
		done)$'\n'
	fi
	fill_cover "$dir/0000-cover-letter.patch" "$s" "$text" "$ids"
	before+=("$(basename "$dir"): $(head -n1 "$patchdir/covers/$s.txt")")
done

# 7. The files themselves: every exported patch, in order, on pristine.
restart
total=0
for dir in "$tmp"/*/; do
	mapfile -t ps < <(find "$dir" -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name '0000-cover-letter.patch' | sort)
	if [ ! -f "$dir/0000-cover-letter.patch" ] || [ ${#ps[@]} -eq 0 ]; then
		die "$(basename "$dir"): no cover letter or no patches"
	fi
	for p in "${ps[@]}"; do
		if ! msg=$(g am -q "$p" 2>&1); then
			echo "$msg" >&2
			die "exported ${p#"$tmp"/} does not apply"
		fi
		# git am's whitespace warnings are what a maintainer would see.
		[ -z "$msg" ] || note "warning: git am of ${p#"$tmp"/}: $(echo "$msg" | paste -sd' ')"
	done
	total=$((total + ${#ps[@]}))
done
if [ "$(g rev-parse 'HEAD^{tree}')" != "$assembled" ]; then
	g diff --stat "$assembled" HEAD >&2
	die "pristine + the exported series differs from the assembled tree (above: assembled -> exported)"
fi
restart

rm -rf "$out"
mv "$tmp" "$out"
for dir in "$out"/*/; do
	note "${dir#"$TOP"/}: cover letter + $(($(find "$dir" -name '*.patch' | wc -l) - 1)) patch(es)"
done
note "exported $total patches in ${#sections[@]} sub-series; applied in order to pristine $kver they give the assembled tree"
