# SPDX-License-Identifier: GPL-2.0
# Guards: hot_remove racing a reset lets an open in and resets the device
# under it (found in rzram by review: the end of the reset cleared the
# removal's claim). hot_remove, as zram's, waits for a reset under way and
# removes the device; a resetter and an opener race it on every cycle, and
# an opener that found the device sized must be able to write and read it
# until it closes it (tests/src/removerace.c).
set -u
. /tests/lib.sh

removerace "$DEV" "${REGRESS_SECS:-15}" || fail "hot_remove racing reset, disksize and opens"
