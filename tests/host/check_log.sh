#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The splat checker must flag every kind of report it claims to, each on its
# own inside an otherwise clean boot log (with console CRs), and must pass a
# clean log.
. "$(dirname "$0")/lib.sh"
check=$top/scripts/check-log.sh

clean() {
	printf '[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x410fd083]\r\n'
	printf '[    0.000000] kasan: KernelAddressSanitizer initialized (generic)\r\n'
	printf '[    1.234567] zram: Added device: zram0\r\n'
	printf '[    2.000000] Adding 524284k swap on /dev/zram0.  Priority:-2 extents:1\r\n'
	printf 'ok 1 - swap_pressure\r\n'
}
clean >"$tmp/clean.log"
if "$check" "$tmp/clean.log" 2>/dev/null; then ok "clean log passes"; else bad "clean log flagged"; fi

while IFS= read -r splat; do
	[ -n "$splat" ] || continue
	{ clean; printf '%s\r\n' "$splat"; clean; } >"$tmp/splat.log"
	if "$check" "$tmp/splat.log" 2>/dev/null; then
		bad "missed: $splat"
	else
		ok "flagged: $splat"
	fi
done <<'SPLATS'
[   12.345678] BUG: KASAN: slab-use-after-free in zs_free+0x1c/0x200
[   12.345678] BUG: sleeping function called from invalid context at mm/slub.c:4117
[   12.345678] kernel BUG at mm/zsmalloc.c:1234!
[   12.345678] WARNING: CPU: 1 PID: 42 at mm/zsmalloc.c:123 zs_free+0x10/0x20
[   12.345678] Internal error: Oops: 0000000096000004 [#1] PREEMPT SMP
[   12.345678] Oops: general protection fault, probably for non-canonical address 0xdead: 0000 [#1]
[   12.345678] ==================================================================  KASAN report
[   12.345678] possible circular locking dependency detected
[   12.345678] WARNING: possible circular locking dependency detected
[   12.345678] inconsistent lock state
[   12.345678] possible recursive locking detected
[   12.345678] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
[   12.345678] rcu: INFO: rcu_sched self-detected stall on CPU
[   12.345678] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009
[   12.345678] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [kworker/0:1:12]
[   12.345678] INFO: task kworker/0:1:12 blocked for more than 120 seconds.
[   12.345678] Unable to handle kernel NULL pointer dereference at virtual address 0000000000000000
[   12.345678] UBSAN: array-index-out-of-bounds in mm/zsmalloc.c:10:5
[   12.345678] suspicious RCU usage.
[   12.345678] list_add corruption. prev->next should be next (ffff0000c0a1b2c8)
[   12.345678] kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
# unreferenced object 0xffff000004a1b2c0 (size 64):
[   12.345678] BUG: KCSAN: data-race in zs_free / zs_malloc
[   12.345678] BUG: KFENCE: out-of-bounds read in zs_malloc+0x1c/0x200
[   12.345678] rust_kernel: panicked at drivers/block/rzram/attrs.rs:154:31:
[   12.345678] UBSAN: shift-out-of-bounds in mm/zsmalloc.c:10:5
SPLATS

# Several logs at once: one bad one fails the whole call.
if "$check" "$tmp/clean.log" "$tmp/splat.log" 2>/dev/null; then bad "multi-log call passed"; else ok "multi-log call fails on one bad log"; fi
if "$check" "$tmp/missing.log" 2>/dev/null; then bad "missing log passed"; else ok "missing log fails"; fi
[ $fails = 0 ]
