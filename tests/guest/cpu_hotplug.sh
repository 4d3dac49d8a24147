# SPDX-License-Identifier: GPL-2.0
# CPU hotplug with the device in use. CPU 1 goes offline and online again 20
# times while writers on both CPUs write the device and read it back (rzram
# has a compression stream for every possible CPU from disksize; the C zram
# allocates a CPU's streams as it comes online). Then CPU 1 comes online under
# faults: failnth fails each allocation of the CPU-online preparation in turn,
# every subsystem's (and the C zram's streams, where it is built), and a
# failed online must leave CPU 1 offline and the kernel able to bring it up.
# Last, the device is written and read on CPU 1. Needs CONFIG_HOTPLUG_CPU (the
# x86_64 test kernel; the arm64 one has none).
set -u
. /tests/lib.sh

on=/sys/devices/system/cpu/cpu1/online
[ -f $on ] || fail "$on missing: no CPU hotplug in this kernel"
faults_setup
dev0_present
dev_setup 32M

# writer CPU N: 2 MiB of its own at offset N * 2 MiB, written and checked
# until /tmp/stop exists.
writer() {
	local n=0
	: >/tmp/hp-started$1
	head -c $((2 << 20)) /dev/urandom >/tmp/hp$1
	while [ ! -e /tmp/stop ]; do
		dd if=/tmp/hp$1 of="$BLK" bs=64k seek=$((32 * $1)) oflag=direct 2>/dev/null ||
			{ echo "writer $1: write failed"; return 1; }
		cmp -n $((2 << 20)) /tmp/hp$1 "$BLK" 0 $((($1 * 2) << 20)) ||
			{ echo "writer $1: data differs"; return 1; }
		n=$((n + 1))
	done
	echo "writer $1: $n rounds"
}

rm -f /tmp/stop /tmp/hp-started*
pids=""
for c in 0 1; do
	taskset -c $c bash -c "$(declare -f writer); BLK=$BLK writer $c" &
	pids="$pids $!"
done
# CPU 1 goes offline only once both writers run, pinned: taskset fails with
# EINVAL for a CPU that is offline when it sets the affinity (a slow guest
# got there first).
for i in $(seq 300); do
	[ -e /tmp/hp-started0 ] && [ -e /tmp/hp-started1 ] && break
	sleep 0.1
done
[ -e /tmp/hp-started0 ] && [ -e /tmp/hp-started1 ] || fail "the writers did not start in 30 s"
for i in $(seq 20); do
	echo 0 >$on || fail "CPU 1 offline ($i)"
	sleep 0.1
	echo 1 >$on || fail "CPU 1 online ($i)"
	sleep 0.1
done
touch /tmp/stop
for p in $pids; do
	wait "$p" || fail "a writer failed across CPU hotplug"
done

echo 0 >$on || fail "CPU 1 offline"
failnth -r $on -u 0 w $on 1 || fail "CPU 1 online under faults"
[ "$(cat $on)" = 1 ] || fail "CPU 1 not online after the faults"
dd if=/dev/urandom of=/tmp/hp bs=4k count=256 2>/dev/null
taskset -c 1 dd if=/tmp/hp of="$BLK" bs=4k oflag=direct 2>/dev/null || fail "write on CPU 1"
taskset -c 1 cmp -n $((256 * 4096)) /tmp/hp "$BLK" || fail "read on CPU 1"
dev_reset
echo "CPU 1 offline and online 20 times under I/O, then online under faults: data right"
