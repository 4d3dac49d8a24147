# SPDX-License-Identifier: GPL-2.0
# make soak: the torture test (tests/guest/torture.sh, rzram only) for
# SOAK_SECS, while a swap storm runs on a device of its own: memstress passes
# of a third of RAM, pushed out with MADV_PAGEOUT and verified twice, one
# after another until the torture test ends.
set -u
. /tests/lib.sh

SECS=${SOAK_SECS:-1800}
ctl=/sys/class/${DEV}-control
mem_mb=$(($(meminfo_kb MemTotal) / 1024))
id=$(cat $ctl/hot_add) || fail "hot_add"
echo 256M >/sys/block/$DEV$id/disksize || fail "disksize"
mkswap /dev/$DEV$id >/dev/null || fail "mkswap"
swapon -p 5 /dev/$DEV$id || fail "swapon"
rm -f /tmp/soak-stop /tmp/soak-fail
storm() {
	local i=0
	while [ ! -e /tmp/soak-stop ]; do
		i=$((i + 1))
		memstress -m $((mem_mb / 3)) -r 25 -s $i -p -v 2 >/tmp/storm.log 2>&1 ||
			{ echo "storm pass $i:" >>/tmp/soak-fail; cat /tmp/storm.log >>/tmp/soak-fail; }
	done
	echo "soak: $i storm passes of $((mem_mb / 3)) MiB, pushed out and verified twice"
}
storm &
spid=$!
echo "soak: ${SECS}s of torture with a swap storm on $DEV$id"
TORTURE_SECS=$SECS TORTURE_REFERENCE=0 bash /tests/torture.sh
rc=$?
touch /tmp/soak-stop
wait $spid
echo "soak: swap $DEV$id at the end: mm_stat $(cat /sys/block/$DEV$id/mm_stat)"
swapoff /dev/$DEV$id || fail "swapoff"
echo 1 >/sys/block/$DEV$id/reset || fail "reset"
echo "$id" >$ctl/hot_remove || fail "hot_remove"
[ -s /tmp/soak-fail ] && { cat /tmp/soak-fail; fail "the swap storm lost data"; }
[ $rc = 0 ] || fail "torture"
