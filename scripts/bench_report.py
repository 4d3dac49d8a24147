#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench's report: docs/benchmarks.md (and the munmap plot) from the logs.

usage: bench_report.py --out FILE --logs DIR [--max-other C] [--plot PNG]
                       KERNEL=MUNMAP_LOG...

Each munmap log is one boot of KERNEL (stock, p3, bench); next to it the
monitor's samples (the same name, .tsv). The notify, fio and binding logs are
found in DIR by name. A round is dropped when, between its "bench-begin" line
and its result, the host's CPUs spent more than C CPUs on anything but QEMU.
"""
import argparse
import datetime
import math
import os
import random
import re
import statistics
import subprocess
import sys

HZ = os.sysconf("SC_CLK_TCK")
NAMES = {"stock:zram": "stock zram", "p3:zram": "zram, patches 1-3",
         "p3-zspage:zram": "zram, 1-3 + zspage release deferred",
         "p3-zsfree:zram": "zram, 1-3 + zs_free deferred",
         "bench:zram": "zram, full series", "bench:rzram": "rzram",
         "bench:brd": "floor (brd, no notify)"}
ORDER = ["stock:zram", "p3:zram", "p3-zspage:zram", "p3-zsfree:zram", "bench:zram",
         "bench:rzram", "bench:brd"]
# The layering breakdown: each step against the full series' callbacks.
LAYERS = ["p3:zram", "p3-zspage:zram", "p3-zsfree:zram"]
REMOVERS = LAYERS + ["bench:zram", "bench:rzram"]

BEGIN = re.compile(r"bench-begin dev=(\S+) P=(\d+) N=(\d+) round=(\d+)")
MUNMAP = re.compile(r"munmap dev=(\S+) P=(\d+) N=(\d+) round=(\d+) swapped_kb=(-?\d+) "
                    r"ms=([\d.]+) max_ms=([\d.]+) ret_ms=(-?[\d.]+)")
STATS = re.compile(r"bench-stats dev=(\S+) pushed=(\d+) drained=(\d+) sync_frees=(\d+) "
                   r"pages=(\d+) spare=(\d+) notify_free=(\d+) miss_free=(\d+)")
NOTIFY = re.compile(r"notify dev=(\S+?)0? n=(\d+) dev_ns=(\d+) null_ns=(\d+)(?: stride=(\d+))?"
                    r"(?: drain_ns=(-?\d+) base_ns=(-?\d+))? "
                    r"round=(\d+) warm=(\d) sync_frees=(\d+)")
VERIFY = re.compile(r"verify dev=(\S+) alg=(\S+) ok")
FIO = re.compile(r"fio dev=(\S+) alg=(\S+) rw=(\S+) jobs=(\d+) round=(\d+) bw_kib=(\d+)"
                 r"(?: cpu_ms_gib=(\d+))?")
FIO_BEGIN = re.compile(r"fio-begin dev=")
MEM = re.compile(r"memory dev=(\S+) alg=(\S+) orig=(\d+) compr=(\d+) used=(\d+) slot_bytes=(\d+)")
BIND = re.compile(r"zsmalloc bench: cycles=(\d+) rounds=(\d+) binding_ns=(\d+) c_ns=(\d+) "
                  r"ratio_permille=(\d+)")


class Monitor:
    """The host samples of one boot: other load in a window of log lines."""

    def __init__(self, path):
        self.s = []
        if os.path.exists(path):
            for line in open(path).read().splitlines()[1:]:
                t, lines, l1, busy, q = line.split("\t")
                self.s.append((float(t), int(lines), float(l1), int(busy), int(q)))

    def window(self, first, last):
        """(other CPUs, load before, load after) between log lines first..last (0-based)."""
        if len(self.s) < 2:
            return None
        a = [x for x in self.s if x[1] <= first]
        b = [x for x in self.s if x[1] >= last + 1]
        a = a[-1] if a else self.s[0]
        b = b[0] if b else self.s[-1]
        dt = b[0] - a[0]
        if dt <= 0:
            return (0.0, a[2], b[2])
        other = max(0, (b[3] - a[3]) - (b[4] - a[4])) / HZ / dt
        return (other, a[2], b[2])


def lines_of(path):
    # Split on "\n" alone, as the host monitor counts lines: a stray "\r" is not a line.
    return open(path, newline="", errors="replace").read().split("\n")


def bootstrap(a, b, n=2000):
    """median(a) / median(b) and its bootstrap 95% interval."""
    rng = random.Random(12345)
    r = []
    for _ in range(n):
        ra = statistics.median(rng.choice(a) for _ in a)
        rb = statistics.median(rng.choice(b) for _ in b)
        r.append(ra / rb if rb else float("inf"))
    r.sort()
    return statistics.median(a) / statistics.median(b), r[int(0.025 * n)], r[int(0.975 * n) - 1]


def paired(ratios, n=2000):
    """The median of per-round ratios (each of two adjacent runs) and its bootstrap 95%
    interval, resampling the pairs together."""
    rng = random.Random(12345)
    r = sorted(statistics.median(rng.choice(ratios) for _ in ratios) for _ in range(n))
    return statistics.median(ratios), r[int(0.025 * n)], r[int(0.975 * n) - 1]


def iqr(v):
    if len(v) < 2:
        return (v[0], v[0]) if v else (0, 0)
    q = statistics.quantiles(v, n=4)
    return q[0], q[2]


def fmt_ci(x):
    return f"{x[0]:.2f} [{x[1]:.2f}, {x[2]:.2f}]"


def munmap(runs, max_other):
    """{(run, P, N): {ms: [], ret: [], kb: [], sync: [], pushed: [], miss: [], load: []}}, dropped."""
    data, dropped, unmonitored = {}, [], 0
    for kernel, path in runs:
        mon = Monitor(os.path.splitext(path)[0] + ".tsv")
        begin, last_stats, current = {}, {}, None
        for i, line in enumerate(lines_of(path)):
            m = BEGIN.search(line)
            if m:
                begin[m.group(1)] = i
                continue
            m = MUNMAP.search(line)
            if m:
                dev, p, n, r, kb, ms, _mx, ret = m.groups()
                w = mon.window(begin.get(dev, i), i)
                current = None
                if dev.startswith("warm-"):
                    continue
                key = (f"{kernel}:{dev}", int(p), int(n))
                if w is None:
                    unmonitored += 1
                elif w[0] > max_other:
                    dropped.append((key, int(r), w))
                    continue
                d = data.setdefault(key, {k: [] for k in
                                          ("ms", "ret", "kb", "sync", "pushed", "miss", "load")})
                d["ms"].append(float(ms))
                d["kb"].append(int(kb))
                if float(ret) >= 0:
                    d["ret"].append(float(ret))
                if w:
                    d["load"].append((w[1], w[2], w[0]))
                current = d
                continue
            m = STATS.search(line)
            if m:
                dev = m.group(1).removeprefix("warm-")
                v = [int(x) for x in m.groups()[1:]]
                prev = last_stats.get(dev, [0] * len(v))
                last_stats[dev] = v
                if current is not None and not m.group(1).startswith("warm-"):
                    current["pushed"].append(v[0] - prev[0])
                    current["sync"].append(v[2] - prev[2])
                    current["miss"].append(v[6] - prev[6])
                    current.setdefault("pages", []).append(v[3])
                    current.setdefault("spare", []).append(v[4])
                current = None
    return data, dropped, unmonitored


def med(v, fmt="{:.1f}"):
    """The median of v, formatted, or "-" for none."""
    return fmt.format(statistics.median(v)) if v else "-"


def head_commit():
    """HEAD's short hash, or "unknown"."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def munmap_logs(prog):
    """The command line of a report over munmap logs (--out FILE [--max-other X] KEY=LOG...):
    (args, [(key, log)], data, dropped, unmonitored), as munmap() reads them."""
    a = argparse.ArgumentParser(prog=prog)
    a.add_argument("--out", required=True)
    a.add_argument("--max-other", type=float, default=0.25)
    a.add_argument("runs", nargs="+")
    args = a.parse_args()
    runs = [r.split("=", 1) for r in args.runs]
    data, dropped, unmon = munmap(runs, args.max_other)
    if not data:
        sys.exit(f"{prog}: no munmap runs in the logs")
    return args, runs, data, dropped, unmon


