# SPDX-License-Identifier: GPL-2.0
# A filesystem on the device: files written, caches dropped, checksums match.
set -u
. /tests/lib.sh

dev_setup 128M
mkfs.ext4 -q "$BLK" || fail "mkfs.ext4"
mkdir -p /mnt/t
mount -t ext4 "$BLK" /mnt/t || fail "mount"
i=1
while [ $i -le 6 ]; do
	dd if=/dev/urandom of=/mnt/t/rand$i bs=64k count=$((i * 8)) 2>/dev/null || fail "write rand$i"
	i=$((i + 1))
done
yes "rzram compressible line of text" | head -c $((8 << 20)) >/mnt/t/text || fail "write text"
head -c $((4 << 20)) /dev/zero >/mnt/t/zero
(cd /mnt/t && sha256sum rand* text zero >/tmp/sums)
umount /mnt/t || fail "umount"
echo 3 >/proc/sys/vm/drop_caches
mount -t ext4 "$BLK" /mnt/t || fail "remount"
(cd /mnt/t && sha256sum -c /tmp/sums) || fail "checksums differ after remount"
mm_stat_print
umount /mnt/t
dev_reset
