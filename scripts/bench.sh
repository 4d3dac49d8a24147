#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make bench: the benchmark protocol (docs/benchmarks.md says what it does and
# what it measured). arm64 kernels with the same config: stock (pristine
# 6.12), p3 (the first three patches), p3-zspage and p3-zsfree (p3 with a
# zsmalloc-internal deferral from bench/variants: the layering breakdown) and
# bench (VARIANT=bench: the series, no debug options, with the C zram, rzram
# and brd, and the notify_bench module). All boot in the same QEMU setup
# (virt, Cortex-A72, 2 vCPUs, TCG).
#
# The protocol: the host must be quiet before the first boot (load average)
# and before every boot (CPU use), and is watched during every boot
# (scripts/bench_host.py monitor): rounds during which something else used
# the host are dropped. QEMU's vCPU threads are pinned to host CPUs; in the
# guest the benchmark runs on CPU 0 and the unbound workqueues on CPU 1.
# Devices of one kernel alternate round by round in one boot; kernels
# alternate boot by boot (BENCH_BOOTS cycles, each with its share of the
# rounds and one warm-up round that is dropped).
#
# The zswap part: the munmap benchmark with zswap in front of swap on brd, on
# stock (pristine 6.12), pre-zswap (the series up to the patch before its
# zswap patch) and zswap (up to that patch), one config (zswap.config), and
# the floor (swap on brd, zswap off) on the last. BENCH_PARTS=zswap alone
# builds and boots only those three kernels.
#
# Output: docs/benchmarks.md, docs/benchmarks-munmap.png,
# docs/benchmarks-iocount.md, docs/benchmarks-breakdown.md,
# docs/benchmarks-zswap.md, and the raw logs in build/logs/ (bench-*.log, with
# the monitor's bench-*.tsv).
# Env: BENCH_ROUNDS (measured rounds per cell, default 15), BENCH_BOOTS
#      (default 3), BENCH_GRID (default 1:64,1:256,1:1024,2:64,2:256,2:1024),
#      BENCH_KERNELS (default "stock p3 p3-zspage p3-zsfree bench"),
#      BENCH_PARTS (default "munmap notify fio binding writeback handoff
#      zswap iocount breakdown"), BENCH_ZSWAP_ROUNDS (zswap: measured rounds
#      per cell, default 3), BENCH_ZSWAP_BOOTS (default 1), BENCH_ZSWAP_GRID
#      (default BENCH_GRID's default), BENCH_TRACE_ALGS (breakdown, default lz4),
#      BENCH_HANDOFF (handoff: rzram's deferred-free batches, in words of 32
#      slots, set through debugfs; default "0 8 32 128"), BENCH_HANDOFF_ROUNDS (default 5), BENCH_HANDOFF_GRID
#      (default 1:64,1:256,1:1024,2:64,2:256),
#      BENCH_MAX_LOAD (1-minute load to start, default 1.0), BENCH_MAX_OTHER
#      (CPUs that others may use during a round, default 0.25),
#      BENCH_FIO_ROUNDS (default 10, even: each device first in half), BENCH_NOTIFY_PAGES (default 4096).
. "$(dirname "$0")/lib.sh"

rounds=${BENCH_ROUNDS:-15}
boots=${BENCH_BOOTS:-3}
grid=${BENCH_GRID:-1:64,1:256,1:1024,2:64,2:256,2:1024}
kernels=${BENCH_KERNELS:-stock p3 p3-zspage p3-zsfree bench}
parts=" ${BENCH_PARTS:-munmap notify fio binding writeback handoff zswap iocount breakdown} "
# The breakdown's debugger, checked before hours of the other parts.
if [[ "$parts" == *" breakdown "* ]] && ! command -v gdb-multiarch >/dev/null; then
	die "the breakdown part needs gdb-multiarch (make deps installs it)"
