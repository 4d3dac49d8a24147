# SPDX-License-Identifier: GPL-2.0
# rzram: the front door. Thin: every target calls a script in scripts/.
#
#   make run            boot arm64 with compressed swap under memory pressure
#   make test           every gate; ends with "N passed, N failed[, N skipped]"
#
# See README.md for the rest.

ARCH ?= arm64
VARIANT ?= test
TESTS ?= swap_onoff,swap_pressure,ext4
# The architectures are defined once, in scripts/lib.sh, which checks them too.
SUPPORTED_ARCHES := $(shell bash -c '. scripts/lib.sh && echo $$SUPPORTED_ARCHES')
S := scripts

.PHONY: all help deps tree kernel image boot guest-test run test kunit check \
	zsmalloc32 bench profile pi kcsan soak series series-check clean distclean check-arch

all: help

help:
	@echo "make run                  boot arm64 (QEMU, Cortex-A72) with compressed swap under pressure"
	@echo "make test                 every gate; ends with 'N passed, N failed[, N skipped]'"
	@echo "make deps                 install the toolchain and guest packages (idempotent)"
	@echo "make tree                 assemble build/linux: pristine 6.12 + patches/series + overlay"
	@echo "make kernel ARCH=a        build the kernel (ARCH: $(SUPPORTED_ARCHES); VARIANT=test|bench|stock)"
	@echo "make image ARCH=a         build the guest initramfs"
	@echo "make guest-test ARCH=a TESTS=x,y   run in-guest tests (names from tests/guest)"
	@echo "make kunit [SUITE=glob]   KUnit suites through kunit.py (ARCH=x86_64: on a kernel of its own)"
	@echo "make check                static gates (checkpatch, rustfmt)"
	@echo "make zsmalloc32           32-bit (ARCH=arm) compile of mm/zsmalloc.o"
	@echo "make bench                benchmarks against stock zram"
	@echo "make profile              ftrace function profile of munmap of swapped-out memory"
	@echo "make pi                   Raspberry Pi kernel and its package build/pi/rzram-pi-kernel_*.deb,"
	@echo "                          checked: device-tree coverage, Docker's check-config, modules, QEMU"
	@echo "                          raspi3b (udev, swap) and virt boots, the package's install/removal"
	@echo "make kcsan                the x86_64 in-guest tests on a KCSAN kernel (not part of make test;"
	@echo "                          KCSAN_STRICT=1: KCSAN's strict rules, reports listed in build/kcsan-strict)"
	@echo "make soak                 SOAK_SECS (1800) of torture and a swap storm, arm64 (not part of make test)"
	@echo "make series               export git format-patch sub-series with cover letters to build/series"
	@echo "make series-check         apply build/series patch by patch: build, checkpatch, kernel-doc"
	@echo "                          (SERIES_CHECK_NOBUILD=1: no builds)"

check-arch:
	@bash -c '. $(S)/lib.sh && check_arch "$$1"' check-arch $(ARCH)

deps:
	@bash $(S)/deps.sh

tree: deps
	@bash $(S)/tree.sh

kernel: check-arch tree
	@bash $(S)/kernel.sh $(ARCH) $(VARIANT)

image: check-arch deps
	@bash $(S)/image.sh $(ARCH)

guest-test: kernel image
	@bash $(S)/qemu.sh $(ARCH) $(TESTS) --variant $(VARIANT)

boot: guest-test

run:
	@bash $(S)/run.sh

test:
	@bash $(S)/test.sh

kunit: check-arch tree
	@bash $(S)/kernel.sh $(ARCH) $(if $(filter x86_64,$(ARCH)),kunit,test)
	@bash $(S)/kunit.sh --arch $(ARCH) $(SUITE)

check: tree
	@bash $(S)/check.sh

zsmalloc32: tree
	@bash $(S)/kernel.sh arm zsmalloc32

bench: tree
	@bash $(S)/bench.sh

profile: tree
	@bash $(S)/profile.sh

pi: tree
	@bash $(S)/pi.sh

kcsan: tree
	@bash $(S)/kcsan.sh

soak: tree
	@bash $(S)/soak.sh

series: deps
	@bash $(S)/series.sh

series-check: series
	@bash $(S)/series-check.sh

clean:
	rm -rf build/arm64 build/arm64-* build/x86_64 build/arm build/guest/*/root build/logs \
		build/series-check/arm64

distclean:
	rm -rf build
