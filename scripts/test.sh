#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make test: every gate, in order. A failing gate is recorded and the rest
# still run (what cannot run without it is recorded as failed too). Ends with
# one line "N passed, N failed" (", N skipped" if a test exited with
# kselftest's skip code); exits non-zero on any failure.
#
# Gates: host tests (tree assembly, splat checker), the arm64 and x86_64 test
# kernels and their in-guest tests, KUnit on arm64, and, in a background lane
# beside the boots, the static checks and the 32-bit zsmalloc compile.
. "$(dirname "$0")/lib.sh"

# The in-guest test lists, by boot, are in tests/guest/boots/ (lib.sh names
# the boots; make kcsan runs the x86_64 ones too). GUEST_TESTS=a,b,... runs those tests in one boot per arch instead.
R=$BUILD/results.txt
mkdir -p "$BUILD/logs"
: >"$R"
t_start=$(date +%s)

record() { result "$R" "$1" "$2"; }

# gate NAME CMD...: run a step, log it to build/logs/NAME.log, record it.
gate() {
	local name=$1 t0 rc
	shift
	t0=$(date +%s)
	echo "=== $name"
	set +e
	"$@" 2>&1 | tee "$BUILD/logs/$name.log"
	rc=${PIPESTATUS[0]}
	set -e
	echo "=== $name: $([ "$rc" = 0 ] && echo ok || echo FAILED) ($(($(date +%s) - t0))s)"
	return "$rc"
}

summary() {
	local p f s
	p=$(grep -c '^PASS ' "$R" || true)
	f=$(grep -c '^FAIL ' "$R" || true)
	s=$(grep -c '^SKIP ' "$R" || true)
	echo
	echo "=== results ($(($(date +%s) - t_start))s)"
	grep -E '^(FAIL|SKIP) ' "$R" | sed 's/^/  /' || true
	echo "$p passed, $f failed$([ "$s" = 0 ] || echo ", $s skipped")"
	[ "$f" = 0 ]
}

# The toolchain and the tree are prerequisites for everything else.
if ! gate deps "$TOP/scripts/deps.sh"; then record FAIL deps; summary; exit 1; fi

