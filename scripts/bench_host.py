#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The host side of make bench (scripts/bench.sh).

  bench_host.py wait-quiet [--max-load L] [--max-other C] [--timeout S]
      Waits until the host is quiet: the 1-minute load average below L (if
      given) and the CPU time of everything on the host below C CPUs over a
      few seconds. Exits 1 if it is not quiet within S seconds.

  bench_host.py monitor --qmp SOCKET --log LOG --out TSV
      For one QEMU boot: finds the vCPU threads through QMP and pins vCPU i
      to host CPU i (modulo the host's CPUs), then samples twice a second,
      until QEMU exits: the time, the console log's line count, the load
      average, the host's busy CPU ticks and QEMU's own. The report uses it
      to find rounds during which something else ran on the host.
"""
import argparse
import json
import os
import socket
import sys
import time


def busy_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    return v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def proc_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        # utime and stime: fields 14 and 15, 12 and 13 after the name.
        return int(rest[11]) + int(rest[12])
    except (OSError, IndexError, ValueError):
        return None


HZ = os.sysconf("SC_CLK_TCK")


def wait_quiet(a):
    deadline = time.time() + a.timeout
    while True:
        t0, b0 = time.time(), busy_ticks()
        time.sleep(3)
        other = (busy_ticks() - b0) / HZ / (time.time() - t0)
        l1 = load1()
        if other < a.max_other and (a.max_load is None or l1 < a.max_load):
            print(f"bench: host quiet: load {l1:.2f}, {other:.2f} CPUs busy")
            return 0
        if time.time() > deadline:
            print(f"bench: host not quiet after {a.timeout}s: load {l1:.2f}, "
                  f"{other:.2f} CPUs busy", file=sys.stderr)
            return 1
        print(f"bench: waiting for a quiet host: load {l1:.2f}, {other:.2f} CPUs busy",
              flush=True)
        time.sleep(10)


def qmp_threads(path):
    deadline = time.time() + 120
    while not os.path.exists(path):
        if time.time() > deadline:
            raise SystemExit(f"bench: no QMP socket {path}")
        time.sleep(0.2)
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    f = s.makefile("rw")
    json.loads(f.readline())

    def cmd(c):
        f.write(json.dumps({"execute": c}) + "\n")
        f.flush()
        while True:
            r = json.loads(f.readline())
            if "return" in r or "error" in r:
                return r.get("return")

    cmd("qmp_capabilities")
    cpus = cmd("query-cpus-fast") or []
    s.close()
    return [(c["cpu-index"], c["thread-id"]) for c in cpus]


def monitor(a):
    threads = qmp_threads(a.qmp)
    ncpu = os.cpu_count() or 1
    pid = None
    for idx, tid in threads:
        try:
            os.sched_setaffinity(tid, {idx % ncpu})
        except OSError as e:
            print(f"bench: pinning vCPU {idx}: {e}", file=sys.stderr)
        if pid is None:
            with open(f"/proc/{tid}/status") as f:
                for line in f:
                    if line.startswith("Tgid:"):
                        pid = int(line.split()[1])
    print("bench: vCPU threads " + ", ".join(f"{i}->{t} (host CPU {i % ncpu})" for i, t in threads),
          flush=True)
    with open(a.out, "w") as out:
        out.write("time\tlines\tload1\tbusy_ticks\tqemu_ticks\n")
        while True:
            q = proc_ticks(pid)
            if q is None:
                break
            try:
                with open(a.log, "rb") as f:
                    lines = f.read().count(b"\n")
            except OSError:
                lines = 0
            out.write(f"{time.time():.3f}\t{lines}\t{load1():.2f}\t{busy_ticks()}\t{q}\n")
            out.flush()
            time.sleep(0.5)
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("wait-quiet")
    w.add_argument("--max-load", type=float)
    w.add_argument("--max-other", type=float, default=0.3)
    w.add_argument("--timeout", type=float, default=1800)
    m = sub.add_parser("monitor")
    m.add_argument("--qmp", required=True)
    m.add_argument("--log", required=True)
    m.add_argument("--out", required=True)
    a = p.parse_args()
    return wait_quiet(a) if a.cmd == "wait-quiet" else monitor(a)


if __name__ == "__main__":
    sys.exit(main())
