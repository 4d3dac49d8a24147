# SPDX-License-Identifier: GPL-2.0
# kunit.py --qemu_config for rzram on x86_64: the PC machine with two CPUs, as
# the in-guest tests use. It boots the x86_64 KUnit kernel's bzImage
# (kernel.sh x86_64 kunit; scripts/kunit.sh --arch x86_64 runs kunit.py exec
# on that build).
from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y''',
			   qemu_arch='x86_64',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0',
			   extra_qemu_params=['-smp', '2'])