def write_report(path, out, dropped, unmonitored, max_other):
    """Write the lines out to path, with what was dropped or unmonitored."""
    if dropped:
        out += ["", f"{len(dropped)} runs dropped: the host used more than {max_other} "
                "CPUs besides the guest during them."]
    if unmonitored:
        out += ["", f"{unmonitored} runs had no host monitor samples."]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


DEFAULT_GRID = [(1, 64), (1, 256), (1, 1024), (2, 64), (2, 256), (2, 1024)]
GRID = re.compile(r"bench-grid (.+)")


def munmap_grid(runs):
    """The cells (P, N) the munmap boots were asked to run ("bench-grid" lines)."""
    cells = set()
    for _kernel, path in runs:
        for line in lines_of(path):
            m = GRID.search(line)
            if m:
                for pn in m.group(1).split():
                    p, _, n = pn.partition(":")
                    if p.isdigit() and n.isdigit():
                        cells.add((int(p), int(n)))
    return cells


def grid_text(data, asked, dropped=()):
    """Which cells of the default grid, or of the grid asked for, have no rounds in the table,
    and why."""
    have = {(k[1], k[2]) for k in data}
    busy = {(k[1], k[2]) for k, _r, _w in dropped}
    out = []
    for p, n in sorted(set(DEFAULT_GRID) | set(asked or ())):
        if (p, n) in have:
            continue
        if asked and (p, n) not in asked:
            why = "not in this run's grid (BENCH_GRID)"
        elif (p, n) in busy:
            why = "every round dropped (host busy)"
        elif asked:
            why = "asked for, but no round in the logs (did a boot end early?)"
        else:
            why = "no round in the logs"
        out.append(f"P={p} x {n} MB: {why}")
    if not out:
        return ["Every cell of the default grid is in the table."]
    return ["Cells of the default grid missing from the table: " + "; ".join(out) + "."]