fi
max_load=${BENCH_MAX_LOAD:-1.0}
max_other=${BENCH_MAX_OTHER:-0.25}
host=$TOP/scripts/bench_host.py
per_boot=$(((rounds + boots - 1) / boots))

case "$parts" in *" munmap "*) ;; *) kernels=bench ;; esac
# The zswap part boots only its own kernels: without another part, no bench
# kernel is built.
[ "$(echo $parts)" = zswap ] && kernels=
# The plot needs matplotlib: a bench-only package, from the package registry,
# for the distribution's python3 (which a python3 earlier in PATH may hide).
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
	note "installing python3-matplotlib for the plot"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-matplotlib >/dev/null ||
		note "python3-matplotlib could not be installed: no plot"
fi
zkernels="stock pre-zswap zswap"
for v in $kernels; do "$TOP/scripts/kernel.sh" arm64 "$v"; done
if [[ "$parts" == *" zswap "* ]]; then
	for v in $zkernels; do "$TOP/scripts/kernel.sh" arm64 "$v"; done
fi
case " $kernels " in *" bench "* | "  ") ;; *) "$TOP/scripts/kernel.sh" arm64 bench ;; esac
"$TOP/scripts/image.sh" arm64

# Nothing else may run: no build, no other guest.
python3 "$host" wait-quiet --max-load "$max_load" --max-other "$max_other" ||
	die "the host is busy: make bench needs a quiet host (BENCH_MAX_LOAD=$max_load)"

# bench_boot LABEL VARIANT TEST MEM APPEND [qemu.sh options]: one monitored,
# pinned boot; its log is build/logs/arm64-LABEL.log, the monitor's samples
# build/logs/arm64-LABEL.tsv.
bench_boot() {
	local label=$1 variant=$2 test=$3 mem=$4 app=$5 sock rc
	shift 5
	python3 "$host" wait-quiet --max-other "$max_other" >/dev/null ||
		die "the host is busy: make bench needs a quiet host"
	sock=$BUILD/logs/arm64-$label.qmp
	rm -f "$sock"
	"$TOP/scripts/qemu.sh" arm64 "$test" --variant "$variant" --mem "$mem" --timeout 7200 \
		--label "$label" --quiet --qmp "$sock" --append "$app" "$@" &
	local qpid=$!
	python3 "$host" monitor --qmp "$sock" --log "$BUILD/logs/arm64-$label.log" \
		--out "$BUILD/logs/arm64-$label.tsv" || note "the monitor of $label failed"
	rc=0
	wait $qpid || rc=$?
	rm -f "$sock"
	[ $rc = 0 ] || die "the $label benchmark boot failed (log: build/logs/arm64-$label.log)"
}

