# SPDX-License-Identifier: GPL-2.0
# kunit.py --qemu_config for rzram: the arm64 "virt" machine with the
# Raspberry Pi 4's core (Cortex-A72) and two CPUs, as the in-guest tests use.
# It boots the arm64 test kernel's Image (scripts/kunit.sh runs kunit.py exec on
# that build).
from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='arm64',
			   kconfig='''
CONFIG_SERIAL_AMBA_PL011=y
CONFIG_SERIAL_AMBA_PL011_CONSOLE=y''',
			   qemu_arch='aarch64',
			   kernel_path='arch/arm64/boot/Image',
			   kernel_command_line='console=ttyAMA0',
			   extra_qemu_params=['-machine', 'virt', '-cpu', 'cortex-a72',
					      '-smp', '2'])