def munmap_text(data, dropped, unmonitored, max_other, asked=None):
    out = []
    cells = sorted({(k[1], k[2]) for k in data})
    runs = [r for r in ORDER if any((r, p, n) in data for p, n in cells)]
    if not cells:
        return ["Not measured in this run."], {}
    hdr = "| P | N (MB) | run | rounds | min ms | median ms | IQR ms | ns per page | speedup vs stock [95% CI] |"
    out += [hdr, "|---|---|---|---|---|---|---|---|---|"]
    summary = {}
    for p, n in cells:
        base = data.get(("stock:zram", p, n))
        for r in runs:
            d = data.get((r, p, n))
            if not d or not d["ms"]:
                continue
            med = statistics.median(d["ms"])
            q1, q3 = iqr(d["ms"])
            pages = statistics.median(d["kb"]) / 4 if d["kb"] else 0
            ns = f"{med * 1e6 / pages:.0f}" if pages else "-"
            sp = "-"
            if base and r != "stock:zram":
                sp = fmt_ci(bootstrap(base["ms"], d["ms"]))
            out.append(f"| {p} | {n} | {NAMES.get(r, r)} | {len(d['ms'])} | {min(d['ms']):.1f} | "
                       f"{med:.1f} | {q1:.1f}-{q3:.1f} | {ns} | {sp} |")
            summary[(r, p, n)] = med
    out += ["", f"Rounds dropped because the host was busy (more than {max_other} CPUs used by "
            f"anything but QEMU during the round): {len(dropped)}"
            + (f"; rounds without host samples (kept): {unmonitored}" if unmonitored else "") + "."]
    out += [""] + grid_text(data, asked, dropped)
    # rzram against the C zram in the same kernel, and the floor.
    out += ["", "### rzram against the C zram on the same series, and the removable time", "",
            "rzram / zram is the ratio of medians with its bootstrap 95% interval (below 1.0: rzram "
            "is faster). The removable time is stock's median minus the floor's (swap on brd, whose "
            "driver has no notify: the swap core's own work); each run's share is "
            "(T_stock - T) / (T_stock - T_floor).", "",
            "| P | N (MB) | rzram / zram [95% CI] | " +
            " | ".join(f"{NAMES[r]} removes" for r in REMOVERS) + " |",
            "|---|---|---|" + "---|" * len(REMOVERS)]
    for p, n in cells:
        z, rz = data.get(("bench:zram", p, n)), data.get(("bench:rzram", p, n))
        ratio = fmt_ci(bootstrap(rz["ms"], z["ms"])) if z and rz and z["ms"] and rz["ms"] else "-"
        cellv = []
        ts, tf = summary.get(("stock:zram", p, n)), summary.get(("bench:brd", p, n))
        for r in REMOVERS:
            t = summary.get((r, p, n))
            if ts is not None and tf is not None and t is not None and ts > tf:
                cellv.append(f"{100 * (ts - t) / (ts - tf):.0f}%")
            else:
                cellv.append("-")
        out.append(f"| {p} | {n} | {ratio} | " + " | ".join(cellv) + " |")
    # Memory return and the deferred free's counters.
    out += ["", "### When the memory is back, and what the deferred free did", "",
            "Return: median time from the start of the munmaps until the device's "
            "`mem_used_total` is back at its value before the fill (brd never returns its pages "
            "by itself); munmap_bench polls `mm_stat` only once every process has unmapped and "
            "exited, from CPU 0, so the polling takes no time from the munmaps or the "
            "deferred free's worker. Per round, medians: items the deferred free queued, synchronous frees "
            "(pushes that found no buffer page), its buffer pages (spare ones in brackets) after "
            "the round, and `miss_free`.", "",
            "| P | N (MB) | run | munmap ms | return ms | pushed | sync frees | buffer pages (spare) | miss_free |",
            "|---|---|---|---|---|---|---|---|---|"]
    for p, n in cells:
        for r in runs:
            d = data.get((r, p, n))
            if not d or r == "bench:brd":
                continue
            ret = f"{statistics.median(d['ret']):.1f}" if d["ret"] else "-"
            med = lambda k: f"{statistics.median(d[k]):.0f}" if d.get(k) else "-"
            pages = f"{med('pages')} ({med('spare')})" if d.get("pages") else "-"
            out.append(f"| {p} | {n} | {NAMES.get(r, r)} | {statistics.median(d['ms']):.1f} | {ret} | "
                       f"{med('pushed')} | {med('sync')} | {pages} | {med('miss')} |")
    # The layering breakdown.
    if any((r, p, n) in data for r in LAYERS[1:] for p, n in cells):
        out += ["", "### The layering breakdown", "",
                "zram on patches 1-3 alone, with a zsmalloc-internal deferral of the empty "
                "zspages' release (bench/variants/p3-zspage.patch), with zs_free() itself deferred "
                "inside zsmalloc in per-CPU batches, without callbacks (p3-zsfree.patch), against "
                "the full series, whose zram defers the slot free through the drain callbacks. "
                "Each cell: the variant's median over the full series' [95% CI]; above 1.0 the "
                "callbacks are faster. Memory return in brackets, the same ratio.", "",
                "| P | N (MB) | " + " | ".join(NAMES[r] for r in LAYERS) + " |",
                "|---|---|" + "---|" * len(LAYERS)]
        for p, n in cells:
            full = data.get(("bench:zram", p, n))
            row = []
            for r in LAYERS:
                d = data.get((r, p, n))
                if not (d and full and d["ms"] and full["ms"]):
                    row.append("-")
                    continue
                c = fmt_ci(bootstrap(d["ms"], full["ms"]))
                if d["ret"] and full["ret"]:
                    c += f" ({fmt_ci(bootstrap(d['ret'], full['ret']))})"
                row.append(c)
            out.append(f"| {p} | {n} | " + " | ".join(row) + " |")
    loads = [x for d in data.values() for x in d["load"]]
    if loads:
        out += ["", f"Host load average during the kept rounds: {min(min(x[0], x[1]) for x in loads):.2f}"
                f"-{max(max(x[0], x[1]) for x in loads):.2f} (QEMU's own vCPUs included); CPU used by "
                f"anything else: at most {max(x[2] for x in loads):.2f} CPUs."]
    return out, summary


