# SPDX-License-Identifier: GPL-2.0
# Guards: the primary algorithm left unset after the compressors are
# destroyed (CVE-2026-89717: a path that destroyed zram's compressors, a
# reset or a disksize that failed after creating some of them, left the
# primary algorithm's name NULL, and the next read of comp_algorithm, or the
# next disksize and I/O, dereferenced it).
#
# Every path that destroys the compressors, each followed by reads of every
# algorithm attribute and by I/O on a new initialisation, with a reader
# reading comp_algorithm and recomp_algorithm all along (bash builtins, no
# process per read), every read of comp_algorithm showing exactly one
# algorithm selected:
#   1. reset of a configured, uninitialised device (zstd, two secondaries);
#   2. recompression set up (lzo-rle, zstd and deflate secondaries), used
#      (idle pages recompressed), and torn down by reset;
#   3. disksize failing because the primary cannot be built (deflate at
#      level 10, which zlib refuses): EINVAL;
#   4. disksize failing because a secondary cannot be built after the
#      primary was (lzo-rle, then deflate at level 10): EINVAL;
#   5. (rzram only) disksize failing with ENOMEM (1T) after zstd and a
#      secondary were set: the C zram warns for a table that size, which the
#      log scan would count, so it sits this one out (regress_reset_failed_init
#      and rzram_disksize_limits run 1T on the device under test only, too).
# After each, every readable attribute must read without error, and
# algorithm_params, write-only (mode 0200), must fail to open for reading
# with EACCES (kernfs refuses a read open of a file without read permission,
# even to root) on both.
#
# What each driver shows after a failed disksize differs, by design:
# - zram 6.12 (arm64): a compressor that fails to build makes disksize
#   destroy the others and fall back to the defaults (zram_destroy_comps():
#   lzo-rle, no secondary, parameters forgotten), so comp_algorithm shows
#   [lzo-rle], recomp_algorithm nothing, and the next disksize works;
# - rzram: the algorithms are values (Option<Algorithm>) in the
#   configuration, which only comp_algorithm, recomp_algorithm,
#   algorithm_params and reset change; disksize builds new storage from a
#   copy and a failure drops it whole, so nothing is destroyed and nothing
#   can be left unset: comp_algorithm and recomp_algorithm still show what
#   was chosen, and the next disksize fails the same way until the
#   parameters are fixed, after which the device works with deflate.
# A reset gives the defaults on both. ENOMEM (5) keeps the choice on both
# (zram fails before it builds a compressor).
#
# Whatever happens, the exit stops the reader and resets device 0 of each
# family: a failure midway could otherwise leave rzram configured with
# deflate at level 10, uninitialised (rzram keeps its configuration after a
# failed disksize), and the next test's disksize would fail too.
set -u
. /tests/lib.sh

rw=sysfs_rw
dev0_present
fams=""
for f in zram rzram; do
	[ -f /sys/block/${f}0/recomp_algorithm ] && [ -f /sys/block/${f}0/algorithm_params ] &&
		fams="$fams $f"
done
[ -n "$fams" ] || fail "no device with recomp_algorithm and algorithm_params"

# On any exit: no reader left running into the next tests, and every device
# back at its defaults.
cleanup() {
	local f
	touch /tmp/cd.stop
	[ -n "${rpid:-}" ] && wait "$rpid" 2>/dev/null
	for f in $fams; do
		echo 1 >"/sys/block/${f}0/reset" || echo "$f: reset on exit failed"
	done
}
trap cleanup EXIT

