# SPDX-License-Identifier: GPL-2.0
# The fio benchmark (make bench): 4k sequential and random reads and writes,
# numjobs 1 and 2, for each algorithm in rzalgs (default lzo-rle,lz4), on
# each device of rzdevs, interleaved: every row runs on every device in turn
# (the order rotating: with an even rzrounds each device goes first in half
# the rounds), for rzrounds rounds. Jobs are pinned: one job to CPU 0, two
# jobs one to each CPU, each on its own half of the 256 MiB (two streams, not
# two jobs on the same pages). Data is about 50% compressible and the same for
# every run (fixed seed). Prints one "fio ..." line per run and one "memory
# ..." line per device and algorithm, after a 256 MiB fill; then, untimed, a
# verify pass per device (write with crc32c, read back and check), which fails
# the test on a mismatch.
set -u
. /tests/lib.sh

algs=$(echo "${rzalgs:-lzo-rle,lz4}" | tr , " ")
devs=$(echo "${rzdevs:-$DEV}" | tr , " ")
runtime=${rzruntime:-4}
rounds=${rzrounds:-10}
read -ra D <<<"$devs"
nd=${#D[@]}
common="--bs=4k --ioengine=psync --direct=1 --buffer_compress_percentage=50
	--refill_buffers --randseed=1234 --group_reporting --output-format=terse --terse-version=3"
echo "bench: $(uname -r), $(nproc) CPUs, devices $devs, $((($(meminfo_kb MemTotal)) / 1024)) MiB RAM, $rounds rounds"
for alg in $algs; do
	for d in $devs; do
		s=/sys/block/${d}0
		[ -d "$s" ] || fail "$s does not exist"
		[ "$(cat "$s/initstate")" = 0 ] || echo 1 >"$s/reset" || fail "reset $s"
		echo "$alg" >"$s/comp_algorithm" || fail "comp_algorithm $alg"
		echo 512M >"$s/disksize" || fail "disksize on $d"
		# Fill 256 MiB once: the reads read it, and it is the data set of
		# the memory comparison.
		fio --name=fill --filename="/dev/${d}0" $common --rw=write --size=256M >/tmp/fill.out 2>&1 ||
			fail "fill $d"
		read -r orig compr used _ <"$s/mm_stat"
		echo "memory dev=$d alg=$alg orig=$orig compr=$compr used=$used slot_bytes=$(cat "$s/slot_bytes" 2>/dev/null || echo 16)"
	done
	for ((r = 0; r < rounds; r++)); do
		for rw in read randread write randwrite; do
			for jobs in 1 2; do
				cpus=--cpus_allowed=0
				[ $jobs = 2 ] && cpus="--cpus_allowed=0-1 --cpus_allowed_policy=split"
				# Each job its own part of the 256 MiB filled.
				per=$((256 / jobs))M
				for ((j = 0; j < nd; j++)); do
					d=${D[$(((j + r) % nd))]}
					# shellcheck disable=SC2086 # $cpus and $common are options
					fio --name=b --filename="/dev/${d}0" $common $cpus --rw=$rw --size=$per \
						--numjobs=$jobs --offset_increment=$per --time_based --runtime="$runtime" \
						>/tmp/fio.out 2>&1 || { cat /tmp/fio.out; fail "fio $rw on $d"; }
					# terse v3: field 7 is read bandwidth (KiB/s), field 48 write bandwidth.
					bw=$(awk -F';' -v rw=$rw 'NR == 1 { print (rw ~ /read/) ? $7 : $48 }' /tmp/fio.out)
					echo "fio dev=$d alg=$alg rw=$rw jobs=$jobs round=$r bw_kib=$bw"
				done
			done
		done
	done
	# The verify pass, untimed: every byte written is read back and checked.
	for d in $devs; do
		# shellcheck disable=SC2086 # $common holds options
		fio --name=verify --filename="/dev/${d}0" $common --rw=randwrite --size=64M \
			--verify=crc32c --verify_fatal=1 --do_verify=1 >/tmp/fio.out 2>&1 ||
			{ cat /tmp/fio.out; fail "fio verify on $d ($alg)"; }
		echo "verify dev=$d alg=$alg ok"
		echo 1 >"/sys/block/${d}0/reset"
	done
done