def notify(path, max_other):
    per = {}
    if not os.path.exists(path):
        return per
    mon = Monitor(os.path.splitext(path)[0] + ".tsv")
    prev, last_sync = 0, {}
    for i, line in enumerate(lines_of(path)):
        m = NOTIFY.search(line)
        if not m:
            continue
        dev, n, dns, nns, stride, drain, base, _r, warm, sync = m.groups()
        w = mon.window(prev, i)
        prev = i
        # The device's synchronous frees are cumulative: a run whose notifies found the
        # queue full drained inline, under the timed lock, and is not the common case.
        inline = int(sync) - last_sync.get(dev, 0)
        last_sync[dev] = int(sync)
        if warm == "1" or inline > 0 or (w and w[0] > max_other):
            continue
        key = dev if stride in (None, "1") else f"{dev}/{stride}"
        per.setdefault(key, []).append((int(dns) - int(nns)) / int(n))
        per.setdefault(dev + ":null", []).append(int(nns) / int(n))
        if drain is not None and int(drain) >= 0 and int(base) >= 0:
            per.setdefault(key + ":drain", []).append((int(drain) - int(base)) / int(n))
    return per


def notify_text(logs, max_other):
    t = notify(os.path.join(logs, "arm64-bench-notify.log"), max_other)
    ic = notify(os.path.join(logs, "arm64-bench-notify-icount.log"), 1e9)
    if not t and not ic:
        return ["Not measured in this run."]
    out = ["| device | pages notified | rounds | ns per notify, median (IQR) | "
           "guest instructions per notify (icount) | and per slot drained (icount) | "
           "notify + drain (icount) |",
           "|---|---|---|---|---|---|---|"]
    strides = sorted({int(k.split("/")[1].split(":")[0]) for k in list(t) + list(ic)
                      if "/" in k})
    for key in ["zram", "rzram"] + [f"{d}/{s}" for s in strides for d in ("zram", "rzram")]:
        dev, _, stride = key.partition("/")
        which = f"one in {stride}" if stride else "every page"
        v = t.get(key, [])
        q = iqr(v) if v else (0, 0)
        ns = f"{statistics.median(v):.0f} ({q[0]:.0f}-{q[1]:.0f})" if v else "-"
        ins = f"{statistics.median(ic[key]):.0f}" if ic.get(key) else "-"
        # The drain's window also holds whatever else the kernel did: the smallest round.
        dr = ic.get(key + ":drain")
        drs = f"{min(dr):.0f}" if dr else "-"
        both = (f"{statistics.median(ic[key]) + min(dr):.0f}"
                if dr and ic.get(key) else "-")
        out.append(f"| {dev} | {which} | {len(v)} | {ns} | {ins} | {drs} | {both} |")
    nulls = t.get("zram:null", []) + t.get("rzram:null", [])
    inull = ic.get("zram:null", []) + ic.get("rzram:null", [])
    out.append(f"| empty callback (subtracted above) | | {len(nulls)} | "
               f"{statistics.median(nulls):.0f} |" if nulls else "| empty callback | | 0 | - |")
    out[-1] += f" {statistics.median(inull):.0f} | | |" if inull else " - | | |"
    if t.get("zram") and t.get("rzram"):
        out += ["", f"rzram / zram per notify: {fmt_ci(bootstrap(t['rzram'], t['zram']))}."]
    return out


