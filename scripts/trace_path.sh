#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make bench, part breakdown: where the instructions of one 4 KiB write and
# read go, function by function, in the C zram and in rzram. Boots the bench
# kernel (arm64, one vCPU, -icount shift=0) stopped, with QEMU's gdbstub;
# gdb-multiarch (scripts/trace_path.py) steps through every call of both
# drivers' submit_bio while the guest (bench/guest/trace_path.sh) writes and
# reads one page of each kind of data; scripts/trace_report.py writes
# docs/benchmarks-breakdown.md. BENCH_TRACE_ALGS (default lz4) picks the
# algorithms. About 4 minutes an algorithm.
. "$(dirname "$0")/lib.sh"

command -v gdb-multiarch >/dev/null || die "gdb-multiarch is missing (make deps installs it)"
kdir=$BUILD/arm64-bench
[ -f "$kdir/vmlinux" ] || die "no bench kernel at $kdir (make bench builds it)"
rzram=$(awk '/submit_bio_callback.*5Rzram/ { print $1; exit }' "$kdir/System.map")
[ -n "$rzram" ] || die "no submit_bio callback of rzram in $kdir/System.map"
algs=${BENCH_TRACE_ALGS:-lz4}
nalgs=$(echo "$algs" | tr , ' ' | wc -w)
limit=$((600 + nalgs * 900))
hits=$BUILD/logs/arm64-bench-trace.jsonl
log=$BUILD/logs/arm64-bench-trace.log
# A free port for the gdbstub (QEMU listens on 127.0.0.1 only).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$BUILD/logs"
rm -f "$hits"
"$TOP/scripts/qemu.sh" arm64 trace_path --variant bench --mem 1024 --icount --timeout "$limit" \
	--label bench-trace --gdb "$port" --quiet --append "nokaslr rzalgs=$algs" &
qpid=$!
# Never leave the stopped guest behind: QEMU runs under its own timeout's process group.
stop_guest() { pkill -f -- "-gdb tcp:127.0.0.1:$port" 2>/dev/null || true; }
trap stop_guest EXIT
rc=0
TRACE_OUT=$hits TRACE_PORT=$port TRACE_RZRAM=$rzram timeout -k 10 "$limit" gdb-multiarch -q -nx \
	-batch -ex "set architecture aarch64" -ex "file $kdir/vmlinux" \
	-x "$TOP/scripts/trace_path.py" >"$BUILD/logs/arm64-bench-trace.gdb.log" 2>&1 || rc=$?
[ $rc = 0 ] || stop_guest
wait "$qpid" || die "the traced boot failed (log: $log)"
[ $rc = 0 ] || die "gdb-multiarch failed ($rc; log: build/logs/arm64-bench-trace.gdb.log)"
CXXFILT=llvm-cxxfilt-$LLVM_VER COMMIT=$(git -C "$TOP" rev-parse --short HEAD) \
	python3 "$TOP/scripts/trace_report.py" "$hits" "$log" "$TOP/docs/benchmarks-breakdown.md" ||
	die "the breakdown report failed"
