#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# config-check.sh REQUESTED FINAL: fail, naming each option, when a value that
# REQUESTED asks for is not what FINAL (the .config after Kconfig) has.
# "# CONFIG_X is not set" and CONFIG_X=n both request the option off.
set -euo pipefail
req=$1
final=$2
awk '
function val(line,   v) { v = line; sub(/^[^=]*=/, "", v); return v }
FNR == NR {
	if ($0 ~ /^CONFIG_[A-Za-z0-9_]+=/) { n = $0; sub(/=.*/, "", n); want[n] = val($0); if (want[n] == "n") want[n] = "" }
	else if ($0 ~ /^# CONFIG_[A-Za-z0-9_]+ is not set/) want[$2] = ""
	next
}
$0 ~ /^CONFIG_[A-Za-z0-9_]+=/ { n = $0; sub(/=.*/, "", n); have[n] = val($0) }
END {
	bad = 0
	for (n in want) {
		h = (n in have) ? have[n] : ""
		if (h != want[n]) {
			printf("config: %s requested %s, got %s\n", n,
			       want[n] == "" ? "n" : want[n], h == "" ? "n" : h) > "/dev/stderr"
			bad = 1
		}
	}
	exit bad
}' "$req" "$final"
