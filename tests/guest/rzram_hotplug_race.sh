# SPDX-License-Identifier: GPL-2.0
# hot_add / disksize / I/O / hot_remove cycles while other processes read every
# attribute of the devices that come and go and of the control class, and open
# the devices. On the lockdep and KASAN kernel this catches attributes sharing
# one lock class ("possible recursive locking detected" on kn->active) and a
# disk's operations or private data freed while an opener still holds the disk;
# the boot log's splat scan fails the run on either.
# timeout: 900
set -u
. /tests/lib.sh

CYCLES=${CYCLES:-120}
ctl=/sys/class/${DEV}-control
[ -d "$ctl" ] || fail "$ctl missing"
before=$(ls /sys/block | grep -c "^${DEV}")
dd if=/dev/urandom of=/tmp/data bs=4k count=64 2>/dev/null
rm -f /tmp/stop

# Readers: every attribute of every device but the test's first, and of the
# control class except hot_add (reading it creates a device). bash's read
# builtin opens and reads each one without a process spawn per attribute.
reader() {
	local f
	while [ ! -e /tmp/stop ]; do
		for f in /sys/block/${DEV}*/* $ctl/hot_remove; do
			case "$f" in /sys/block/${DEV}0/*) continue ;; esac
			read -r _ 2>/dev/null <"$f"
		done
	done
}
# Openers: open and read the devices that come and go; an open that loses the
# race with hot_remove fails, and must not leave the disk's memory behind.
opener() {
	local b
	while [ ! -e /tmp/stop ]; do
		for b in /dev/${DEV}[1-9]*; do
			[ -b "$b" ] && dd if="$b" of=/dev/null bs=4k count=1 2>/dev/null
		done
	done
}
reader &
r1=$!
reader &
r2=$!
opener &
o1=$!

busy=0
for i in $(seq "$CYCLES"); do
	id=$(cat $ctl/hot_add) || fail "hot_add (cycle $i)"
	echo 8M >/sys/block/${DEV}$id/disksize || fail "disksize of $id (cycle $i)"
	dd if=/tmp/data of=/dev/${DEV}$id bs=4k oflag=direct 2>/dev/null || fail "write $id"
	cmp -n $((64 * 4096)) /tmp/data /dev/${DEV}$id || fail "data of $id differs (cycle $i)"
	# The opener may hold the device: hot_remove then fails with EBUSY; retry.
	n=0
	until echo "$id" >$ctl/hot_remove 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 500 ] || fail "hot_remove $id kept failing (cycle $i)"
		busy=$((busy + 1))
	done
done
touch /tmp/stop
wait $r1 $r2 $o1
after=$(ls /sys/block | grep -c "^${DEV}")
[ "$before" = "$after" ] || fail "$before devices before, $after after"
echo "$CYCLES cycles with 2 attribute readers and 1 opener; hot_remove refused while open $busy time(s); $after device(s) left as before"
