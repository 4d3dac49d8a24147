# SPDX-License-Identifier: GPL-2.0
# Helpers for the in-guest tests (sourced). RZDEV names the device family
# under test: zram (the C driver, or rzram as zram's driver) or rzram (rzram
# under its own name, beside the C zram).
DEV=${RZDEV:-zram}
SYS=/sys/block/${DEV}0
BLK=/dev/${DEV}0

fail() {
	echo "FAIL: $*"
	exit 1
}

# rust_zram: zram (module or built in) is rzram, as zram's driver
# (CONFIG_ZRAM_DRIVER_RUST): its parameter compat, which the C zram lacks.
rust_zram() {
	[ -e /sys/module/zram/parameters/compat ]
}

# skip REASON: what the test needs is not in this kernel; exit status 4 is
# kselftest's KSFT_SKIP, which guest/init reports "ok ... # SKIP REASON".
skip() {
	echo "SKIP: $*"
	exit 4
}

# dev_setup SIZE [ALGORITHM]: reset device 0 and give it a disksize.
dev_setup() {
	[ -d "$SYS" ] || fail "$SYS does not exist: is $DEV built into this kernel?"
	[ "$(cat "$SYS/initstate")" = 0 ] || echo 1 >"$SYS/reset" || fail "reset $SYS"
	if [ -n "${2:-}" ]; then
		echo "$2" >"$SYS/comp_algorithm" || fail "comp_algorithm $2"
	fi
	echo "$1" >"$SYS/disksize" || fail "disksize $1"
}

# dev0_present: make sure device 0 exists, as on a freshly booted system
# (an earlier test may have removed it, as zramctl --reset does): hot_add,
# which takes the lowest free number.
dev0_present() {
	[ -d "$SYS" ] && return 0
	cat /sys/class/${DEV}-control/hot_add >/dev/null || fail "hot_add for $SYS"
	[ -d "$SYS" ] || fail "$SYS does not exist"
}

dev_reset() {
	echo 1 >"$SYS/reset" || fail "reset $SYS"
}

# mm_stat_print: the device's memory statistics, explained.
mm_stat_print() {
	local orig compr used limit maxused same compacted huge
	read -r orig compr used limit maxused same compacted huge _ <"$SYS/mm_stat"
	echo "$DEV mm_stat: $(cat "$SYS/mm_stat")"
	printf '  original data     %8d KiB\n' $((orig / 1024))
	printf '  compressed data   %8d KiB\n' $((compr / 1024))
	printf '  memory used       %8d KiB (max %d KiB)\n' $((used / 1024)) $((maxused / 1024))
	printf '  same-filled pages %8d, huge pages %d, pages compacted %d\n' "$same" "$huge" "$compacted"
	if [ "$used" -gt 0 ]; then
		printf '  ratio orig/used   %8s\n' "$(awk -v a="$orig" -v b="$used" 'BEGIN { printf "%.2f", a / b }')"
	fi
}

meminfo_kb() {
	awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo
}

vmstat() {
	awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat
}

# run_held HOOK memstress-args...: run memstress -H, call HOOK once the memory
# is filled, then let memstress verify. Returns memstress's status.
run_held() {
	local hook=$1 pid status
	shift
	rm -f /tmp/go /tmp/memstress.log
	mkfifo /tmp/go
	memstress -H "$@" </tmp/go >/tmp/memstress.log 2>&1 &
	pid=$!
	exec 3>/tmp/go
	while ! grep -q 'memstress: filled' /tmp/memstress.log; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	cat /tmp/memstress.log
	"$hook"
	echo go >&3
	exec 3>&-
	wait "$pid"
	status=$?
	tail -n +2 /tmp/memstress.log
	return $status
}

# faults_setup: failslab and fail_page_alloc ready for failnth: sleeping and
# highmem allocations may fail too, quietly; nothing fails until asked (what
# an earlier test left on is turned off).
dbg=/sys/kernel/debug
faults_setup() {
	local a
	[ -d $dbg/failslab ] || mount -t debugfs none $dbg 2>/dev/null
	for a in failslab fail_page_alloc; do
		[ -d $dbg/$a ] || fail "$dbg/$a missing: FAILSLAB and FAIL_PAGE_ALLOC are needed"
		echo N >$dbg/$a/ignore-gfp-wait
		echo 0 >$dbg/$a/verbose
		# Nothing left on by a test before.
		echo 0 >$dbg/$a/probability
		echo -1 >$dbg/$a/times
		echo N >$dbg/$a/task-filter
	done
	echo N >$dbg/fail_page_alloc/ignore-gfp-highmem
	echo 0 >$dbg/fail_page_alloc/min-order
}

# attr_write ATTR VALUE WANT: writing VALUE to $d/ATTR gives WANT (ok or an
# errno name, as sysfs_rw prints it); a failure names the family $F and the
# step $what, if set.
attr_write() {
	local r
	r=$(sysfs_rw w "$d/$1" "$2")
	[ "$r" = "$3" ] || fail "$F: $1 <- '$2': $r, want $3${what:+ ($what)}"
}
