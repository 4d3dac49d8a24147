# SPDX-License-Identifier: GPL-2.0
# Recompression: pages written with lzo-rle are recompressed with zstd (a
# secondary algorithm), by type=idle and by threshold=; every page reads back
# unchanged, mm_stat's compressed size shrinks, and block_state marks the
# recompressed pages r. Run on each device family present (the arm64 C zram
# has ZRAM_MULTI_COMP), so the two are held to the same outcome.
set -u
. /tests/lib.sh

compr() { awk '{ print $2 }' /sys/block/$1/mm_stat; }

run() {
	local F=$1 dev=${1}0 d=/sys/block/${1}0 bs=/sys/kernel/debug/$1/${1}0/block_state a b c
	[ "$(cat $d/initstate)" = 0 ] || echo 1 >$d/reset
	echo lzo-rle >$d/comp_algorithm || fail "$F: comp_algorithm"
	echo "algo=zstd" >$d/recomp_algorithm || fail "$F: recomp_algorithm"
	echo 64M >$d/disksize || fail "$F: disksize"
	# 16 MiB of programs and libraries: pages that lzo-rle compresses to
	# about half, and zstd further.
	cat /usr/bin/* /usr/sbin/* /lib/*/* /usr/lib/*/* 2>/dev/null | head -c $((16 << 20)) >/tmp/text
	[ "$(stat -c %s /tmp/text)" = $((16 << 20)) ] || fail "not 16 MiB of programs in the guest"
	dd if=/tmp/text of=/dev/$dev bs=1M oflag=direct 2>/dev/null || fail "$F: write"
	sum=$(head -c $((16 << 20)) /dev/$dev | md5sum)
	a=$(compr $dev)
	# Only idle pages: the first half is marked idle, the second half read again.
	echo all >$d/idle
	dd if=/dev/$dev of=/dev/null bs=1M skip=8 count=8 iflag=direct 2>/dev/null
	echo type=idle >$d/recompress || fail "$F: recompress type=idle"
	b=$(compr $dev)
	# Then by threshold: pages of at least 1000 bytes, into fewer.
	echo threshold=1000 >$d/recompress || fail "$F: recompress threshold=1000"
	c=$(compr $dev)
	[ "$(head -c $((16 << 20)) /dev/$dev | md5sum)" = "$sum" ] || fail "$F: contents changed"
	[ "$b" -lt "$a" ] || fail "$F: type=idle did not shrink ($a -> $b)"
	[ "$c" -lt "$b" ] || fail "$F: threshold= did not shrink ($b -> $c)"
	r=0
	[ -f $bs ] && r=$(awk '$3 ~ /r/' $bs | wc -l)
	echo "$F: compressed bytes: lzo-rle $a, after type=idle $b, after threshold=1000 $c; $r pages marked r"
	[ ! -f $bs ] || [ "$r" -gt 0 ] || fail "$F: no page marked r in block_state"
	echo 1 >$d/reset
}

fams=""
for f in zram rzram; do
	[ -f /sys/block/${f}0/recomp_algorithm ] && fams="$fams $f"
done
[ -n "$fams" ] || fail "no device with recomp_algorithm"
for f in $fams; do run $f; done
