# SPDX-License-Identifier: GPL-2.0
# fio --verify=crc32c on the raw device, for every compression algorithm the
# device offers: random writes of half-compressible data, then verified reads.
# timeout: 900
set -u
. /tests/lib.sh

[ -d "$SYS" ] || fail "$SYS missing"
algs=$(tr -d '[]' <"$SYS/comp_algorithm")
for alg in $algs; do
	dev_setup 96M "$alg"
	fio --name=verify --filename="$BLK" --rw=randwrite --bs=4k --size=64M \
		--ioengine=psync --direct=1 --verify=crc32c --verify_fatal=1 \
		--buffer_compress_percentage=50 --refill_buffers --randrepeat=0 \
		>/tmp/fio.out 2>&1
	rc=$?
	errs=$(grep -o "err= *[0-9]*" /tmp/fio.out | head -1)
	echo "$alg: fio exit $rc, $errs"
	[ $rc = 0 ] || { cat /tmp/fio.out; fail "fio verify failed with $alg"; }
	mm_stat_print | head -2
	dev_reset
done
