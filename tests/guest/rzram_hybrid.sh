# SPDX-License-Identifier: GPL-2.0
# Raspberry Pi OS's swap hybrid, end to end: a zram device of the guest's RAM
# size whose backing device is a loop device over a swap file on a real disk
# (qemu.sh's scratch virtio disk, ext4). Swap under a workload of 1.1x RAM;
# `idle all` then `writeback idle` moves pages to the file; bd_stat shows
# them written; the workload then reads every page back (from the backing
# device for the written-back ones) and verifies it. A second, smaller run
# pages everything out, writes it back, and swapoff brings it all back
# intact. The smaller run with pages written back raw and compressed
# (compressed_writeback); the run under pressure raw only, for time.
set -u
. /tests/lib.sh

[ -b /dev/vda ] || fail "no scratch disk /dev/vda (qemu.sh attaches one on arm64)"
mkfs.ext4 -q -F /dev/vda || fail "mkfs.ext4 /dev/vda"
mkdir -p /mnt/scratch
mount /dev/vda /mnt/scratch || fail "mount /dev/vda"
mem_mb=$(($(meminfo_kb MemTotal) / 1024))

bd() { awk -v i="$1" '{ print $i }' "$SYS/bd_stat"; }

# setup WC: the hybrid, with compressed_writeback WC.
setup() {
	dev0_present
	[ "$(cat "$SYS/initstate")" = 0 ] || dev_reset
	fallocate -l "${mem_mb}M" /mnt/scratch/swapfile || fail "fallocate"
	loop=$(losetup -f --show /mnt/scratch/swapfile) || fail "losetup"
	echo "$1" >"$SYS/compressed_writeback" || fail "compressed_writeback $1"
	echo "$loop" >"$SYS/backing_dev" || fail "backing_dev $loop"
	echo "${mem_mb}M" >"$SYS/disksize" || fail "disksize"
	mkswap "$BLK" >/dev/null || fail "mkswap"
	swapon "$BLK" || fail "swapon"
}

teardown() {
	swapoff "$BLK" 2>/dev/null
	dev_reset
	losetup -d "$loop"
	rm -f /mnt/scratch/swapfile
}

writeback_idle() {
	echo all >"$SYS/idle" || fail "idle all"
	echo idle >"$SYS/writeback" || fail "writeback idle"
	written=$(bd 3)
	echo "after writeback idle: bd_stat $(cat "$SYS/bd_stat")"
	mm_stat_print
	[ "$written" -gt 0 ] || fail "nothing written back"
	reads0=$(bd 2)
}

swapoff_now() {
	writeback_idle
	swapoff "$BLK" || fail "swapoff with written-back pages"
	echo "swapoff: bd_stat $(cat "$SYS/bd_stat")"
	# Swap freed every slot it used, and the blocks with them; the swap
	# header (page 0, written back too) stays.
	[ "$(bd 1)" -le 1 ] || fail "blocks left in use after swapoff: bd_stat $(cat "$SYS/bd_stat")"
}

for wc in 0 1; do
	setup $wc
	if [ $wc = 0 ]; then
		# Under pressure: the workload is 1.1x RAM.
		work=$((mem_mb * 11 / 10))
		run_held writeback_idle -m "$work" -r 10 ||
			fail "wc=$wc: data did not survive writeback under pressure"
		[ "$(bd 2)" -gt "$reads0" ] || fail "wc=$wc: no page was read back from the backing device"
		echo "wc=$wc pressure: $written pages written back, $(($(bd 2) - reads0)) read back"
		swapoff "$BLK" || fail "swapoff"
		swapon "$BLK" || fail "swapon"
	fi
	# Everything paged out, written back, and brought back by swapoff.
	run_held swapoff_now -m $((mem_mb / 8)) -r 25 -p ||
		fail "wc=$wc: data did not survive writeback and swapoff"
	[ "$(bd 2)" -gt "$reads0" ] || fail "wc=$wc: swapoff read nothing from the backing device"
	echo "wc=$wc swapoff: $written pages written back, $(($(bd 2) - reads0)) read back"
	teardown
done
umount /mnt/scratch
