# SPDX-License-Identifier: GPL-2.0
# The writeback benchmark (make bench): the time `echo idle > writeback`
# takes to write 64 MiB of idle pages to a loop device over a file on the
# scratch virtio disk (ext4, loop with direct I/O, so that each write reaches
# the disk). Side by side in one boot, rounds interleaved: rzram with
# writeback_batch_size 1 and 32, and the C zram of the same kernel (6.12:
# one page at a time, waiting for each). Prints one "wbbench ..." line per
# run for the host to tabulate; every page is checked after each run.
set -u
. /tests/lib.sh

rounds=${rzrounds:-3}
[ -b /dev/vda ] || fail "no scratch disk /dev/vda"
mkfs.ext4 -q -F /dev/vda || fail "mkfs.ext4"
mkdir -p /mnt/scratch
mount /dev/vda /mnt/scratch || fail "mount"
fallocate -l 128M /mnt/scratch/back || fail "fallocate"
# Text: compressible, no page same-filled.
seq 1 20000000 | head -c $((64 << 20)) >/tmp/data
want=$(md5sum </tmp/data | cut -d' ' -f1)
echo "bench: $(uname -r), $(nproc) CPUs, $((($(meminfo_kb MemTotal)) / 1024)) MiB RAM"

# Milliseconds since boot (10 ms resolution: /proc/uptime; busybox's date
# has no %N).
ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }

# run FAMILY BATCH ROUND
run() {
	local d=/sys/block/${1}0 b=/dev/${1}0 loop t0 t1 n
	[ "$(cat $d/initstate)" = 0 ] || echo 1 >$d/reset
	loop=$(losetup -f --show --direct-io=on /mnt/scratch/back) || fail "losetup"
	echo "$loop" >$d/backing_dev || fail "$1: backing_dev"
	[ "$2" = - ] || echo "$2" >$d/writeback_batch_size || fail "$1: writeback_batch_size"
	echo 128M >$d/disksize || fail "$1: disksize"
	dd if=/tmp/data of=$b bs=1M oflag=direct 2>/dev/null || fail "$1: write"
	echo all >$d/idle
	sync
	t0=$(ms)
	echo idle >$d/writeback || fail "$1: writeback"
	t1=$(ms)
	n=$(awk '{ print $3 }' $d/bd_stat)
	[ "$n" = 16384 ] || fail "$1: $n pages written back, want 16384"
	[ "$(dd if=$b bs=1M count=64 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)" = "$want" ] ||
		fail "$1: data wrong after writeback"
	echo "wbbench dev=$1 batch=$2 round=$3 pages=$n ms=$((t1 - t0))"
	echo 1 >$d/reset
	losetup -d "$loop"
}

# The runs (three, two without the C zram's writeback) in an order that
# rotates from round to round: with a multiple of their number of rounds
# (make bench gives 6), each goes first equally often.
runs=("rzram 1" "rzram 32")
[ -f /sys/block/zram0/backing_dev ] && runs+=("zram -")
for r in $(seq 1 "$rounds"); do
	for ((i = 0; i < ${#runs[@]}; i++)); do
		# shellcheck disable=SC2086 # device and batch, two words
		run ${runs[$(((r + i) % ${#runs[@]}))]} "$r"
	done
done
umount /mnt/scratch
