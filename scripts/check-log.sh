#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# check-log.sh LOG...: fail if a kernel log holds a splat. Prints each hit
# with its line number. Exit 0 clean, 1 splat found, 2 usage.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: check-log.sh LOG..." >&2; exit 2; }

# One extended regex per kind of report.
PATTERNS=(
	'BUG:'                                  # BUG: KASAN, BUG: sleeping function, ...
	'kernel BUG at'
	'WARNING:'                              # WARN_ON and friends
	'Oops'                                  # Internal error: Oops / Oops: 0000
	'KASAN'
	'UBSAN:'
	'panicked at'                           # a Rust panic (then kernel BUG at rust/...)
	'possible circular locking'             # lockdep
	'possible recursive locking'
	'inconsistent lock state'
	'suspicious RCU usage'
	'rcu: INFO'                             # RCU stall
	'rcu_(preempt|sched) detected stalls'
	'Kernel panic'
	'general protection fault'
	'Unable to handle kernel'
	'watchdog: BUG: soft lockup'
	'INFO: task .* blocked for more than'
	'list_(add|del) corruption'
	'suspected memory leak'                 # kmemleak (booted with kmemleak=on)
	'unreferenced object 0x'
)
re=$(printf '%s|' "${PATTERNS[@]}")
re=${re%|}
status=0
for log in "$@"; do
	[ -f "$log" ] || { echo "check-log: $log: no such file" >&2; status=1; continue; }
	if hits=$(tr -d '\r' <"$log" | grep -naE "$re"); then
		echo "check-log: kernel splat in $log:" >&2
		echo "$hits" | head -n 20 | sed 's/^/  /' >&2
		status=1
	fi
done
exit $status
