#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The guest runs on every CPU QEMU gives it (-smp 2), with full preemption:
# concurrency bugs cannot show on one CPU, and sleeping in atomic context shows
# only where preemption is on.
set -eu
n=$(nproc)
echo "online CPUs: $n ($(cat /sys/devices/system/cpu/online))"
[ "$n" -ge 2 ] || { echo "FAIL: expected at least 2 CPUs, got $n"; exit 1; }
if grep -q 'PREEMPT' /proc/version || uname -v | grep -q PREEMPT; then
	echo "preemption: $(uname -v)"
else
	echo "FAIL: kernel is not preemptible: $(uname -v)"
	exit 1
fi
