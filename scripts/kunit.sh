#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run the KUnit suites with the kernel's own kunit.py in QEMU (TCG): on arm64
# (make test), or on x86_64 (make kunit ARCH=x86_64).
#
# The suites are built into the arm64 test kernel (build/arm64: KASAN, lockdep,
# PREEMPT; scripts/kernel.sh adds kunit.kunitconfig to its fragments), so no
# kernel is built for KUnit alone: `kunit.py exec` boots that Image with
# kunit.enable=1, while the in-guest test boots pass kunit.enable=0.
# kernel.sh's config check has made sure every option of kunit.kunitconfig
# survived in that build.
#
# x86_64 has a kernel of its own for KUnit (kernel.sh x86_64 kunit: its test
# kernel has rzram as a module, whose suites would not run), booted with the
# same options on the PC machine (kunit_x86_64.py). make kunit ARCH=x86_64
# builds and runs it; make test runs arm64's.
#
# Usage: kunit.sh [--arch ARCH] [--results FILE] [--kdir DIR] [extra kunit.py
#        args, e.g. a suite glob]; --kdir boots another build (make bench: the
#        bench kernel, which has the binding benchmark, rust_zsmalloc_bench)
# With --results, one "PASS kunit:suite.case" / "FAIL ..." (or "SKIP ...") line
# per test case is appended, plus one for the kernel log's splat check.
. "$(dirname "$0")/lib.sh"

results=/dev/null
arch=arm64
kdir=
while [ $# -gt 0 ]; do
	case "$1" in
	--arch) arch=$2; shift 2 ;;
	--results) results=$2; shift 2 ;;
	--kdir) kdir=$2; shift 2 ;;
	*) break ;;
	esac
done
check_arch "$arch"
case "$arch" in
arm64) kdir=${kdir:-$BUILD/arm64}; image=arch/arm64/boot/Image ;;
x86_64) kdir=${kdir:-$BUILD/x86_64-kunit}; image=arch/x86/boot/bzImage ;;
esac
toolchain_env
[ -f "$kdir/$image" ] || die "no $arch kernel in $kdir: make kunit ARCH=$arch builds it"
# kunit.py runs from the source tree: the build directory must be absolute.
kdir=$(cd "$kdir" && pwd)
mkdir -p "$BUILD/logs"
rm -f "$kdir/results.json"
qemu_config=$TOP/scripts/kunit_arm64_a72.py
[ "$arch" = x86_64 ] && qemu_config=$TOP/scripts/kunit_x86_64.py
args=(exec --arch="$arch" --build_dir="$kdir" --kunitconfig="$FRAG/kunit.kunitconfig"
	--qemu_config="$qemu_config" --timeout=1500
	--json="$kdir/results.json")

start=$(date +%s)
set +e
(cd "$SRC" && python3 tools/testing/kunit/kunit.py "${args[@]}" "$@") 2>&1 | tee "$BUILD/logs/kunit.log"
rc=${PIPESTATUS[0]}
set -e
note "kunit.py exited $rc after $(($(date +%s) - start))s"

# Flatten the JSON report into one result per test case: PASS, SKIP (KUnit's
# own skip), or FAIL for any other status.
if [ -s "$kdir/results.json" ]; then
	while read -r status name; do
		result "$results" "$status" "kunit:$name"
	done < <(python3 - "$kdir/results.json" <<'PY'
import json, sys
def walk(group, prefix):
    for sub in group.get("sub_groups", []):
        walk(sub, prefix + [sub["name"]])
    for case in group.get("test_cases", []):
        status = case.get("status")
        status = status if status in ("PASS", "SKIP") else "FAIL"
        print(status, ".".join(prefix + [case["name"]]))
report = json.load(open(sys.argv[1]))
walk(report, [])
PY
	)
else
	result "$results" FAIL kunit:no-results
fi
if [ $rc != 0 ]; then
	result "$results" FAIL kunit:kunit.py
fi
if "$TOP/scripts/check-log.sh" "$kdir/test.log"; then
	result "$results" PASS kunit:kernel-log
else
	result "$results" FAIL kunit:kernel-log
	rc=1
fi
exit $rc
