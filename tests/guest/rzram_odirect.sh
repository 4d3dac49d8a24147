# SPDX-License-Identifier: GPL-2.0
# O_DIRECT from buffers that are 512-byte aligned but not page aligned: for
# every 512-byte offset within a page and 1 to 16 blocks, the data must read
# back as written and the memory around the buffers must stay untouched
# (tests/src/odirect_offsets.c). Runs on the device under test and, where
# the C zram is in the same kernel next to rzram (arm64), on zram0 as well:
# both must pass (the C zram needs patches/0000-zram-honour-bvec-offset-*).
set -u
. /tests/lib.sh

prog=/usr/local/bin/odirect_offsets
[ -x "$prog" ] || fail "$prog missing"

# In compat mode (x86_64) DEV is zram and zram0 is rzram itself.
fams=$DEV
if [ "$DEV" != zram ] && [ -d /sys/block/zram0 ]; then
	fams="$fams zram"
fi
bad=""
for f in $fams; do
	DEV=$f SYS=/sys/block/${f}0 BLK=/dev/${f}0
	dev_setup 8M
	echo "--- $f ($BLK)"
	"$prog" "$BLK" || bad="$bad $f"
	# failed reads, failed writes, (unused), slot frees notified
	echo "$f io_stat: $(cat "$SYS/io_stat")"
	dev_reset
done
[ -z "$bad" ] || fail "O_DIRECT from unaligned buffers is broken on:$bad"
echo "O_DIRECT at every 512-byte buffer offset passes on: $fams"
