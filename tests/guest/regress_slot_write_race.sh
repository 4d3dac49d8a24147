# SPDX-License-Identifier: GPL-2.0
# Guards: two writes to one slot at once leak a handle (CVE-2025-39941, zram:
# "fix slot write race condition"). Three threads hit one block at a time,
# released together: two write different data (or one writes and one frees
# it), one reads. Each read must be the old block or a new one, whole; after
# every block is discarded, the pool must hold no memory: a leaked handle
# keeps its zspage.
set -u
. /tests/lib.sh

dev_setup 16M
torture -d "${DEV}0" -t "${REGRESS_SECS:-15}" -j 0 -r -z -s 39941 || fail "torture (racers only)"
dev_reset
