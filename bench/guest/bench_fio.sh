# SPDX-License-Identifier: GPL-2.0
# The fio benchmark (make bench), for each algorithm in rzalgs (default
# lzo-rle,lz4,zstd), on each device of rzdevs, interleaved: every row runs on
# every device in turn (the order rotating: with an even rzrounds each device
# goes first in half the rounds), for rzrounds rounds. The rows: 4k
# sequential and random reads and writes with psync, numjobs 1 and 2; 64k
# sequential reads and writes; 4k random reads and writes through io_uring at
# iodepth 16. Jobs are pinned: one job to CPU 0, two jobs one to each CPU,
# each on its own half of the 256 MiB (two streams, not two jobs on the same
# pages). Data is about 50% compressible and the same for every run (fixed
# seed). Each run is bracketed by a "fio-begin" line and its "fio ..." line,
# which the host monitor's samples are matched against; the "fio ..." line
# also gives the guest's busy CPU time (user, nice, system, irq and softirq,
# from /proc/stat, over the whole fio process) per GiB moved. One "memory ..." line per device and algorithm,
# after a 256 MiB fill; then, untimed, a verify pass per device (write with
# crc32c, read back and check), which fails the test on a mismatch.
set -u
. /tests/lib.sh

algs=$(echo "${rzalgs:-lzo-rle,lz4,zstd}" | tr , " ")
devs=$(echo "${rzdevs:-$DEV}" | tr , " ")
runtime=${rzruntime:-4}
rounds=${rzrounds:-10}
read -ra D <<<"$devs"
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
# The guest's busy CPU ticks, all CPUs: user, nice, system, irq, softirq.
busy_ticks() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}
nd=${#D[@]}
common="--direct=1 --buffer_compress_percentage=50
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
		fio --name=fill --filename="/dev/${d}0" $common --bs=4k --rw=write --size=256M >/tmp/fill.out 2>&1 ||
			fail "fill $d"
		read -r orig compr used _ <"$s/mm_stat"
		echo "memory dev=$d alg=$alg orig=$orig compr=$compr used=$used slot_bytes=$(cat "$s/slot_bytes" 2>/dev/null || echo 16)"
	done
	for ((r = 0; r < rounds; r++)); do
		# name:rw:bs:engine:iodepth:jobs
		for row in read:read:4k:psync:1:1 read:read:4k:psync:1:2 \
			randread:randread:4k:psync:1:1 randread:randread:4k:psync:1:2 \
			write:write:4k:psync:1:1 write:write:4k:psync:1:2 \
			randwrite:randwrite:4k:psync:1:1 randwrite:randwrite:4k:psync:1:2 \
			read-64k:read:64k:psync:1:1 write-64k:write:64k:psync:1:1 \
			randread-qd16:randread:4k:io_uring:16:1 randwrite-qd16:randwrite:4k:io_uring:16:1; do
			IFS=: read -r name rw bs engine depth jobs <<<"$row"
			cpus=--cpus_allowed=0
			[ "$jobs" = 2 ] && cpus="--cpus_allowed=0-1 --cpus_allowed_policy=split"
			# Each job its own part of the 256 MiB filled.
			per=$((256 / jobs))M
			for ((j = 0; j < nd; j++)); do
				d=${D[$(((j + r) % nd))]}
				echo "fio-begin dev=$d alg=$alg rw=$name jobs=$jobs round=$r"
				t0=$(busy_ticks)
				# shellcheck disable=SC2086 # $cpus and $common are options
				fio --name=b --filename="/dev/${d}0" $common $cpus --rw="$rw" --bs="$bs" \
					--ioengine="$engine" --iodepth="$depth" --size=$per --numjobs="$jobs" \
					--offset_increment=$per --time_based --runtime="$runtime" \
					>/tmp/fio.out 2>/tmp/fio.err || { cat /tmp/fio.out /tmp/fio.err; fail "fio $name on $d"; }
				t1=$(busy_ticks)
				# terse v3 (its line starts with "3;"): fields 6 and 7 are the
				# read's KiB moved and bandwidth (KiB/s), 47 and 48 the write's.
				read -r kib bw <<<"$(awk -F';' -v rw="$rw" '$1 == 3 {
					print (rw ~ /read/) ? $6 " " $7 : $47 " " $48; exit }' /tmp/fio.out)"
				[[ "$kib" =~ ^[0-9]+$ && "$bw" =~ ^[0-9]+$ ]] ||
					{ cat /tmp/fio.out /tmp/fio.err; fail "no terse result from fio $name on $d"; }
				# Busy CPU milliseconds per GiB moved (ticks are 1/HZ_USER s).
				cpu=$(((t1 - t0) * 1000 * 1048576 / hz / (kib > 0 ? kib : 1)))
				echo "fio dev=$d alg=$alg rw=$name jobs=$jobs round=$r bw_kib=$bw cpu_ms_gib=$cpu"
			done
		done
	done
	# The verify pass, untimed: every byte written is read back and checked.
	for d in $devs; do
		# shellcheck disable=SC2086 # $common holds options
		fio --name=verify --filename="/dev/${d}0" $common --bs=4k --rw=randwrite --size=64M \
			--verify=crc32c --verify_fatal=1 --do_verify=1 >/tmp/fio.out 2>&1 ||
			{ cat /tmp/fio.out; fail "fio verify on $d ($alg)"; }
		echo "verify dev=$d alg=$alg ok"
		echo 1 >"/sys/block/${d}0/reset"
	done
done