for t in "$TOP"/tests/host/*.sh; do
	n=$(basename "$t" .sh)
	[ "$n" = lib ] && continue # the harness the tests source
	if gate "host-$n" bash "$t"; then record PASS "host:$n"; else record FAIL "host:$n"; fi
done

if ! gate tree "$TOP/scripts/tree.sh"; then record FAIL tree; summary; exit 1; fi
record PASS tree

# The work that needs no guest runs in a background lane under SCHED_IDLE
# while the boots run: every kernel after the first, then the static checks
# and the 32-bit compile. A TCG guest leaves a host CPU idle whenever a vCPU
# waits (a single-threaded test, I/O, a sleep), and a SCHED_IDLE task runs
# only then, so the boots keep their speed and the lane's builds use the time
# they leave unused. Each lane step's output is in build/logs/STEP.log, its
# line in build/logs/background.log; its results are recorded as the
# foreground's.
BG_LOG=$BUILD/logs/background.log
: >"$BG_LOG"
# bg_gate NAME CMD...: gate() for the lane: output to the step's log only.
bg_gate() {
	local name=$1 t0 rc=0
	shift
	t0=$(date +%s)
	chrt --idle 0 "$@" >"$BUILD/logs/$name.log" 2>&1 || rc=$?
	echo "=== $name: $([ "$rc" = 0 ] && echo ok || echo FAILED) ($(($(date +%s) - t0))s, in the background)" >>"$BG_LOG"
	return "$rc"
}
lane() {
	local a rc
	for a in $SUPPORTED_ARCHES; do
		[ "$a" = "$first_arch" ] && continue
		rc=0
		bg_gate "kernel-$a" "$TOP/scripts/kernel.sh" "$a" || rc=$?
		# Whole, or not at all, for the foreground that polls for it.
		echo "$rc" >"$BUILD/logs/kernel-$a.rc.tmp"
		mv "$BUILD/logs/kernel-$a.rc.tmp" "$BUILD/logs/kernel-$a.rc"
	done
	bg_gate check "$TOP/scripts/check.sh" --results "$R" || true
	if bg_gate zsmalloc32 "$TOP/scripts/kernel.sh" arm zsmalloc32; then
		record PASS build:arm-zsmalloc32
	else
		record FAIL build:arm-zsmalloc32
	fi
}
# lane_wakeup: the foreground has nothing left to run but the lane's work:
# the lane's processes leave SCHED_IDLE for the normal policy (their later
# children inherit it), so that they do not wait on a host that is busy
# with something else.
lane_wakeup() {
	local p
	for p in $(pgrep -g "$lane_pid" 2>/dev/null); do
		chrt --other -p 0 "$p" 2>/dev/null || true
	done
}
# On any exit, nothing of the lane is left running into the next make test
# (its builds would collide with that one's in the same build directories).
lane_stop() {
	[ -n "$lane_pid" ] && kill -- -"$lane_pid" 2>/dev/null
	return 0
}
# built ARCH: the first kernel is built in the foreground, the others are
# waited for from the lane.
built() {
	local arch=$1 t0 rc
	if [ "$arch" = "$first_arch" ]; then
		gate "kernel-$arch" "$TOP/scripts/kernel.sh" "$arch"
		return
	fi
	t0=$(date +%s)
	lane_wakeup
	while [ ! -f "$BUILD/logs/kernel-$arch.rc" ] && kill -0 "$lane_pid" 2>/dev/null; do
		sleep 5
	done
	rc=$(cat "$BUILD/logs/kernel-$arch.rc" 2>/dev/null || echo 1)
	[ "$rc" = 0 ] || tail -40 "$BUILD/logs/kernel-$arch.log"
	echo "=== kernel-$arch: $([ "$rc" = 0 ] && echo ok || echo FAILED) (built in the background; waited $(($(date +%s) - t0))s)"
	[ "$rc" = 0 ]
}
first_arch=${SUPPORTED_ARCHES%% *}
rm -f "$BUILD"/logs/kernel-*.rc "$BUILD"/logs/kernel-*.rc.tmp
lane_pid=

for arch in $SUPPORTED_ARCHES; do
	ok=0
	built "$arch" && ok=1
	if [ -z "$lane_pid" ]; then
		# A process group of its own (job control on for the spawn), so
		# that lane_wakeup and lane_stop reach all of it.
		set -m
		lane &
		lane_pid=$!
		set +m
		trap lane_stop EXIT
		trap 'lane_stop; exit 130' INT TERM
	fi
	if [ $ok = 1 ]; then
		record PASS "build:$arch"
	else
		record FAIL "build:$arch"
		continue
	fi
	if ! gate "image-$arch" "$TOP/scripts/image.sh" "$arch"; then
		record FAIL "image:$arch"
		continue
	fi
	if [ -n "${GUEST_TESTS:-}" ]; then
		gate "guest-$arch" "$TOP/scripts/qemu.sh" "$arch" "$GUEST_TESTS" --label tests \
			--timeout "$GUEST_BOOT_LIMIT" --test-timeout 300 --results "$R" --quiet || true
	else
		boots=GUEST_BOOTS_$arch
		for b in ${!boots}; do
			gate "guest-$arch-$b" "$TOP/scripts/qemu.sh" "$arch" "$(guest_tests "$arch" "$b")" \
				--label "$b" --timeout "$GUEST_BOOT_LIMIT" --test-timeout 300 --results "$R" --quiet || true
		done
	fi
	if [ "$arch" = arm64 ]; then
		# A boot of its own, since the report it provokes turns lockdep off.
		# It also runs harness_skip, which always exits 4: qemu.sh must
		# record it skipped, neither passed nor failed.
		gate guest-arm64-lockdep "$TOP/scripts/qemu.sh" arm64 lockdep_inversion,harness_skip \
			--label lockdep --append rzram.lockdep_selftest=1 \
			--expect-splat 'WARNING: possible circular locking dependency detected' \
			--timeout 600 --results "$R" --quiet || true
		if grep -qx 'SKIP arm64:harness_skip' "$R" && ! grep -qE '^(PASS|FAIL) arm64:harness_skip$' "$R"; then
			record PASS host:guest-skip-code
		else
			record FAIL host:guest-skip-code
		fi
		# Raspberry Pi OS's swap hybrid, in a boot of its own: a fresh
		# scratch disk, and a workload beyond RAM.
		gate guest-arm64-hybrid "$TOP/scripts/qemu.sh" arm64 rzram_hybrid --label hybrid \
			--timeout 900 --results "$R" --quiet || true
		# Fault injection (every allocation on each path fails once; zswap's
		# deferred free with its buffer pages failing at random), with
		# kmemleak on, which the other boots leave off.
		gate guest-arm64-faults "$TOP/scripts/qemu.sh" arm64 zswap_faults,faults --label faults \
			--append kmemleak=on --timeout 900 --results "$R" --quiet || true
		if gate boot-timeout bash "$TOP/tests/boot/timeout.sh" arm64; then
			record PASS host:qemu-timeout
		else
			record FAIL host:qemu-timeout
		fi
	fi
done

gate kunit "$TOP/scripts/kunit.sh" --results "$R" || true
echo "=== waiting for the background lane"
lane_wakeup
lane_rc=0
wait "$lane_pid" || lane_rc=$?
lane_pid=
cat "$BG_LOG"
[ "$lane_rc" = 0 ] || record FAIL "background-lane (exit $lane_rc)"
# A lane that died midway leaves steps without a line: each is a failure.
for step in check zsmalloc32; do
	grep -q "^=== $step: " "$BG_LOG" || record FAIL "$step (the background lane never finished it)"
done
if grep -q '^=== check: FAILED' "$BG_LOG"; then tail -60 "$BUILD/logs/check.log"; fi

summary
