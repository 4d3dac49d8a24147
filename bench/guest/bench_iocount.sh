# SPDX-License-Identifier: GPL-2.0
# The instruction-count benchmark (make bench, part iocount): guest
# instructions per 4 KiB O_DIRECT write and read through each device's own
# bio path (bench/iocount.c), for each algorithm of rzalgs (default
# lz4,lzo-rle) and each kind of data (compressible text, incompressible
# random, same-filled zeroes), on the C zram and rzram of the bench kernel and
# on brd (the floor: the same syscall and block-layer path, no compression).
# Meant for a boot under -icount shift=0 with one vCPU (qemu.sh --icount),
# where a nanosecond is a guest instruction. rznpages pages (default 2048),
# rzrounds rounds each (default 5: round 0 writes into empty slots, the
# others overwrite). The devices alternate, their order rotating by algorithm.
# One "iocount ..." line per round.
set -u
. /tests/lib.sh

algs=$(echo "${rzalgs:-lz4,lzo-rle}" | tr , " ")
devs=$(echo "${rzdevs:-zram,rzram}" | tr , " ")
npages=${rznpages:-2048}
rounds=${rzrounds:-5}
kinds="text random zero"
read -ra D <<<"$devs"
nd=${#D[@]}
echo "bench: $(uname -r), $(nproc) CPUs, devices $devs and brd, $npages pages, $rounds rounds"
[ -b /dev/ram0 ] || fail "no /dev/ram0: is brd built in?"
for kind in $kinds; do
	iocount -f /dev/ram0 -n "$npages" -r "$rounds" -k "$kind" -d brd ||
		fail "iocount on brd ($kind)"
done
a=0
for alg in $algs; do
	for ((j = 0; j < nd; j++)); do
		d=${D[$(((j + a) % nd))]}
		s=/sys/block/${d}0
		[ -d "$s" ] || fail "$s does not exist"
		for kind in $kinds; do
			[ "$(cat "$s/initstate")" = 0 ] || echo 1 >"$s/reset" || fail "reset $s"
			echo "$alg" >"$s/comp_algorithm" || fail "comp_algorithm $alg on $d"
			echo $((npages * 4096)) >"$s/disksize" || fail "disksize on $d"
			iocount -f "/dev/${d}0" -n "$npages" -r "$rounds" -k "$kind" -d "$d" -a "$alg" ||
				fail "iocount on $d ($alg, $kind)"
			echo "mm_stat dev=$d alg=$alg kind=$kind $(cat "$s/mm_stat")"
		done
		echo 1 >"$s/reset"
	done
	a=$((a + 1))
done
