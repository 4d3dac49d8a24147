# SPDX-License-Identifier: GPL-2.0
# Guards: a deflate window from algorithm_params reaching zlib unchecked
# (CVE-2026-89716: zram's deflate.winbits, new in 6.16, went to
# zlib_deflate_workspacesize() and zlib_deflateInit2() as written, and the
# kernel's zlib BUG()s on a window outside 9 to 15 when it sizes the
# workspace, so one write to algorithm_params and one to disksize brought
# the machine down).
#
# With deflate the primary algorithm, algorithm_params gets
# "algo=deflate deflate.winbits=X" for bad windows (0, 1, 7, 8, 16, 31, -1,
# -8, -16, the int limits and past them, 2^32 + 9 and 2^64 + 9, which are 9
# if truncated, junk, empty, repeated) and good ones (9 to 15, +12, 012, and
# -9 to -15); then disksize, and, where the device comes up, 8 pages of
# deflate I/O read back and compared. Then the same with deflate the
# secondary algorithm (recomp_algorithm), recompressing. Each write's errno
# is asserted, per driver:
#
# rzram: the key is parsed as kstrtoint() does (ERANGE past an int, EINVAL
# for junk), as zram since 6.16, which also gives EINVAL for an empty value;
# EINVAL for a repeated key is rzram's own (zram since 6.16 lets the last one
# win, as it ignores an unknown key, which rzram refuses too). The value is
# stored; the window is checked where the stream is built, in
# kernel::compress::Deflate::new(), before zlib sees it: 9 to 15, and -15 to
# -9, newer zram's spelling of raw deflate (its default is -11), are the
# same raw window; any other value makes disksize fail with EINVAL and
# leaves the device uninitialised. A refused write leaves the defaults
# (window 11). The window is checked to reach zlib: 4 of the 8 pages are 2
# KiB of random bytes twice, which deflate can shrink only with a window
# over 2 KiB (zlib reaches back 2^w - 262 bytes), so they are stored huge
# with 9 to 11 (or -9 to -11) and compressed with 12 to 15 (or -12 to -15)
# (mm_stat's huge pages: 4, then 0).
#
# zram 6.12 (arm64): algorithm_params has no deflate.winbits: it ignores the
# key, whatever its value (but for an empty one: EINVAL), and deflate keeps
# its window of 11: every value is accepted, disksize succeeds, 4 pages are
# huge. So the bad values reach no zlib call there; the test holds 6.12 to
# that and rzram to the check.
set -u
. /tests/lib.sh

dev0_present

# 8 pages: 4 of 2 KiB random bytes twice, 4 of text.
for i in 1 2 3 4; do
	head -c 2048 /dev/urandom >/tmp/half
	cat /tmp/half /tmp/half
done >/tmp/wbits.data
for i in 1 2 3 4; do
	yes "deflate window test page $i" | head -c 4096
done >>/tmp/wbits.data
[ "$(stat -c %s /tmp/wbits.data)" = 32768 ] || fail "no 32 KiB of test data"
want=$(md5sum </tmp/wbits.data)

# w ATTR VALUE WANT: the write gives WANT (ok or an errno name).
w() { attr_write "$@"; }

# fresh: uninitialised, with the default algorithms and parameters (a reset
# forgets them on both drivers, initialised or not).
fresh() {
	echo 1 >"$d/reset" || fail "$F: reset"
}

# io HUGE: 8 pages through the initialised device, read back past the page
# cache; mm_stat must count HUGE huge pages.
io() {
	local huge
	dd if=/tmp/wbits.data of="$blk" bs=4k oflag=direct 2>/dev/null || fail "$F: write ($what)"
	[ "$(dd if="$blk" bs=4k count=8 iflag=direct 2>/dev/null | md5sum)" = "$want" ] ||
		fail "$F: data read back wrong ($what)"
	read -r _ _ _ _ _ _ _ huge _ <"$d/mm_stat"
	[ "$huge" = "$1" ] || fail "$F: $huge huge pages, want $1 ($what)"
}

# primary VALUE PARAMS DISKSIZE [HUGE]: deflate primary, the window written as
# VALUE; PARAMS and DISKSIZE are the outcomes wanted.
primary() {
	what="deflate.winbits=$1"
	fresh
	echo deflate >"$d/comp_algorithm" || fail "$F: comp_algorithm deflate"
	w algorithm_params "algo=deflate deflate.winbits=$1" "$2"
	w disksize 1M "$3"
	if [ "$3" = ok ]; then
		grep -q '\[deflate\]' "$d/comp_algorithm" || fail "$F: not deflate ($what)"
		io "${4:-4}"
		echo 1 >"$d/reset" || fail "$F: reset"
	else
		[ "$(cat "$d/initstate")" = 0 ] || fail "$F: initialised after a failed disksize ($what)"
	fi
	echo "$F: primary deflate.winbits=$1: algorithm_params $2, disksize $3${4:+, $4 huge}"
}