FIO_ROWS = ["read", "randread", "write", "randwrite", "read-64k", "write-64k", "randread-qd16",
            "randwrite-qd16"]


def fio(path, max_other):
    """{(alg, rw, jobs): {dev: {round: (KiB/s, busy CPU ms per GiB)}}}, the dropped runs and the
    unmonitored ones: a round of a row is dropped whole (both devices) if the host was busy
    during either device's run of it."""
    mon = Monitor(os.path.splitext(path)[0] + ".tsv")
    runs, busy, begin, unmonitored = {}, set(), None, 0
    for i, line in enumerate(lines_of(path)):
        if FIO_BEGIN.search(line):
            begin = i
            continue
        m = FIO.search(line)
        if not m:
            continue
        dev, alg, rw, jobs, r, bw, cpu = m.groups()
        key = (alg, rw, int(jobs))
        # A run without its begin line cannot be matched against the samples.
        w = mon.window(begin, i) if begin is not None else None
        begin = None
        if w is None:
            unmonitored += 1
        elif w[0] > max_other:
            busy.add((key, int(r)))
        runs.setdefault(key, {}).setdefault(dev, {})[int(r)] = (
            int(bw), int(cpu) if cpu is not None else None)
    for key, r in busy:
        for d in runs[key].values():
            d.pop(r, None)
    return runs, len(busy), unmonitored