logs=()
if [[ "$parts" == *" munmap "* ]]; then
	read -ra K <<<"$kernels"
	for ((b = 0; b < boots; b++)); do
		for ((i = 0; i < ${#K[@]}; i++)); do
			v=${K[$(((i + b) % ${#K[@]}))]}
			devs=zram app=
			# The bench kernel: the C zram and rzram on the same zsmalloc,
			# and brd for the floor (as large as the largest cell).
			[ "$v" = bench ] && devs=zram,rzram,brd app="brd.rd_size=$((2100 * 1024))"
			bench_boot "bench-munmap-$v-$b" "$v" bench_munmap 3072 \
				"rzrounds=$per_boot rzwarm=1 rzfirst=$((b * per_boot)) rzgrid=$grid rzdevs=$devs $app"
			logs+=("$v=$BUILD/logs/arm64-bench-munmap-$v-$b.log")
		done
	done
fi
if [[ "$parts" == *" notify "* ]]; then
	np=${BENCH_NOTIFY_PAGES:-4096}
	bench_boot bench-notify bench bench_notify 1024 "rzrounds=$rounds rzwarm=2 rznpages=$np"
	# Under -icount shift=0 the counts are exact: a few rounds suffice.
	bench_boot bench-notify-icount bench bench_notify 1024 "rzrounds=3 rzwarm=1 rznpages=$np" --icount
fi
if [[ "$parts" == *" fio "* ]]; then
	bench_boot bench-fio bench bench_fio 1024 "rzrounds=${BENCH_FIO_ROUNDS:-10} rzdevs=zram,rzram"
fi
if [[ "$parts" == *" binding "* ]]; then
	# The binding's cost: the rust_zsmalloc_bench KUnit case, in the bench
	# kernel (no debug options), booted by kunit.py.
	"$TOP/scripts/kunit.sh" --kdir "$BUILD/arm64-bench" rust_zsmalloc_bench >/dev/null ||
		die "the binding benchmark failed"
	grep -h "zsmalloc bench:" "$BUILD/arm64-bench/test.log" >"$BUILD/logs/binding-bench.log" || true
fi
if [[ "$parts" == *" munmap "* ]] || [[ "$parts" == *" notify "* ]] || [[ "$parts" == *" fio "* ]]; then
	plot=$TOP/docs/benchmarks-munmap.png
	"$py" -c 'import matplotlib' 2>/dev/null || plot=
	"$py" "$TOP/scripts/bench_report.py" --out "$TOP/docs/benchmarks.md" --logs "$BUILD/logs" \
		--max-other "$max_other" --plot "$plot" "${logs[@]}" ||
		die "the benchmark report failed"
fi

# The deferred free's batch (rzram's, set through debugfs
# zsmalloc/rzram0/deferred): one boot of the bench kernel per value, rzram
# and the C zram interleaved in each, the munmap benchmark on a smaller grid.
if [[ "$parts" == *" handoff "* ]]; then
	hlogs=()
	for nb in ${BENCH_HANDOFF:-0 8 32 128}; do
		bench_boot "bench-handoff-$nb" bench bench_munmap 3072 \
			"rzrounds=${BENCH_HANDOFF_ROUNDS:-5} rzwarm=1 rzgrid=${BENCH_HANDOFF_GRID:-1:64,1:256,1:1024,2:64,2:256} rzdevs=zram,rzram rzbatch=$nb"
		hlogs+=("$nb=$BUILD/logs/arm64-bench-handoff-$nb.log")
	done
	python3 "$TOP/scripts/bench_handoff.py" --out "$TOP/docs/benchmarks-handoff.md" \
		--max-other "$max_other" "${hlogs[@]}" || die "the handoff report failed"
fi

# zswap's munmap: the three kernels alternate boot by boot, each boot with
# its share of the rounds after one warm-up round (of the 256 MB cells: the
# grid's 1 GB cells take most of the time); the zswap kernel also runs the
# floor, interleaved with zswap.
if [[ "$parts" == *" zswap "* ]]; then
	read -ra K <<<"$zkernels"
	zboots=${BENCH_ZSWAP_BOOTS:-1}
	zper=$(((${BENCH_ZSWAP_ROUNDS:-3} + zboots - 1) / zboots))
	zlogs=()
	for ((b = 0; b < zboots; b++)); do
		for ((i = 0; i < ${#K[@]}; i++)); do
			v=${K[$(((i + b) % ${#K[@]}))]}
			devs=zswap
			[ "$v" = zswap ] && devs=zswap,brd
			bench_boot "bench-zswap-$v-$b" "$v" bench_munmap 3072 \
				"rzrounds=$zper rzwarm=1 rzwarmgrid=1:256,2:256 rzfirst=$((b * zper)) rzgrid=${BENCH_ZSWAP_GRID:-1:64,1:256,1:1024,2:64,2:256,2:1024} rzdevs=$devs brd.rd_size=$((2100 * 1024))"
			zlogs+=("$v=$BUILD/logs/arm64-bench-zswap-$v-$b.log")
		done
	done
	python3 "$TOP/scripts/bench_zswap.py" --out "$TOP/docs/benchmarks-zswap.md" \
		--max-other "$max_other" "${zlogs[@]}" || die "the zswap report failed"
fi

# Writeback: rzram at batch 1 and 32 and the C zram, side by side in one
# boot of the bench kernel, rounds interleaved.
if [[ "$parts" == *" writeback "* ]]; then
	wlog=$BUILD/logs/arm64-bench-writeback.log
	# 6 rounds: each of the three runs goes first in two.
	bench_boot bench-writeback bench bench_writeback 1024 "rzrounds=6"
	python3 - "$TOP/docs/benchmarks-writeback.md" "$wlog" <<'PY'
import re, statistics, sys, datetime
out, log = sys.argv[1:]
pat = re.compile(r"wbbench dev=(\S+) batch=(\S+) round=(\d+) pages=(\d+) ms=(\d+)")
t = {}
for line in open(log, errors="replace"):
    m = pat.search(line)
    if m:
        t.setdefault((m.group(1), m.group(2)), []).append(int(m.group(5)))
def cell(k):
    v = t.get(k, [])
    if not v:
        return "-", "-", "-"
    return f"{statistics.median(v):.0f}", f"{min(v)}-{max(v)}", str(len(v))
rows = ["| run | median ms | range ms | rounds |", "|---|---|---|---|"]
labels = {("rzram", "1"): "rzram, writeback_batch_size=1", ("rzram", "32"): "rzram, writeback_batch_size=32",
          ("zram", "-"): "zram 6.12 (one page at a time)"}
for k, name in labels.items():
    rows.append(f"| {name} | " + " | ".join(cell(k)) + " |")
def ratio(a, b):
    if t.get(a) and t.get(b):
        ra = [x / max(y, 1) for x, y in zip(t[a], t[b])]
        return f"{statistics.median(ra):.2f}x (per round {min(ra):.2f}-{max(ra):.2f})"
    return "-"
text = f"""# Writeback benchmark

Generated by `make bench` (BENCH_PARTS=writeback) on {datetime.date.today()}. One boot of
the bench kernel (arm64 `-M virt -cpu cortex-a72 -smp 2`, TCG, 1 GiB, no debug
options): the time of `echo idle > writeback` for 64 MiB of idle pages (16384
pages of text, lzo-rle) written to a loop device (direct I/O) over a file on ext4
on the scratch virtio disk, a raw sparse file on the host. Rounds interleave
the three runs, in an order that rotates from round to round (each goes first
in a third of them); every page is verified after each. Ratios are taken per
round, between the round's runs. TCG timing is noisy: compare only within this
table.

""" + "\n".join(rows) + f"""

- batch 1 / batch 32 (rzram): {ratio(("rzram", "1"), ("rzram", "32"))}
- zram / rzram batch 32: {ratio(("zram", "-"), ("rzram", "32"))}
- zram / rzram batch 1 (one page at a time, both): {ratio(("zram", "-"), ("rzram", "1"))}
"""
open(out, "w").write(text)
print(text)
PY
fi

# Instructions per page: 4 KiB O_DIRECT writes and reads through the C zram,
# rzram and brd of the bench kernel, under -icount shift=0 (one vCPU), where
# the times are guest instruction counts: exact, so one boot suffices.
if [[ "$parts" == *" iocount "* ]]; then
	ilog=$BUILD/logs/arm64-bench-iocount.log
	np=${BENCH_IOCOUNT_PAGES:-2048}
	bench_boot bench-iocount bench bench_iocount 1024 \
		"rzrounds=5 rznpages=$np brd.rd_size=$((np * 4 + 1024))" --icount
	python3 "$TOP/scripts/bench_iocount.py" "$ilog" "$TOP/docs/benchmarks-iocount.md" ||
		die "the iocount report failed"
fi

# Where the instructions go: each call of both drivers' submit_bio stepped
# through, one guest instruction at a time (docs/benchmarks-breakdown.md).
if [[ "$parts" == *" breakdown "* ]]; then
	"$TOP/scripts/trace_path.sh" || die "the breakdown failed"
fi
