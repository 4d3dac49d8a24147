# SPDX-License-Identifier: GPL-2.0
# Lockdep covers rzram's slot lock: booted with rzram.lockdep_selftest=1,
# rzram takes a slot lock and then a device's compression stream (the
# documented order), then the two in the opposite order. Lockdep must report
# the inversion, naming the slot lock's class. This boot runs alone, and the
# host accepts exactly this report in its log (qemu.sh --expect-splat).
set -u
. /tests/lib.sh

grep -q 'rzram.lockdep_selftest=1' /proc/cmdline || fail "boot with rzram.lockdep_selftest=1"
dmesg >/tmp/dmesg
grep -q 'lockdep self-test: inverted order' /tmp/dmesg || fail "the self-test did not run"
grep -q 'possible circular locking dependency detected' /tmp/dmesg ||
	fail "lockdep did not report the inverted order"
sed -n '/possible circular locking dependency detected/,/DEADLOCK/p' /tmp/dmesg >/tmp/report
grep -q zsmalloc_table /tmp/report || { cat /tmp/report; fail "the report does not name the slot lock class"; }
grep -E 'trying to acquire|already holding|^ *(#|->)' /tmp/report | head -8
echo "lockdep reported the inverted slot lock order"
