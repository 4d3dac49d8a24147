# SPDX-License-Identifier: GPL-2.0
# gdb (gdb-multiarch) script for scripts/trace_path.sh: attached to QEMU's
# gdbstub, steps through every call of the C zram's and rzram's submit_bio,
# one guest instruction at a time, and writes one JSON line per call: the
# instructions the calling task executed in each function. Shared leaf
# routines (memcpy, memset, copy_page, the compressors' cores) are run
# through, not stepped, and only their calls are counted; so are a switch to
# another task (__schedule, until the task is back: a task is told by its
# kernel stack) and softirqs run on the way. Each sync(2) in the guest is a marker line. A call that
# takes an exception while stepped, or leaves the kernel, is dropped (a
# "lost" line). Run under -icount shift=0, so that stepping does not let the
# guest's timers fire at every step; steps run with interrupts masked.
import gdb
import json
import os
import time

SKIP = set("""memcpy memset memmove __pi_memcpy __pi_memset __pi_memmove copy_page
__pi_copy_page rust_helper_memset_l memset64 __memset64 LZ4_compress_fast
LZ4_compress_HC LZ4_decompress_safe LZ4_decompress_safe_partial lzo1x_1_compress
lzorle1x_1_compress lzo1x_decompress_safe zstd_compress_cctx zstd_decompress_dctx
zlib_deflate zlib_inflate sw842_compress sw842_decompress
""".split())
# Work done for others on the way, run through and counted by calls only:
# another task (until this one is back) and softirqs (on the IRQ stack, or on
# this one).
ELSEWHERE = {"__schedule": "(switched out)", "call_on_irq_stack": "(softirqs)",
             "__do_softirq": "(softirqs)", "handle_softirqs": "(softirqs)"}
# Kernel stacks are THREAD_SIZE (16 KiB) and aligned to it: the stack's base
# tells the task.
STACK_MASK = ~(16 * 1024 - 1) & ((1 << 64) - 1)
MASK = (1 << 64) - 1
KERNEL = 0xffff000000000000
# TRACE_PCS=1: each call's line also counts the instructions by address ("pcs"),
# to read against the disassembly.
PCS = os.environ.get("TRACE_PCS") == "1"

out = open(os.environ["TRACE_OUT"], "w")
gdb.execute("set pagination off")
gdb.execute("set confirm off")
for attempt in range(100):  # QEMU may not be listening yet
    try:
        gdb.execute("target remote 127.0.0.1:%s" % os.environ["TRACE_PORT"], to_string=True)
        break
    except gdb.error:
        time.sleep(0.2)
else:
    raise gdb.GdbError("no gdbstub on port %s" % os.environ["TRACE_PORT"])
# Single steps with interrupts and timers masked (QEMU's default, made sure).
gdb.execute("maintenance packet Qqemu.sstep=0x7", to_string=True)


def reg(name):
    return int(gdb.parse_and_eval(name)) & MASK


entries = {}
for name in ("zram_submit_bio", "ksys_sync"):
    entries[int(gdb.parse_and_eval("(long)&%s" % name)) & MASK] = name
# rzram's submit_bio callback, a Rust generic's instance: found in System.map by
# trace_path.sh.
entries[int(os.environ["TRACE_RZRAM"], 16)] = "rzram"
for addr in entries:
    gdb.execute("break *0x%x" % addr, to_string=True)

names = {}


def symbol(pc):
    s = names.get(pc)
    if s is None:
        s = gdb.execute("info symbol 0x%x" % pc, to_string=True)
        s = s.split(" + ")[0].split(" in section")[0].strip()
        names[pc] = s
    return s


def run_to(addr, base):
    """Runs until this task (stack base `base`) reaches `addr`."""
    gdb.execute("tbreak *0x%x if ($sp & 0x%x) == 0x%x" % (addr, STACK_MASK, base),
                to_string=True)
    gdb.execute("continue", to_string=True)


def trace_call(ret, sp0):
    """Steps the call until it returns to `ret`; None if lost."""
    base = sp0 & STACK_MASK
    counts, calls, steps, pcs = {}, {}, 0, {}
    while True:
        pc = reg("$pc")
        if pc == ret and reg("$sp") >= sp0 and reg("$sp") & STACK_MASK == base:
            hit = {"counts": counts, "calls": calls}
            if PCS:
                hit["pcs"] = {"%x" % k: v for k, v in pcs.items()}
            return hit
        if pc < KERNEL or steps > 1000000:
            return None  # out of the kernel or astray
        f = symbol(pc)
        if f == "vectors" or reg("$sp") & STACK_MASK != base:
            return None  # an exception taken while stepped
        if f in SKIP or f in ELSEWHERE:
            k = ELSEWHERE.get(f, f)
            calls[k] = calls.get(k, 0) + 1
            run_to(reg("$x30"), base)
            continue
        counts[f] = counts.get(f, 0) + 1
        if PCS:
            pcs[pc] = pcs.get(pc, 0) + 1
        steps += 1
        gdb.execute("stepi", to_string=True)


try:
    while True:
        try:
            gdb.execute("continue", to_string=True)
            pc = reg("$pc")
        except gdb.error:
            break  # the guest is gone
        drv = entries.get(pc)
        if drv is None:
            continue
        if drv == "ksys_sync":
            out.write('{"marker": 1}\n')
            out.flush()
            continue
        gdb.execute("disable", to_string=True)
        try:
            hit = trace_call(reg("$x30"), reg("$sp"))
        except gdb.error:
            hit = None
        gdb.execute("enable", to_string=True)
        if hit is None:
            out.write('{"lost": 1}\n')
        else:
            hit["drv"] = "zram" if drv == "zram_submit_bio" else "rzram"
            out.write(json.dumps(hit) + "\n")
        out.flush()
except BaseException:
    # Whatever failed, the guest must not run on unobserved (nor wait, stopped, for the time
    # limit): the shell script sees gdb's failure.
    try:
        gdb.execute("kill", to_string=True)
    except gdb.error:
        pass
    raise