# 16 pages: random (huge), text, zeroes, and programs (compressible).
{
	head -c $((4 * 4096)) /dev/urandom
	yes "comp destroyed test" | head -c $((4 * 4096))
	head -c $((4 * 4096)) /dev/zero
	cat /usr/bin/* 2>/dev/null | head -c $((4 * 4096))
} >/tmp/cd.data
[ "$(stat -c %s /tmp/cd.data)" = 65536 ] || fail "no 64 KiB of test data"
want=$(md5sum </tmp/cd.data)

w() { attr_write "$@"; }

# sel: the algorithm comp_algorithm shows selected. secs: recomp_algorithm as
# "PRIO:NAME ...".
sel() {
	local x
	read -r x <"$d/comp_algorithm" || fail "$F: comp_algorithm unreadable ($what)"
	x=${x#*\[}
	echo "${x%%\]*}"
}
secs() {
	local l p n out=""
	while read -r l; do
		p=${l%%:*}
		n=${l#*\[}
		out="$out ${p#\#}:${n%%\]*}"
	done <"$d/recomp_algorithm"
	echo "${out# }"
}

# expect SEL SECS: what the algorithm attributes show; then every readable
# attribute reads, and algorithm_params does not.
expect() {
	local a b
	a=$(sel)
	b=$(secs)
	[ "$a" = "$1" ] || fail "$F: comp_algorithm shows '$a', want '$1' ($what)"
	[ "$b" = "$2" ] || fail "$F: recomp_algorithm shows '$b', want '$2' ($what)"
	# shellcheck disable=SC2046 # sysfs names have no spaces
	cat $(find "$d/" -maxdepth 1 -type f -perm -400) >/dev/null ||
		fail "$F: an attribute failed to read ($what)"
	a=$($rw r "$d/algorithm_params")
	[ "$a" = EACCES ] || fail "$F: reading algorithm_params gave '$a', want EACCES ($what)"
	echo "$F: $what: comp_algorithm [$1], recomp_algorithm '$2'"
}

# io: initialised: 16 pages written, read back past the page cache.
io() {
	dd if=/tmp/cd.data of="$blk" bs=4k oflag=direct 2>/dev/null || fail "$F: write ($what)"
	[ "$(dd if="$blk" bs=4k count=16 iflag=direct 2>/dev/null | md5sum)" = "$want" ] ||
		fail "$F: data read back wrong ($what)"
}

# The reader: comp_algorithm must show one algorithm selected, always. It
# pauses 2 ms between rounds (a read that times out on a FIFO nobody writes:
# no process per round), to leave the other CPU most of its time.
reader() {
	local x n=0
	exec 9<>/tmp/cd.fifo
	while [ ! -e /tmp/cd.stop ]; do
		read -r -t 0.002 -u 9 _ || :
		if read -r x <"$d/comp_algorithm"; then
			case $x in
			*\[*\]*\[*) echo "two selected: $x" ;;
			*\[*\]*) ;;
			*) echo "none selected: '$x'" ;;
			esac
		else
			echo "comp_algorithm read failed"
		fi
		read -r -d '' _ <"$d/recomp_algorithm"
		n=$((n + 1))
	done
	echo "$n" >/tmp/cd.reads
}

# fell_back_to_defaults: after a disksize that could not build a compressor,
# the C zram shows its defaults and the next disksize works.
fell_back_to_defaults() {
	expect lzo-rle ""
	w disksize 16M ok
	expect lzo-rle ""
}

# reset_to_defaults_and_use: a reset gives the defaults on both drivers (no
# secondary), and the device then works: initialised, I/O checked, reset.
reset_to_defaults_and_use() {
	w reset 1 ok
	expect lzo-rle ""
	w disksize 16M ok
	io
	w reset 1 ok
}
for f in $fams; do
	F=$f d=/sys/block/${f}0 blk=/dev/${f}0
	rz=0
	[ -f "$d/slot_bytes" ] && rz=1
	rm -f /tmp/cd.stop /tmp/cd.reads /tmp/cd.err /tmp/cd.fifo
	mkfifo /tmp/cd.fifo || fail "mkfifo"
	reader >/tmp/cd.err 2>&1 &
	rpid=$!

	what="a reset"
	echo 1 >"$d/reset" || fail "$F: reset"
	expect lzo-rle ""

	# 1. A configured, uninitialised device reset.
	what="configured"
	w comp_algorithm zstd ok
	w recomp_algorithm "algo=lz4 priority=1" ok
	w recomp_algorithm "algo=deflate priority=2" ok
	expect zstd "1:lz4 2:deflate"
	what="1: reset of a configured, uninitialised device"
	reset_to_defaults_and_use

	# 2. Recompression set up, used and torn down by reset.
	what="2: recompression set up"
	w comp_algorithm lzo-rle ok
	w recomp_algorithm "algo=zstd priority=1" ok
	w recomp_algorithm "algo=deflate priority=2" ok
	w disksize 16M ok
	expect lzo-rle "1:zstd 2:deflate"
	io
	w idle all ok
	w recompress type=idle ok
	io
	what="2: recompression torn down by reset"
	reset_to_defaults_and_use

	# 3. The primary cannot be built: deflate at level 10.
	what="3: disksize with a primary that fails"
	w comp_algorithm deflate ok
	w algorithm_params "algo=deflate level=10" ok
	w disksize 16M EINVAL
	[ "$(cat "$d/initstate")" = 0 ] || fail "$F: initialised ($what)"
	if [ $rz = 1 ]; then
		expect deflate ""
		w disksize 16M EINVAL
		w algorithm_params "algo=deflate level=1" ok
		w disksize 16M ok
		expect deflate ""
	else
		fell_back_to_defaults
	fi
	io
	w reset 1 ok
	expect lzo-rle ""

	# 4. A secondary cannot be built, after the primary was.
	what="4: disksize with a secondary that fails"
	w recomp_algorithm "algo=deflate priority=1" ok
	w algorithm_params "algo=deflate level=10" ok
	w disksize 16M EINVAL
	[ "$(cat "$d/initstate")" = 0 ] || fail "$F: initialised ($what)"
	if [ $rz = 1 ]; then
		expect lzo-rle "1:deflate"
		w disksize 16M EINVAL
		w algorithm_params "algo=deflate level=1" ok
		w disksize 16M ok
		expect lzo-rle "1:deflate"
		io
		w recompress "algo=deflate" ok
	else
		fell_back_to_defaults
	fi
	io
	w reset 1 ok
	expect lzo-rle ""

	# 5. ENOMEM after zstd and a secondary were chosen (rzram only).
	if [ $rz = 1 ]; then
		what="5: disksize 1T"
		w comp_algorithm zstd ok
		w recomp_algorithm "algo=lz4hc priority=3" ok
		w disksize 1T ENOMEM
		[ "$(cat "$d/initstate")" = 0 ] || fail "$F: initialised ($what)"
		expect zstd "3:lz4hc"
		w disksize 16M ok
		expect zstd "3:lz4hc"
		io
		w recompress "algo=lz4hc" ok
		io
		w reset 1 ok
		expect lzo-rle ""
	fi

	touch /tmp/cd.stop
	wait $rpid
	rpid=""
	if [ -s /tmp/cd.err ]; then
		cat /tmp/cd.err
		fail "$F: the comp_algorithm reader saw the above"
	fi
	reads=$(cat /tmp/cd.reads 2>/dev/null || echo 0)
	# The reader must have read alongside: a reader that never ran checks nothing.
	[ "$reads" -gt 0 ] 2>/dev/null || fail "$F: the comp_algorithm reader read nothing"
	echo "$F: every destroy path: algorithms shown right, I/O right;" \
		"$reads reads of the algorithm attributes alongside"
done
