#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make bench: the benchmark protocol of shared/DESIGN.md section 5, as far as
# it is built. arm64 kernels with the same config: stock (pristine 6.12), p3
# (the first three patches) and ours (VARIANT=bench: the series, no debug
# options). All boot in the same QEMU setup (virt, Cortex-A72, 2 CPUs, TCG)
# and run the same guest benchmark; ratios compare runs of this invocation.
#
# Output: docs/benchmarks.md (and the raw logs in build/logs/).
# Env: BENCH_ROUNDS (default 5), BENCH_GRID (default the full P x N grid),
#      BENCH_KERNELS (default "stock p3 bench").
. "$(dirname "$0")/lib.sh"

rounds=${BENCH_ROUNDS:-5}
grid=${BENCH_GRID:-1:64,1:256,1:1024,2:64,2:256,2:1024}
# Runs are KERNEL:DEVICE. stock: pristine 6.12 (C zram on stock zsmalloc);
# p3: the first three patches; bench: the whole series, with the C zram on
# the patched zsmalloc and rzram in the same kernel.
runs=${BENCH_RUNS:-stock:zram p3:zram bench:zram bench:rzram}
fio_runs=${BENCH_FIO_RUNS:-stock:zram bench:zram bench:rzram}
kernels=$(for r in $runs $fio_runs; do echo "${r%%:*}"; done | sort -u)
for v in $kernels; do "$TOP/scripts/kernel.sh" arm64 "$v"; done
"$TOP/scripts/image.sh" arm64
logs=()
for r in $runs; do
	v=${r%%:*} d=${r##*:}
	"$TOP/scripts/qemu.sh" arm64 bench_munmap --variant "$v" --dev "$d" --mem 3072 \
		--timeout 5400 --label "bench-$v-$d" --quiet --append "rzrounds=$rounds rzgrid=$grid" ||
		die "the $r benchmark run failed (log: build/logs/arm64-bench-$v-$d.log)"
	logs+=("$r=$BUILD/logs/arm64-bench-$v-$d.log")
done
fio_logs=()
for r in $fio_runs; do
	v=${r%%:*} d=${r##*:}
	"$TOP/scripts/qemu.sh" arm64 bench_fio --variant "$v" --dev "$d" --mem 1024 \
		--timeout 3600 --label "fio-$v-$d" --quiet ||
		die "the $r fio run failed (log: build/logs/arm64-fio-$v-$d.log)"
	fio_logs+=("$r=$BUILD/logs/arm64-fio-$v-$d.log")
done

# The binding's cost: the rust_zsmalloc_bench KUnit case, in the bench kernel
# (no debug options), booted by kunit.py.
"$TOP/scripts/kunit.sh" --kdir "$BUILD/arm64-bench" rust_zsmalloc_bench >/dev/null ||
	die "the binding benchmark failed"
grep -h "zsmalloc bench:" "$BUILD/arm64-bench/test.log" >"$BUILD/logs/binding-bench.log" || true

RZ_LOGS=$BUILD/logs python3 - "$TOP/docs/benchmarks.md" "$rounds" "${logs[@]}" -- "${fio_logs[@]}" <<'PY'
import re, statistics, sys, datetime
args = sys.argv[3:]
sep = args.index("--")
out, rounds = sys.argv[1], sys.argv[2]
runs = [a.split("=", 1) for a in args[:sep]]
fio_runs = [a.split("=", 1) for a in args[sep + 1:]]
names = {"stock:zram": "stock zram", "p3:zram": "zram, patches 1-3",
         "bench:zram": "zram, full series", "bench:rzram": "rzram"}
pat = re.compile(r"munmap P=(\d+) N=(\d+) round=\d+ swapped_kb=(-?\d+) ms=([\d.]+) max_ms=([\d.]+)")
def medians(path):
    runs = {}
    for line in open(path, errors="replace"):
        m = pat.search(line)
        if m:
            p, n, kb, ms, mx = m.groups()
            runs.setdefault((int(p), int(n)), []).append((float(ms), int(kb)))
    return {k: (statistics.median(x[0] for x in v), len(v), min(x[1] for x in v)) for k, v in runs.items()}
data = {v: medians(path) for v, path in runs}
base = data.get("stock:zram", {})
others = [v for v, _ in runs if v != "stock:zram"]
head = "| P | N (MB) | " + " | ".join(f"{names.get(v, v)} median ms" for v, _ in runs)
head += "".join(f" | {names.get(v, v)} speedup" for v in others) + " | rounds | min swapped (MB) |"
rows = [head, "|" + "---|" * (head.count("|") - 1)]
for key in sorted(set().union(*[set(d) for d in data.values()])):
    cells = [str(key[0]), str(key[1])]
    cells += [f"{data[v][key][0]:.1f}" if key in data[v] else "-" for v, _ in runs]
    for v in others:
        s, o = base.get(key), data[v].get(key)
        cells.append(f"{s[0] / o[0]:.2f}x" if s and o and o[0] > 0 else "-")
    present = [data[v][key] for v, _ in runs if key in data[v]]
    cells.append(str(min(x[1] for x in present)))
    cells.append(str(min(x[2] for x in present) // 1024))
    rows.append("| " + " | ".join(cells) + " |")
fpat = re.compile(r"fio dev=(\S+) alg=(\S+) rw=(\S+) jobs=(\d+) bw_kib=(\d+)")
mpat = re.compile(r"memory dev=(\S+) alg=(\S+) orig=(\d+) compr=(\d+) used=(\d+) slot_bytes=(\d+)")
fio, mem = {}, {}
for r, path in fio_runs:
    for line in open(path, errors="replace"):
        m = fpat.search(line)
        if m:
            fio.setdefault(r, {})[m.group(2, 3, 4)] = int(m.group(5))
        m = mpat.search(line)
        if m:
            mem.setdefault(r, {})[m.group(2)] = tuple(int(x) for x in m.group(3, 4, 5, 6))
fnames = [r for r, _ in fio_runs]
frows = ["| alg | rw | jobs | " + " | ".join(f"{names.get(r, r)} MiB/s" for r in fnames) +
         "".join(f" | {names.get(r, r)} / stock zram" for r in fnames if r != "stock:zram") + " |"]
frows.append("|" + "---|" * (frows[0].count("|") - 1))
keys = sorted(set().union(*[set(d) for d in fio.values()])) if fio else []
for k in keys:
    cells = list(k)
    cells += [f"{fio[r][k] / 1024:.1f}" if k in fio.get(r, {}) else "-" for r in fnames]
    for r in fnames:
        if r == "stock:zram":
            continue
        b, o = fio.get("stock:zram", {}).get(k), fio.get(r, {}).get(k)
        cells.append(f"{o / b:.2f}x" if b and o else "-")
    frows.append("| " + " | ".join(cells) + " |")
if "bench:zram" in fio and "bench:rzram" in fio:
    frows.append("")
    frows.append("rzram / zram on the same kernel (full series):")
    frows.append("")
    frows.append("| alg | rw | jobs | ratio |")
    frows.append("|---|---|---|---|")
    for k in keys:
        a, b = fio["bench:rzram"].get(k), fio["bench:zram"].get(k)
        frows.append(f"| {k[0]} | {k[1]} | {k[2]} | " + (f"{a / b:.2f}x" if a and b else "-") + " |")
mrows = ["| run | alg | orig (MiB) | compr (MiB) | mem_used_total (MiB) | metadata bytes/slot |",
         "|---|---|---|---|---|---|"]
for r in fnames:
    for alg, (o, c, u, sb) in sorted(mem.get(r, {}).items()):
        mrows.append(f"| {names.get(r, r)} | {alg} | {o / 2**20:.1f} | {c / 2**20:.1f} | {u / 2**20:.1f} | {sb} |")
bpat = re.compile(r"zsmalloc bench: cycles=(\d+) rounds=(\d+) binding_ns=(\d+) c_ns=(\d+) ratio_permille=(\d+)")
brow = "not measured"
import os
blog = os.path.join(os.environ.get("RZ_LOGS", "build/logs"), "binding-bench.log")
for line in (open(blog, errors="replace") if os.path.exists(blog) else []):
    m = bpat.search(line)
    if m:
        cyc, rnd, b, c, pm = (int(x) for x in m.groups())
        brow = f"| {cyc} | {rnd} | {b} | {c} | {pm / 1000:.3f}x |"
text = f"""# rzram benchmarks

Generated by `make bench` on {datetime.date.today()}. All kernels ran in the same
`make bench` invocation, in the same QEMU setup: arm64 `-M virt -cpu cortex-a72 -smp 2`
(TCG), 3 GiB guest RAM for munmap, swap with lzo-rle, same kernel config. "stock" is
the pristine tree with the C zram; "patches 1-3" adds the class index in the obj
value, zs_free() without migrate_lock and page release after class->lock; "full
series" adds zs_free_bulk(), the deferred-free framework and zram's swap-slot free
through it; "rzram" is the Rust driver in that same full-series kernel.
Speedup is stock's median over the kernel's. These machines are noisy: compare only
within one run. Where the time goes: docs/profile-munmap.md (`make profile`).

## munmap latency

Each of P processes maps N MB of anonymous memory, fills it with data about 50%
compressible, pages it out with MADV_PAGEOUT, waits at a barrier, and times its
munmap(). Median over {rounds} rounds of the per-round mean across processes.

""" + "\n".join(rows) + """

## fio throughput

4 KiB direct I/O (psync) on a 512 MiB device after a 256 MiB fill of ~50%
compressible data (fixed seed), 8 s per row, 1 GiB guest. MiB/s; ratios against
stock zram, and rzram against the C zram in the same kernel.

""" + "\n".join(frows) + """

## Memory

mm_stat after the 256 MiB fill (same data for every run). Metadata bytes per slot:
rzram reports its `slot_bytes` attribute (the same in every configuration); for zram
the figure is sizeof(struct zram_table_entry) in 6.12 on 64-bit without lockdep (an
`unsigned long` handle and an `unsigned int` flags word, padded to 16), which grows
with CONFIG_DEBUG_LOCK_ALLOC.

""" + "\n".join(mrows) + """

## The zsmalloc binding's cost

ns per alloc + write (the whole object) + free cycle over the size mix 64..4096
bytes, through `kernel::zsmalloc` and through direct calls of the C functions from
the same test (`rust_zsmalloc_bench`, bench kernel: arm64 TCG, no debug options). Median
of the rounds, the two variants alternating.

| cycles | rounds | binding ns | C ns | binding / C |
|---|---|---|---|---|
""" + brow + "\n"
open(out, "w").write(text)
print(text)
PY
