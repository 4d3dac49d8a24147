#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The boots' test lists (tests/guest/boots/*.list) name tests that exist, each
# once per list, and every in-guest test is run by make test or a make target:
# it is in a list or named by the script that boots it.
. "$(dirname "$0")/lib.sh"

for f in "$top"/tests/guest/boots/*.list; do
	l=$(basename "$f")
	names=$(sed 's/#.*//' "$f" | awk 'NF { print $1 }')
	[ -n "$names" ] && ok "$l: not empty" || bad "$l: no test"
	for t in $names; do
		[ -f "$top/tests/guest/$t.sh" ] || bad "$l: $t has no tests/guest/$t.sh"
	done
	dup=$(echo "$names" | sort | uniq -d | paste -sd' ' -)
	[ -z "$dup" ] && ok "$l: each test once" || bad "$l: listed twice: $dup"
done

# Helpers the tests source, not tests.
before=$fails
for f in "$top"/tests/guest/*.sh; do
	t=$(basename "$f" .sh)
	case "$t" in lib | wb_lib) continue ;; esac
	if grep -qx "$t" "$top"/tests/guest/boots/*.list ||
		grep -qE "(^|[^a-z_])$t([^a-z_]|\$)" "$top"/scripts/*.sh; then
		:
	else
		bad "tests/guest/$t.sh is in no boot's list and no script runs it"
	fi
done
[ $fails = "$before" ] && ok "every in-guest test is run somewhere"
[ $fails = 0 ]