def fio_text(logs, max_other):
    path = os.path.join(logs, "arm64-bench-fio.log")
    if not os.path.exists(path):
        return ["Not measured in this run."]
    runs, ndropped, unmonitored = fio(path, max_other)
    mem = [m.groups() for m in map(MEM.search, lines_of(path)) if m]
    out = ["| alg | row | jobs | zram MiB/s (median, range) | rzram MiB/s (median, range) | "
           "rzram / zram, median of the rounds' ratios [paired 95% interval] (range) | "
           "guest CPU ms per GiB, zram / rzram (medians) |",
           "|---|---|---|---|---|---|---|"]
    meds = []

    def order(k):
        return (k[0], FIO_ROWS.index(k[1]) if k[1] in FIO_ROWS else len(FIO_ROWS), k[1], k[2])
    for k in sorted(runs, key=order):
        z, rz = runs[k].get("zram", {}), runs[k].get("rzram", {})

        def cell(d):
            v = sorted(x[0] for x in d.values())
            return f"{statistics.median(v) / 1024:.1f} ({v[0] / 1024:.1f}-{v[-1] / 1024:.1f})" if v else "-"

        def cpu(d):
            v = [x[1] for x in d.values() if x[1] is not None]
            return f"{statistics.median(v):.0f}" if v else "-"
        ratios = sorted(rz[r][0] / z[r][0] for r in z if r in rz and z[r][0])
        rr = "-"
        if ratios:
            m, lo, hi = paired(ratios)
            if m > 0:
                meds.append(m)
            rr = f"{m:.2f} [{lo:.2f}, {hi:.2f}] ({ratios[0]:.2f}-{ratios[-1]:.2f})"
        out.append(f"| {k[0]} | {k[1]} | {k[2]} | {cell(z)} | {cell(rz)} | {rr} | {cpu(z)} / {cpu(rz)} |")
    if meds:
        gm = math.exp(sum(math.log(x) for x in meds) / len(meds))
        nr = max((len(v) for k in runs for v in runs[k].values()), default=0)
        out += ["", f"Geometric mean of the rows' medians: {gm:.3f} ({len(meds)} rows, up to {nr} "
                "rounds each)."]
    out += ["", f"Rounds dropped because the host was busy (more than {max_other} CPUs used by "
            f"anything but QEMU during either device's run): {ndropped}"
            + (f"; runs without host samples (kept): {unmonitored}" if unmonitored else "") + "."]
    verified = sum(1 for line in lines_of(path) if VERIFY.search(line))
    out += ["", f"Verify passes (crc32c, every byte read back): {verified} passed." if verified
            else "No verify pass in this log."]
    out += ["", "| device | alg | orig (MiB) | compr (MiB) | mem_used_total (MiB) | metadata bytes/slot |",
            "|---|---|---|---|---|---|"]
    for dev, alg, o, c, u, sb in mem:
        out.append(f"| {dev} | {alg} | {int(o) / 2**20:.1f} | {int(c) / 2**20:.1f} | {int(u) / 2**20:.1f} | {sb} |")
    return out