fams=""
for f in zram rzram; do
	[ -f /sys/block/${f}0/algorithm_params ] && fams="$fams $f"
done
[ -n "$fams" ] || fail "no device with algorithm_params"
for f in $fams; do
	F=$f d=/sys/block/${f}0 blk=/dev/${f}0
	grep -qw deflate "$d/comp_algorithm" || fail "$F: no deflate in comp_algorithm"
	rz=0
	[ -f "$d/slot_bytes" ] && rz=1
	# value            rzram: params, disksize    zram 6.12: params, disksize
	while read -r v r_p r_d z_p z_d; do
		[ -n "$v" ] || continue
		[ "$v" = '(empty)' ] && v=""
		if [ $rz = 1 ]; then
			primary "$v" "$r_p" "$r_d"
		else
			primary "$v" "$z_p" "$z_d"
		fi
	done <<'CASES'
0                       ok      EINVAL  ok      ok
1                       ok      EINVAL  ok      ok
7                       ok      EINVAL  ok      ok
8                       ok      EINVAL  ok      ok
16                      ok      EINVAL  ok      ok
31                      ok      EINVAL  ok      ok
-1                      ok      EINVAL  ok      ok
-8                      ok      EINVAL  ok      ok
-16                     ok      EINVAL  ok      ok
2147483647              ok      EINVAL  ok      ok
-2147483648             ok      EINVAL  ok      ok
2147483648              ERANGE  ok      ok      ok
-2147483649             ERANGE  ok      ok      ok
4294967305              ERANGE  ok      ok      ok
18446744073709551625    ERANGE  ok      ok      ok
x                       EINVAL  ok      ok      ok
12x                     EINVAL  ok      ok      ok
0x0c                    EINVAL  ok      ok      ok
1.2e1                   EINVAL  ok      ok      ok
(empty)                 EINVAL  ok      EINVAL  ok
CASES
	# The key without a value, and twice (the second bad): refused on
	# rzram (a repeated key is its own refusal; zram since 6.16 would take
	# the last); 6.12 refuses the first and ignores the second.
	what="no value"
	fresh
	echo deflate >"$d/comp_algorithm"
	w algorithm_params "algo=deflate deflate.winbits" EINVAL
	what="twice"
	if [ $rz = 1 ]; then
		w algorithm_params "algo=deflate deflate.winbits=12 deflate.winbits=31" EINVAL
	else
		w algorithm_params "algo=deflate deflate.winbits=12 deflate.winbits=31" ok
	fi
	w disksize 1M ok
	io 4
	echo 1 >"$d/reset"

	# Good windows: every one works; on rzram the window reaches zlib, the
	# negative spelling as the positive one (raw deflate either way).
	for v in 9 10 11 12 13 14 15 +12 012 -9 -10 -11 -12 -13 -14 -15; do
		huge=4
		a=${v#[+-]}
		[ $rz = 1 ] && [ "$((10#$a))" -ge 12 ] && huge=0
		primary "$v" ok ok $huge
	done

	# deflate as the secondary algorithm, for recompression.
	for v in 31 13 -13; do
		what="secondary deflate.winbits=$v"
		fresh
		w recomp_algorithm "algo=deflate priority=1" ok
		w algorithm_params "algo=deflate deflate.winbits=$v" ok
		if [ $rz = 1 ] && [ $v = 31 ]; then
			w disksize 1M EINVAL
			[ "$(cat "$d/initstate")" = 0 ] || fail "$F: initialised ($what)"
			grep -q '^#1: .*\[deflate\]' "$d/recomp_algorithm" ||
				fail "$F: recomp_algorithm lost ($what): $(cat "$d/recomp_algorithm")"
			echo "$F: $what: algorithm_params ok, disksize EINVAL"
			continue
		fi
		w disksize 1M ok
		dd if=/tmp/wbits.data of="$blk" bs=4k oflag=direct 2>/dev/null || fail "$F: write ($what)"
		w recompress "algo=deflate" ok
		[ "$(dd if="$blk" bs=4k count=8 iflag=direct 2>/dev/null | md5sum)" = "$want" ] ||
			fail "$F: data wrong after recompression ($what)"
		echo "$F: $what: algorithm_params ok, disksize ok, recompressed, data right"
		echo 1 >"$d/reset"
	done
	fresh
done
