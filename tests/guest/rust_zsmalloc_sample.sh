# SPDX-License-Identifier: GPL-2.0
# samples/rust/rust_zsmalloc.rs (built in) stored, verified, compacted and
# verified again at boot: check what it logged.
set -u
. /tests/lib.sh

log=$(dmesg | grep 'rust_zsmalloc: ') || fail "the rust_zsmalloc sample logged nothing"
echo "$log"
stored=$(echo "$log" | sed -n 's/.*stored \([0-9]*\) objects.*/\1/p')
[ "${stored:-0}" -eq 600 ] || fail "stored '${stored:-}' objects, expected 600"
echo "$log" | grep -q "verified 600 of 600 objects$" || fail "objects damaged before compaction"
echo "$log" | grep -q "verified 200 of 200 objects after compaction$" ||
	fail "objects damaged by compaction"
freed=$(echo "$log" | sed -n 's/.* \([0-9]*\) freed by it.*/\1/p')
[ "${freed:-0}" -gt 0 ] || fail "compaction freed no pages"
echo "sample output as expected"
