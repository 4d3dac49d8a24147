# SPDX-License-Identifier: GPL-2.0
# Bad input, everywhere: every writable attribute of a device, uninitialised
# and initialised, and the control class's hot_remove, get the same table of
# inputs (empty, whitespace, signs, overflows of u32 and u64 and past 2^64,
# every memparse suffix, hex and octal, non-ASCII, embedded NUL, no newline
# and two, 4095 and 4096 bytes, pseudo-random bytes): tests/src/badinput.c.
# Each write's errno and the attribute's value after it make one line of a
# transcript per device family. Data written before each attribute's row
# must read back unchanged after it (a row's reset or disksize that replaces
# it is followed by a new set-up, which writes it again).
#
# Where the C zram is in the same kernel (arm64), rzram's transcript must equal
# zram's except for the differences listed in INTENDED below, each documented
# in Documentation/admin-guide/blockdev/rzram.rst ("Differences from zram").
set -u
. /tests/lib.sh

IMG=/tmp/badin
mkdir -p $IMG

truncate -s 32M $IMG/back.img
BACK=$(losetup -f --show $IMG/back.img) || fail "losetup"
fams=$DEV
[ "$DEV" != zram ] && [ -d /sys/block/zram0 ] && fams="$DEV zram"
bad=0
for f in $fams; do
	dev0_present
	# hot_remove's row needs device 0 alone (the others would be removed).
	others=$(ls /sys/block | grep -E "^$f[0-9]+$" | grep -vx "${f}0" || true)
	[ -z "$others" ] && [ -d /sys/block/${f}0 ] || fail "$f: want device 0 alone, have: $(ls /sys/block | grep "^$f")"
	badinput $f "$BACK" >$IMG/$f.t 2>&1 || { cat $IMG/$f.t; fail "badinput $f"; }
	n=$(grep -c '' $IMG/$f.t)
	echo "$f: $n lines"
	if grep -q 'DATA CHANGED' $IMG/$f.t; then
		grep 'DATA CHANGED' $IMG/$f.t
		bad=1
	fi
	if grep -E '=> E\?' $IMG/$f.t; then
		echo "$f: an errno without a name"
		bad=1
	fi
done
losetup -d "$BACK"

# The differences from the C zram that are intended (see rzram.rst). Each is
# an awk pattern over "<zram line> ||| <rzram line>".
INTENDED=(
	# zram stores the name with its second newline and so shows no
	# algorithm selected; rzram shows the one it uses.
	"uninit comp_algorithm 'lz4\\\\n\\\\n'"
	# algorithm_params as zram since 6.16: unknown and empty keys refused,
	# EBUSY once initialised (6.12 ignored them, and took changes).
	"^uninit algorithm_params .*=> ok .*=> EINVAL"
	"^init algorithm_params .*=> (ok|EINVAL) .*=> (EINVAL|EBUSY)"
	# writeback's type= form, from zram 6.16 (6.12 knows only the bare modes).
	"^init writeback 'type=idle' .*=> EINVAL .*=> ok"
)
if [ "$fams" = "$DEV zram" ]; then
	diffs=$(awk 'NR == FNR { z[FNR] = $0; next } z[FNR] != $0 { print z[FNR] " ||| " $0 }' \
		$IMG/zram.t $IMG/$DEV.t)
	unexplained=$diffs
	for p in "${INTENDED[@]}"; do
		unexplained=$(printf '%s\n' "$unexplained" | grep -E -v -- "$p" || true)
	done
	n=$(printf '%s' "$diffs" | grep -c '' || true)
	echo "differences from the C zram: $n, intended: $((n - $(printf '%s' "$unexplained" | grep -c '' || true)))"
	if [ -n "$unexplained" ]; then
		echo "unexplained differences (zram ||| $DEV):"
		printf '%s\n' "$unexplained" | head -60
		bad=1
	fi
	[ "$(grep -c '' $IMG/zram.t)" = "$(grep -c '' $IMG/$DEV.t)" ] || { echo "transcripts differ in length"; bad=1; }
fi
# The errnos each attribute gave, for the log.
awk '{ a = $1 " " $2; e = $0; sub(/.*=> /, "", e); split(e, w, " "); c[a] = c[a] (index(c[a], " " w[1] " ") ? "" : " " w[1] " ") }
	END { for (a in c) print a ":" c[a] }' $IMG/$DEV.t | sort | tr -s ' '
if [ $bad != 0 ]; then
	echo "--- $DEV transcript"
	cat $IMG/$DEV.t
	fail "bad input handled differently"
fi
