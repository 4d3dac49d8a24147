# SPDX-License-Identifier: GPL-2.0
# gdb (gdb-multiarch) script for scripts/trace_path.sh: attached to QEMU's
# gdbstub, steps through every call of the C zram's and rzram's submit_bio,
# one guest instruction at a time, and writes one JSON line per call: the
# instructions executed in each function. Shared leaf routines (memcpy,
# memset, the compressors' cores, copy_page) are run through, not stepped,
# and only their calls are counted: they are the same code for both drivers,
# and stepping them would take minutes a page. Each sync(2) in the guest is a
# marker line. Exceptions taken while stepping are run through to their
# return. Run under -icount shift=0, so that stepping does not let the guest's
# timers fire at every step.
import gdb
import json
import os
import time

SKIP = set("""memcpy memset memmove __pi_memcpy __pi_memset __pi_memmove copy_page
__pi_copy_page rust_helper_memset_l memset64 __memset64 LZ4_compress_fast
LZ4_compress_HC LZ4_decompress_safe LZ4_decompress_safe_partial lzo1x_1_compress
lzorle1x_1_compress lzo1x_decompress_safe zstd_compress_cctx zstd_decompress_dctx
""".split())
MASK = (1 << 64) - 1
KERNEL = 0xffff000000000000

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


def run_to(addr):
    gdb.execute("tbreak *0x%x" % addr, to_string=True)
    gdb.execute("continue", to_string=True)


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
    ret, sp0 = reg("$x30"), reg("$sp")
    counts, calls = {}, {}
    gdb.execute("disable", to_string=True)
    lost, steps = False, 0
    while True:
        pc = reg("$pc")
        if pc == ret and reg("$sp") >= sp0:
            break
        if pc < KERNEL or steps > 1000000:
            lost = True  # out of the kernel or astray: drop this call
            break
        f = symbol(pc)
        if f == "vectors":
            calls["(exception)"] = calls.get("(exception)", 0) + 1
            run_to(reg("$ELR_EL1"))
            continue
        if f in SKIP:
            calls[f] = calls.get(f, 0) + 1
            run_to(reg("$x30"))
            continue
        counts[f] = counts.get(f, 0) + 1
        steps += 1
        gdb.execute("stepi", to_string=True)
    gdb.execute("enable", to_string=True)
    if lost:
        out.write('{"lost": 1}\n')
        out.flush()
        continue
    out.write(json.dumps({"drv": "zram" if drv == "zram_submit_bio" else "rzram",
                          "counts": counts, "calls": calls}) + "\n")
    out.flush()