def plot(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ps = sorted({k[1] for k in data})
    fig, axes = plt.subplots(1, len(ps), figsize=(6 * len(ps), 4.5), squeeze=False)
    for ax, p in zip(axes[0], ps):
        for r in ORDER:
            pts = sorted((k[2], statistics.median(d["ms"])) for k, d in data.items()
                         if k[0] == r and k[1] == p and d["ms"])
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o",
                        linestyle="--" if r == "bench:brd" else "-", label=NAMES[r])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("MB unmapped per process")
        ax.set_ylabel("munmap ms (median)")
        ax.set_title(f"P = {p} process{'es' if p > 1 else ''}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--out", required=True)
    a.add_argument("--logs", required=True)
    a.add_argument("--max-other", type=float, default=0.25)
    a.add_argument("--plot", default="")
    a.add_argument("runs", nargs="*")
    args = a.parse_args()
    runs = [r.split("=", 1) for r in args.runs]
    data, dropped, unmon = munmap(runs, args.max_other)
    mtext, _ = munmap_text(data, dropped, unmon, args.max_other, munmap_grid(runs))
    if args.plot and data:
        plot(data, args.plot)
    bind = "| - | - | - | - | not measured |"
    blog = os.path.join(args.logs, "binding-bench.log")
    for line in (open(blog, errors="replace") if os.path.exists(blog) else []):
        m = BIND.search(line)
        if m:
            cyc, rnd, b, c, pm = (int(x) for x in m.groups())
            bind = f"| {cyc} | {rnd} | {b} | {c} | {pm / 1000:.3f}x |"
    kernels = sorted({k for k, _ in runs})
    text = f"""# rzram benchmarks

Generated by `make bench` on {datetime.date.today()} ({len(runs)} munmap boots of
{', '.join(kernels) if kernels else 'no kernel'}). The protocol (scripts/bench.sh):

- **Same setup**: arm64 `-M virt -cpu cortex-a72 -smp 2`, TCG, every kernel with the same
  config (`CONFIG_PREEMPT=y`, the preemption model of Raspberry Pi OS and Android kernels; no
  debug options). "stock" is pristine 6.12 with the C zram; "patches 1-3" adds the class index
  in the obj value, zs_free() without migrate_lock and page release after class->lock; the two
  layering variants add to patches 1-3 a zsmalloc-internal deferral (bench/variants): of the
  empty zspages' release only, or of zs_free() itself, in per-CPU batches; "full
  series" adds zs_free_bulk(), the deferred-free framework and zram's swap-slot free through
  it; "rzram" is the Rust driver in that same kernel; the floor is swap on brd in that kernel.
- **Quiet host**: no boot starts until the host's 1-minute load average is below the threshold
  (first boot) and nothing else uses its CPUs; during each boot the host is sampled twice a
  second, and a round during which anything but QEMU used more than {args.max_other} CPUs is
  dropped.
- **Pinned**: QEMU's vCPU threads are pinned to host CPUs (their thread ids from QMP); in the
  guest the benchmark process runs on CPU 0 (with P = 2, one process on each CPU) and the
  unbound workqueues, where the deferred free's worker runs, on CPU 1.
- **Interleaved**: the devices of one kernel alternate round by round in one boot (the order
  rotating); kernels alternate boot by boot. One warm-up round per boot is dropped.
- **Statistics**: medians with the interquartile range; speedups are ratios of medians with a
  bootstrap 95% interval. TCG timing is noisy and inflates calls, returns and atomics more than
  straight-line work: compare only within one run.

## munmap latency

Each of P processes maps N MB of anonymous memory, fills it with data about 50%
compressible, pages it out with MADV_PAGEOUT, waits at a barrier, and times its
munmap(): the per-round figure is the mean across processes. Swap with lzo-rle.
Plot: `benchmarks-munmap.png`. The same benchmark with zswap in front of swap on brd
(the deferred free's second user), on its own kernels, is in `benchmarks-zswap.md`.

""" + "\n".join(mtext) + """

## The cost of one notify

`bench/notify_bench` (a module of the bench kernel) writes 4096 pages through the device's
own write path, then calls the device's `swap_slot_free_notify()` under a spinlock (swap
holds `si->lock` there), timed with the guest counter, and then an empty callback the same
way, whose cost is subtracted. It notifies every page, in order, as an exiting process frees
its swap, and then one page in 32: for rzram each of those is the first notify of its word of
the stale bitmap and queues the word (the worst case; in order, one notify in 32 does). The
devices alternate. The instruction counts come from a second boot with one vCPU under
`-icount shift=0`, where a guest instruction takes one virtual nanosecond. The drain is
counted there too: after the notifies the module sleeps for 200 ms twice and takes the time
the CPU was not idle in each sleep, the first holding the device's deferred free of what the
notifies queued (its window opens before the notifies' lock is dropped), the second the same
window without it; the difference per notified slot is the drain's cost, to the microsecond
of idle accounting (up to 4000 instructions over the run), the smallest over the rounds,
since anything else the kernel did in a window adds to it. Notify plus drain is what one
freed swap slot costs the device in all. Rounds whose notifies found the queue full (the
device's synchronous frees moved) are left out: their notifies drained inline.

""" + "\n".join(notify_text(args.logs, args.max_other)) + """

## fio throughput

Direct I/O on a 512 MiB device after a 256 MiB fill of ~50% compressible data (fixed seed),
4 s per run, 1 GiB guest, the bench kernel. Rows: 4 KiB sequential and random reads and writes
with psync, one and two jobs; `-64k`, 64 KiB sequential reads and writes; `-qd16`, 4 KiB random
reads and writes through io_uring at iodepth 16. The C zram and rzram alternate run by run,
each first in half the rounds; one job is pinned to CPU 0, two jobs one to each CPU, each on
its own half of the data. Each run is bracketed in the log and matched against the host
monitor's samples, as the munmap rounds are; a round during which the host was busy is
dropped for both devices. The ratio is taken per round (adjacent runs); its median, a
bootstrap 95% interval resampling those pairs, and its range over the rounds are given. The
guest's busy CPU time (user, nice, system, irq and softirq, all CPUs, from `/proc/stat`) per
GiB moved is the cost side of the same runs; it spans the whole fio process, its start, exit
and user-space buffer refills (writes) included, a fixed cost that weighs less per GiB on the
faster device.
Guest instructions per page for the same paths, which TCG's timing noise cannot blur, are in
`benchmarks-iocount.md`, and where they go, function by function, in `benchmarks-breakdown.md`.

""" + "\n".join(fio_text(args.logs, args.max_other)) + """

## The zsmalloc binding's cost

ns per alloc + write (the whole object) + free cycle over the size mix 64..4096 bytes, through
`kernel::zsmalloc` and through direct calls of the C functions from the same test
(`rust_zsmalloc_bench`, bench kernel booted by kunit.py). Median of the rounds, the two
variants alternating.

| cycles | rounds | binding ns | C ns | binding / C |
|---|---|---|---|---|
""" + bind + "\n"
    open(args.out, "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
