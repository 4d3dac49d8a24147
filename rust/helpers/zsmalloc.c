// SPDX-License-Identifier: GPL-2.0

#include <linux/preempt.h>
#include <linux/smp.h>

/*
 * Used by the zsmalloc abstractions to keep one mapping per CPU: zsmalloc maps
 * objects through a per-CPU area.
 */

void rust_helper_preempt_disable(void)
{
	preempt_disable();
}

void rust_helper_preempt_enable(void)
{
	preempt_enable();
}

unsigned int rust_helper_raw_smp_processor_id(void)
{
	return raw_smp_processor_id();
}

bool rust_helper_in_interrupt(void)
{
	return in_interrupt();
}
