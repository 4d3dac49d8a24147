# SPDX-License-Identifier: GPL-2.0
# The guest side of scripts/trace_path.sh (make bench, part breakdown): for
# each algorithm of rzalgs (default lz4), device and kind of data, a sync(2)
# (the tracer's marker), then one page written and read back 3 times with
# O_DIRECT (bench/iocount), each call of the driver's submit_bio stepped
# through by the tracer, and a sync to close. "trace: DEV ALG KIND" names
# each block, in the order of the markers.
set -u
. /tests/lib.sh

for alg in $(echo "${rzalgs:-lz4}" | tr , " "); do
	for d in zram rzram; do
		s=/sys/block/${d}0
		[ -d "$s" ] || fail "$s does not exist"
		for kind in random zero text; do
			[ "$(cat "$s/initstate")" = 0 ] || echo 1 >"$s/reset" || fail "reset $s"
			echo "$alg" >"$s/comp_algorithm" || fail "comp_algorithm $alg on $d"
			echo $((64 * 4096)) >"$s/disksize" || fail "disksize on $d"
			echo "trace: $d $alg $kind"
			sync
			iocount -f "/dev/${d}0" -n 1 -r 3 -k "$kind" -d "$d" -a "$alg" ||
				fail "iocount on $d ($alg, $kind)"
			sync
		done
		echo 1 >"$s/reset" || fail "reset $s"
	done
done
echo "trace: done"
