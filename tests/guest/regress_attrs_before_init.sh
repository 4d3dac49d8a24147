# SPDX-License-Identifier: GPL-2.0
# Guards: attributes of a device read before it is initialised, or while it
# is being added (CVE-2024-53222, "zram: fix NULL pointer in
# comp_algorithm_show()": sysfs showed the attributes of a hot-added device
# before its algorithms were set). Readers read every attribute of every
# device of the family in a loop while devices are hot-added, read, given a
# disksize, reset and removed; every attribute of a new device must read
# without an error, or with the errno zram gives for it.
set -u
. /tests/lib.sh

ctl=/sys/class/${DEV}-control
[ -d "$ctl" ] || fail "$ctl missing"
rm -f /tmp/stop
reader() {
	while [ ! -e /tmp/stop ]; do
		cat /sys/block/${DEV}*/* /sys/block/${DEV}*/*/* >/dev/null 2>&1
	done
}
reader &
r1=$!
reader &
r2=$!
for i in $(seq "${REGRESS_CYCLES:-30}"); do
	id=$(cat $ctl/hot_add) || fail "hot_add (cycle $i)"
	d=/sys/block/${DEV}$id
	# Fresh: the algorithm is set and shown, the device uninitialised.
	grep -q '\[' $d/comp_algorithm || fail "comp_algorithm of a new device: '$(cat $d/comp_algorithm)'"
	[ "$(cat $d/initstate)" = 0 ] || fail "a new device is initialised"
	# Every readable attribute (write-only ones have no owner read bit).
	cat $(find $d/ -maxdepth 1 -type f -perm -400) >/dev/null ||
		fail "reading the attributes of an uninitialised device"
	echo 4M >$d/disksize || fail "disksize (cycle $i)"
	echo 1 >$d/reset || fail "reset (cycle $i)"
	n=0
	until echo "$id" >$ctl/hot_remove 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 500 ] || fail "hot_remove $id kept failing"
	done
done
touch /tmp/stop
wait $r1 $r2
echo "${REGRESS_CYCLES:-30} hot_add/read/disksize/reset/hot_remove cycles with 2 readers of every attribute"
