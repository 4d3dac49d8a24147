# SPDX-License-Identifier: GPL-2.0
# Guards: a slot freed while it is read, which mapped zeroed pages into
# processes (CVE-2022-49052, "mm: fix unexpected zeroed page mapping with
# zram swap"; CVE-2024-26759, "mm/swap: fix race when skipping swapcache").
# Threads of one process, and in every other round a forked child, fault in
# the same swapped-out pages at once (tests/src/swaprace.c); the first read
# to finish frees the slot, and every other must still get the data.
set -u
. /tests/lib.sh

dev_setup 64M
mkswap "$BLK" >/dev/null || fail "mkswap"
swapon "$BLK" || fail "swapon"
swaprace -m 8 -t "${REGRESS_SECS:-15}" -T 4
rc=$?
swapoff "$BLK" || fail "swapoff"
[ $rc = 0 ] || fail "pages came back wrong"
dev_reset
