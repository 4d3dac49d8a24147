// SPDX-License-Identifier: GPL-2.0

#include <linux/bug.h>
#include <linux/irqflags.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>

#if !defined(CONFIG_PREEMPT_RCU) && !defined(CONFIG_PREEMPT_COUNT)
/*
 * Read-side critical sections entered from Rust on this CPU. Without
 * PREEMPT_RCU and PREEMPT_COUNT nothing else tells whether the current task is
 * in one; a task in one neither migrates nor is preempted (it must not sleep),
 * so a per-CPU count is its own.
 */
static DEFINE_PER_CPU(unsigned int, rust_rcu_depth);
#endif

void rust_helper_rcu_read_lock(void)
{
	rcu_read_lock();
#if !defined(CONFIG_PREEMPT_RCU) && !defined(CONFIG_PREEMPT_COUNT)
	this_cpu_inc(rust_rcu_depth);
#endif
}

void rust_helper_rcu_read_unlock(void)
{
#if !defined(CONFIG_PREEMPT_RCU) && !defined(CONFIG_PREEMPT_COUNT)
	this_cpu_dec(rust_rcu_depth);
#endif
	rcu_read_unlock();
}

/*
 * Whether waiting for a grace period here could not work: the current task is
 * in an RCU read-side critical section, or in atomic context.
 *
 * With PREEMPT_COUNT, !preemptible() covers interrupt context (hard and soft
 * IRQ, NMI), bottom halves, preemption or interrupts disabled, and spinlocks,
 * and, without PREEMPT_RCU, rcu_read_lock() (which disables preemption). With
 * PREEMPT_RCU, rcu_preempt_depth() adds the read-side sections that leave the
 * task preemptible.
 *
 * Without PREEMPT_COUNT, preemptible() is constantly 0 and preempt_disable()
 * leaves no trace, but preempt_count() still counts hardirq and NMI nesting
 * (irq_enter(), nmi_enter()) and softirqs and bottom-half-disabled sections
 * (__local_bh_disable_ip()) in every configuration, so in_interrupt() is
 * exact there, and irqs_disabled() reads the interrupt flag. Only
 * preempt_disable() and spinlocks remain unseen; of the read-side sections,
 * the per-CPU count records those entered from Rust.
 */
bool rust_helper_rcu_cannot_sync(void)
{
#if defined(CONFIG_PREEMPT_RCU)
	return rcu_preempt_depth() || !preemptible();
#elif defined(CONFIG_PREEMPT_COUNT)
	return !preemptible();
#else
	return this_cpu_read(rust_rcu_depth) != 0 || in_interrupt() ||
	       irqs_disabled();
#endif
}

#ifdef CONFIG_PROVE_RCU
/*
 * kernel::sync::rcu::assume_read_side()'s claim, checked: the caller is in an
 * RCU read-side critical section of some kind.
 */
void rust_helper_rcu_check_any_held(void)
{
	WARN_ON_ONCE(!rcu_read_lock_any_held());
}
#endif
