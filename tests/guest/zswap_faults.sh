# SPDX-License-Identifier: GPL-2.0
# zswap's deferred free under fault injection, with kmemleak on (the faults
# boot, which runs this test before faults). The allocations the deferred
# free adds to the invalidate path are its buffer pages, which its worker
# allocates GFP_NOWAIT in zs_deferred_grow() when bursts have used the spare
# ones (the instance itself, at pool creation, is zswap_deferred's failnth
# case). fail_page_alloc, limited by its stack-trace filter to allocations
# made from zs_deferred_grow(), fails half of them, so pushes find fewer
# buffer pages and free their entries at once. On a fresh pool (compressor
# change), processes filled and then killed, each a burst of invalidations,
# alternate with processes that swap back in, verify and exit, while two
# others swap in and out and verify throughout:
#   - failures were injected, and every page that is read back verified;
#   - every push drained (CONFIG_ZSMALLOC_STAT's counters);
#   - zswap's stored pages and pool size back to 0 after swapoff;
#   - kmemleak finds nothing new.
# timeout: 600
set -u
. /tests/lib.sh

Z=/sys/module/zswap/parameters
D=/sys/kernel/debug
F=$D/fail_page_alloc
[ -d $Z ] || fail "no zswap in this kernel"
[ -b /dev/vda ] || fail "no scratch disk /dev/vda (qemu.sh attaches one on arm64)"
faults_setup
mem_mb=$(($(meminfo_kb MemTotal) / 1024))
zs() { cat $D/zswap/"$1"; }

# kmemleak: no automatic scans; what is allocated so far (and older than
# kmemleak's 5 s) is reported once and forgotten.
leak=$D/kmemleak
if [ -f $leak ]; then
	echo scan=off >$leak
	sleep 6
	echo scan >$leak
	echo clear >$leak
fi

# The current pool's deferred-free counters, "pushed drained sync_frees".
deferred() {
	local f
	f=$(ls -dt $D/zsmalloc/zswap* 2>/dev/null | head -n 1)
	# (fail would only leave the command substitution)
	[ -n "$f" ] && [ -f "$f/deferred" ] || { echo nostat; return; }
	awk 'NR == 2 { print $1, $2, $3 }' "$f/deferred"
}

echo zsmalloc >$Z/zpool || fail "zpool zsmalloc"
echo lzo >$Z/compressor || fail "compressor lzo"
echo 50 >$Z/max_pool_percent || fail "max_pool_percent"
echo Y >$Z/enabled || fail "enable zswap"
# A pool of its own: its deferred-free instance starts with its two spare
# buffer pages per CPU, so the bursts below need more.
echo lzo-rle >$Z/compressor || fail "compressor lzo-rle"
mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda"
swapon /dev/vda || fail "swapon /dev/vda"

# Half the page allocations made from zs_deferred_grow() fail, in any task
# (its worker's); the count of failures left tells how many were injected.
# The filter's range: the function's start to the next symbol's.
grow=$(awk '$3 == "zs_deferred_grow" { print $1; exit }' /proc/kallsyms)
[ -n "$grow" ] || fail "no zs_deferred_grow in /proc/kallsyms"
end=$(awk -v g="$grow" '$1 > g { print $1 }' /proc/kallsyms | sort | head -n 1)
[ -f $F/require-start ] || fail "no $F/require-start: FAULT_INJECTION_STACKTRACE_FILTER is needed"
# Whatever happens, no faults and no zswap for the tests after this one
# (the filter's range back to its defaults, as read now).
rs=$(cat $F/require-start) re=$(cat $F/require-end)
trap 'echo 0 >$F/probability; echo -1 >$F/times; echo $rs >$F/require-start; echo $re >$F/require-end; echo N >$Z/enabled' EXIT
echo "0x$grow" >$F/require-start || fail "require-start"
echo "0x$end" >$F/require-end || fail "require-end"
budget=1000000
echo N >$F/task-filter
echo Y >$F/ignore-gfp-wait
echo 1 >$F/interval
echo $budget >$F/times
echo 50 >$F/probability

# killed_burst SEED: a process fills its memory and swaps it out, then is
# killed: one burst of invalidations.
killed_burst() {
	local pid
	rm -f /tmp/go.$1 /tmp/zf.h.$1
	mkfifo /tmp/go.$1
	memstress -H -m $((mem_mb / 8)) -r 25 -s "$1" -p </tmp/go.$1 >/tmp/zf.h.$1 2>&1 &
	pid=$!
	exec 4>/tmp/go.$1
	while ! grep -q 'memstress: filled' /tmp/zf.h.$1; do
		kill -0 "$pid" 2>/dev/null || { cat /tmp/zf.h.$1; fail "memstress $1 did not fill"; }
		sleep 0.2
	done
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	exec 4>&-
}

pids=
for s in 2 3; do
	memstress -m $((mem_mb / 8)) -r 25 -s $s -p -v 2 >/tmp/zf.$s 2>&1 &
	pids="$pids $!"
done
for i in $(seq 4); do
	echo "step $i of 4: $(cat $F/times) failures left, deferred $(deferred)"
	if [ $((i % 2)) = 0 ]; then
		# This one swaps back in, verifies and exits by itself.
		memstress -m $((mem_mb / 8)) -r 25 -s $((20 + i)) -p >/tmp/zf.x 2>&1 ||
			{ cat /tmp/zf.x; fail "memstress $i failed under fault injection"; }
	else
		killed_burst $((20 + i))
	fi
done
for p in $pids; do
	wait "$p" || { cat /tmp/zf.*; fail "a workload failed under fault injection"; }
done
echo 0 >$F/probability
injected=$((budget - $(cat $F/times)))
echo "fail_page_alloc: $injected failures injected in zs_deferred_grow()"
[ "$injected" -gt 0 ] || fail "no buffer-page allocation failure was injected"

read -r pushed drained sync <<<"$(deferred)"
[ "$pushed" != nostat ] || fail "no deferred-free counters (CONFIG_ZSMALLOC_STAT)"
echo "deferred free: pushed $pushed, synchronous $sync; written back $(zs written_back_pages), pool allocation failures $(zs reject_alloc_fail)"
[ "${pushed:-0}" -gt 0 ] || fail "no invalidated entry went through the deferred free"
for i in $(seq 100); do
	read -r pushed drained sync <<<"$(deferred)"
	[ "$pushed" = "$drained" ] && break
	sleep 0.2
done
[ "$pushed" = "$drained" ] || fail "$pushed entries pushed, $drained drained"

swapoff /dev/vda || fail "swapoff"
for i in $(seq 100); do
	[ "$(zs stored_pages)" = 0 ] && [ "$(zs pool_total_size)" = 0 ] && break
	sleep 0.2
done
[ "$(zs stored_pages)" = 0 ] && [ "$(zs pool_total_size)" = 0 ] ||
	fail "zswap holds $(zs stored_pages) pages, $(zs pool_total_size) bytes after swapoff"
echo N >$Z/enabled

# kmemleak reports an object once it has been unreferenced for 5 s.
if [ -f $leak ]; then
	sleep 6
	echo scan >$leak || fail "kmemleak is off"
	sleep 6
	echo scan >$leak || fail "kmemleak is off"
	cat $leak >/tmp/zf.leaks
	if [ -s /tmp/zf.leaks ]; then
		head -60 /tmp/zf.leaks
		fail "kmemleak reports leaks after zswap under fault injection"
	fi
	echo "kmemleak: nothing new"
fi
