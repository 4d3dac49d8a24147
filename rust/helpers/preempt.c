// SPDX-License-Identifier: GPL-2.0

#include <linux/preempt.h>
#include <linux/smp.h>

void rust_helper_preempt_disable(void)
{
	preempt_disable();
}

void rust_helper_preempt_enable(void)
{
	preempt_enable();
}

bool rust_helper_in_interrupt(void)
{
	return in_interrupt();
}

bool rust_helper_in_task(void)
{
	return in_task();
}

/*
 * preempt_disable() and raw_smp_processor_id() in one call: the CPU number,
 * which stays the caller's until it enables preemption again.
 */
unsigned int rust_helper_preempt_disable_cpu(void)
{
	preempt_disable();
	return raw_smp_processor_id();
}

/*
 * As rust_helper_preempt_disable_cpu(), outside interrupt context (hard or
 * soft interrupt, NMI, bottom halves disabled: in_interrupt()); there it
 * returns -1 and leaves preemption alone.
 */
int rust_helper_preempt_disable_cpu_outside_interrupt(void)
{
	if (in_interrupt())
		return -1;
	preempt_disable();
	return raw_smp_processor_id();
}

/*
 * The current CPU's number outside interrupt context (in_interrupt() false),
 * -1 in it. For a caller that has preemption disabled: otherwise the number
 * may be stale at once.
 */
int rust_helper_cpu_outside_interrupt(void)
{
	return in_interrupt() ? -1 : (int)raw_smp_processor_id();
}
