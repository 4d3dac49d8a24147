# SPDX-License-Identifier: GPL-2.0
# The per-notify benchmark (make bench): the cost of one
# swap_slot_free_notify() call of each device of rzdevs, measured by the
# notify_bench module (bench/notify_bench) in the bench kernel. Each round
# writes rznpages pages through the device's write path, then times the
# device's notify for each page under a spinlock, and an empty callback after
# it. Each round runs every stride of rzstrides (default "1,32"): 1 notifies
# every page, as an exiting process frees its swap; 32 notifies one page in
# 32, so that each notify is the first of its neighbourhood (for rzram, the
# first of its word of the stale bitmap, which queues the word). The devices
# alternate, their order rotating each round. Under -icount shift=0 the times
# are guest instruction counts.
set -u
. /tests/lib.sh

rounds=${rzrounds:-15}
warm=${rzwarm:-1}
npages=${rznpages:-4096}
strides=$(echo "${rzstrides:-1,32}" | tr , " ")
devs=$(echo "${rzdevs:-zram,rzram}" | tr , " ")
run=/sys/kernel/debug/notify_bench/run

modprobe notify_bench || fail "modprobe notify_bench"
[ -w "$run" ] || fail "no $run"
for d in $devs; do
	s=/sys/block/${d}0
	[ -d "$s" ] || fail "$s does not exist"
	[ "$(cat "$s/initstate")" = 0 ] || echo 1 >"$s/reset" || fail "reset $s"
	echo lzo-rle >"$s/comp_algorithm" || fail "comp_algorithm"
	echo $((npages * 4096 * 2)) >"$s/disksize" || fail "disksize on $d"
done
echo "bench: $(uname -r), $(nproc) CPUs, devices $devs, $npages pages, $warm warm-up + $rounds rounds"
read -ra D <<<"$devs"
nd=${#D[@]}
for ((k = 0; k < warm + rounds; k++)); do
	for ((j = 0; j < nd; j++)); do
		d=${D[$(((j + k) % nd))]}
		for s in $strides; do
			echo "/dev/${d}0 $npages $s" >"$run" || fail "notify_bench on $d"
			df=$(sed -n 2p "/sys/kernel/debug/zsmalloc/${d}0/deferred" 2>/dev/null | awk '{ print $3 }')
			echo "$(cat "$run") round=$k warm=$((k < warm)) sync_frees=${df:-0}"
		done
	done
done
for d in $devs; do
	echo 1 >"/sys/block/${d}0/reset"
done
rmmod notify_bench || fail "rmmod notify_bench"
