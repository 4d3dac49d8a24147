# SPDX-License-Identifier: GPL-2.0
# The munmap benchmark (make bench): swap on the device with lzo-rle, then
# munmap_bench over the grid P = 1, 2 and N = 64, 256, 1024 MB. Prints one
# "munmap ..." line per round; the host takes the medians.
set -u
. /tests/lib.sh

rounds=${rzrounds:-5}
grid=$(echo "${rzgrid:-1:64,1:256,1:1024,2:64,2:256,2:1024}" | tr , " ")
dev_setup 3G lzo-rle
mkswap "$BLK" >/dev/null || fail "mkswap"
swapon "$BLK" || fail "swapon"
echo "bench: $(uname -r), $(nproc) CPUs, $DEV lzo-rle, $((($(meminfo_kb MemTotal)) / 1024)) MiB RAM, $rounds rounds"
for pn in $grid; do
	p=${pn%%:*}
	n=${pn##*:}
	munmap_bench -p "$p" -m "$n" -r "$rounds" || fail "munmap_bench -p $p -m $n"
done
mm_stat_print
swapoff "$BLK" || fail "swapoff"
dev_reset
