#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run the KUnit suites with the kernel's own kunit.py on arm64 (QEMU, TCG).
#
# The suites are built into the arm64 test kernel (build/arm64: KASAN, lockdep,
# PREEMPT; scripts/kernel.sh adds kunit.kunitconfig to its fragments), so no
# kernel is built for KUnit alone: `kunit.py exec` boots that Image with
# kunit.enable=1, while the in-guest test boots pass kunit.enable=0.
# kernel.sh's config check has made sure every option of kunit.kunitconfig
# survived in that build.
#
# Usage: kunit.sh [--results FILE] [--kdir DIR] [extra kunit.py args, e.g. a
#        suite glob]; --kdir boots another build (make bench: the bench kernel,
#        which has the binding benchmark, rust_zsmalloc_bench)
# With --results, one "PASS kunit:suite.case" / "FAIL ..." line per test case
# is appended, plus one for the kernel log's splat check.
. "$(dirname "$0")/lib.sh"

results=/dev/null
kdir=$BUILD/arm64
while [ $# -gt 0 ]; do
	case "$1" in
	--results) results=$2; shift 2 ;;
	--kdir) kdir=$2; shift 2 ;;
	*) break ;;
	esac
done
toolchain_env
[ -f "$kdir/arch/arm64/boot/Image" ] || die "no arm64 kernel in $kdir: make kernel ARCH=arm64"
# kunit.py runs from the source tree: the build directory must be absolute.
kdir=$(cd "$kdir" && pwd)
mkdir -p "$BUILD/logs"
rm -f "$kdir/results.json"
args=(exec --arch=arm64 --build_dir="$kdir" --kunitconfig="$FRAG/kunit.kunitconfig"
	--qemu_config="$TOP/scripts/kunit_arm64_a72.py" --timeout=1500
	--json="$kdir/results.json")

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
