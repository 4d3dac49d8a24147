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

/*
 * Takes a reference to @mod if it is live: not loading (a failed init frees
 * it whatever its references) and not unloading.
 */
bool rust_helper_module_get_if_live(struct module *mod)
{
#ifdef CONFIG_MODULES
	return READ_ONCE(mod->state) == MODULE_STATE_LIVE && try_module_get(mod);
#else
	return false;
#endif
}

void rust_helper_module_put_ref(struct module *mod)
{
	module_put(mod);
}
