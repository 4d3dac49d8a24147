# SPDX-License-Identifier: GPL-2.0
# Guards: a discard that covers part of a page hangs or frees the wrong pages
# (CVE-2026-46089; zram skips the partial pages of a discard, which happen
# where its 4 KiB logical block is smaller than the page). rzram's logical
# block is a page, so the block layer refuses a discard or write-zeroes that
# is not page-aligned (EINVAL) before the driver sees it; the C zram gets the
# same on 4 KiB pages. Every aligned discard and write-zeroes of 1 to 4 pages
# at each offset of a 32-page window must finish and zero exactly its pages,
# every refused one must change nothing: the device is compared with a model
# of it at the end. The loop is tests/src/discardgrid.c: one process, not a
# thousand blkdiscard spawns under KASAN.
#
# A call that comes back after more than 20 s fails the test (discardgrid's
# alarm, which reports it only as the call returns). A call that hangs is
# not caught by that alarm, since a hung discard waits uninterruptibly: it is
# caught by guest/init's per-test time limit, past which runtest kills the
# test and guest/init reports it "not ok".
set -u
. /tests/lib.sh

dev_setup 16M
discardgrid "$BLK" || fail "discardgrid"
dev_reset
