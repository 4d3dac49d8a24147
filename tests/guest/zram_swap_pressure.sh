# SPDX-License-Identifier: GPL-2.0
# swap_pressure on the C zram (arm64, where it is built next to rzram): its swap
# path frees slots through zsmalloc's deferred free (patches 0004-0008), which
# nothing else in the guest tests drives under swap.
# timeout: 900
set -u
RZDEV=zram exec bash /tests/swap_pressure.sh
