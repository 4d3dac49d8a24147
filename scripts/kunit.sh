#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run the KUnit suites with the kernel's own kunit.py on arm64 (QEMU, TCG).
#
# Usage: kunit.sh [--results FILE] [extra kunit.py args, e.g. a suite glob]
# With --results, one "PASS kunit:suite.case" / "FAIL ..." line per test case
# is appended, plus one for the kernel log's splat check.
. "$(dirname "$0")/lib.sh"

results=/dev/null
if [ "${1:-}" = --results ]; then
	results=$2
	shift 2
fi
toolchain_env
kdir=$BUILD/kunit
mkdir -p "$kdir" "$BUILD/logs"
args=(run --arch=arm64 --build_dir="$kdir" --kunitconfig="$FRAG/kunit.kunitconfig"
	--qemu_config="$TOP/scripts/kunit_arm64_a72.py" --jobs="$JOBS" --timeout=1200
	--json="$kdir/results.json")
while read -r v; do args+=(--make_options "$v"); done < <(kmake_vars)

start=$(date +%s)
set +e
(cd "$SRC" && python3 tools/testing/kunit/kunit.py "${args[@]}" "$@") 2>&1 | tee "$BUILD/logs/kunit.log"
rc=${PIPESTATUS[0]}
set -e
note "kunit.py exited $rc after $(($(date +%s) - start))s"

# Flatten the JSON report into one line per test case.
if [ -s "$kdir/results.json" ]; then
	python3 - "$kdir/results.json" >>"$results" <<'PY'
import json, sys
def walk(group, prefix):
    for sub in group.get("sub_groups", []):
        walk(sub, prefix + [sub["name"]])
    for case in group.get("test_cases", []):
        status = case.get("status")
        if status == "SKIP":
            continue
        print(("PASS" if status == "PASS" else "FAIL") + " kunit:" + ".".join(prefix + [case["name"]]))
report = json.load(open(sys.argv[1]))
walk(report, [])
PY
else
	echo "FAIL kunit:no-results" >>"$results"
fi
if [ $rc != 0 ]; then
	echo "FAIL kunit:kunit.py" >>"$results"
fi
if "$TOP/scripts/check-log.sh" "$kdir/test.log"; then
	echo "PASS kunit:kernel-log" >>"$results"
else
	echo "FAIL kunit:kernel-log" >>"$results"
	rc=1
fi
exit $rc
