// SPDX-License-Identifier: GPL-2.0

#include <linux/module.h>

/*
 * The module whose memory holds @addr, or NULL for built-in code and data.
 * The result is only compared: a Rust driver's declared owner (its
 * THIS_MODULE) against the module its operations tables are in.
 */
struct module *rust_helper_module_of_address(const void *addr)
{
	struct module *mod;

	preempt_disable();
	mod = __module_address((unsigned long)addr);
	preempt_enable();
	return mod;
}
