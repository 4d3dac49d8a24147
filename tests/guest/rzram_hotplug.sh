# SPDX-License-Identifier: GPL-2.0
# 20 hot_add/hot_remove cycles: each new device works (data round trip), is
# removed, and leaves nothing behind; an open device cannot be removed; both
# are logged as zram logs them.
set -u
. /tests/lib.sh

ctl=/sys/class/${DEV}-control
[ -d "$ctl" ] || fail "$ctl missing"
before=$(ls /sys/block | grep -c "^${DEV}")
dd if=/dev/urandom of=/tmp/data bs=4k count=256 2>/dev/null
for i in $(seq 20); do
	id=$(cat $ctl/hot_add) || fail "hot_add (cycle $i)"
	d=/sys/block/${DEV}$id
	[ -d "$d" ] && [ -b /dev/${DEV}$id ] || fail "device $id did not appear"
	echo 16M >$d/disksize || fail "disksize of $id"
	dd if=/tmp/data of=/dev/${DEV}$id bs=4k conv=fsync 2>/dev/null || fail "write $id"
	cmp -n $((256 * 4096)) /tmp/data /dev/${DEV}$id || fail "data of $id differs"
	if [ $i = 1 ]; then
		exec 3</dev/${DEV}$id
		echo $id >$ctl/hot_remove 2>/dev/null && fail "removed an open device"
		exec 3<&-
	fi
	echo $id >$ctl/hot_remove || fail "hot_remove $id (cycle $i)"
	[ -e "$d" ] && fail "device $id still in sysfs"
	if [ $i = 1 ]; then
		# zram's log lines, which tools and users grep for.
		dmesg | grep -q "Added device: ${DEV}$id\$" || fail "no 'Added device: ${DEV}$id' in the log"
		dmesg | grep -q "Removed device: ${DEV}$id\$" || fail "no 'Removed device: ${DEV}$id' in the log"
	fi
done
after=$(ls /sys/block | grep -c "^${DEV}")
[ "$before" = "$after" ] || fail "$before devices before, $after after"
echo "20 cycles, $after device(s) left as before; open device refused with EBUSY; added and removed devices logged"
