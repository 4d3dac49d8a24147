# SPDX-License-Identifier: GPL-2.0
# The fio benchmark (make bench): 4k sequential and random reads and writes,
# numjobs 1 and 2, for each algorithm in rzalgs (default lzo-rle,lz4), on the
# device family under test. Data is about 50% compressible and the same for
# every run (fixed seed). Prints one "fio ..." line per run and one "memory
# ..." line per algorithm, after a 256 MiB fill, for the host to tabulate.
set -u
. /tests/lib.sh

algs=$(echo "${rzalgs:-lzo-rle,lz4}" | tr , " ")
runtime=${rzruntime:-8}
common="--filename=$BLK --bs=4k --ioengine=psync --direct=1 --buffer_compress_percentage=50
	--refill_buffers --randseed=1234 --group_reporting --output-format=terse --terse-version=3"
echo "bench: $(uname -r), $(nproc) CPUs, $DEV, $((($(meminfo_kb MemTotal)) / 1024)) MiB RAM"
for alg in $algs; do
	dev_setup 512M "$alg"
	# Fill 256 MiB once: the reads read it, and it is the data set of the
	# memory comparison.
	fio --name=fill $common --rw=write --size=256M >/tmp/fill.out 2>&1 || fail "fill"
	read -r orig compr used _ <"$SYS/mm_stat"
	echo "memory dev=$DEV alg=$alg orig=$orig compr=$compr used=$used slot_bytes=$(cat "$SYS/slot_bytes" 2>/dev/null || echo 16)"
	for rw in read randread write randwrite; do
		for jobs in 1 2; do
			fio --name=b $common --rw=$rw --size=256M --numjobs=$jobs --offset_increment=0 \
				--time_based --runtime="$runtime" >/tmp/fio.out 2>&1 || { cat /tmp/fio.out; fail "fio $rw"; }
			# terse v3: field 7 is read bandwidth (KiB/s), field 48 write bandwidth.
			bw=$(awk -F';' -v rw=$rw 'NR == 1 { print (rw ~ /read/) ? $7 : $48 }' /tmp/fio.out)
			echo "fio dev=$DEV alg=$alg rw=$rw jobs=$jobs bw_kib=$bw"
		done
	done
	dev_reset
done
