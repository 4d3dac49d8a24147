# SPDX-License-Identifier: GPL-2.0
# Guards: a discard that covers part of a page hangs or frees the wrong pages
# (CVE-2026-46089; zram skips the partial pages of a discard, which happen
# where its 4 KiB logical block is smaller than the page). rzram's logical
# block is a page, so the block layer refuses a discard or write-zeroes that
# is not page-aligned (EINVAL) before the driver sees it; the C zram gets the
# same on 4 KiB pages. Every aligned discard and write-zeroes of 1 to 4 pages
# at each offset of a 32-page window must finish (under a time limit) and
# zero exactly its pages, every refused one must change nothing: the device
# is compared with a model of it at the end.
set -u
. /tests/lib.sh

dev_setup 16M
dd if=/dev/urandom of=/tmp/model bs=4k count=64 2>/dev/null
dd if=/tmp/model of="$BLK" bs=4k oflag=direct 2>/dev/null || fail "write"
refused=0 done=0
for z in "" -z; do
	for off in $(seq 0 31); do
		for len in 1 2 3 4; do
			timeout 20 blkdiscard $z -o $((off * 4096)) -l $((len * 4096)) "$BLK" ||
				fail "blkdiscard $z of $len pages at page $off failed or hung"
			dd if=/dev/zero of=/tmp/model bs=4k seek=$off count=$len conv=notrunc 2>/dev/null
			done=$((done + 1))
		done
		# Not page-aligned: start, length, or both.
		for ol in "512 4096" "$((off * 4096)) 512" "2048 6144" "$((off * 4096 + 3584)) 1024"; do
			set -- $ol
			timeout 20 blkdiscard $z -o "$1" -l "$2" "$BLK" 2>/dev/null
			rc=$?
			[ $rc = 124 ] && fail "blkdiscard $z -o $1 -l $2 hung"
			[ $rc = 0 ] && fail "blkdiscard $z -o $1 -l $2 (not page-aligned) succeeded"
			refused=$((refused + 1))
		done
	done
	echo 3 >/proc/sys/vm/drop_caches
	cmp -n $((64 * 4096)) /tmp/model "$BLK" || fail "the device differs from its model (blkdiscard $z)"
	# New data for the write-zeroes pass.
	dd if=/dev/urandom of=/tmp/model bs=4k count=64 2>/dev/null
	dd if=/tmp/model of="$BLK" bs=4k oflag=direct 2>/dev/null || fail "rewrite"
done
echo "$done aligned discards and write-zeroes done, $refused unaligned ones refused, device as modelled"
dev_reset
