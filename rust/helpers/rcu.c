// SPDX-License-Identifier: GPL-2.0

#include <linux/bug.h>
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
 */
bool rust_helper_rcu_cannot_sync(void)
{
#if defined(CONFIG_PREEMPT_RCU)
	return rcu_preempt_depth() || !preemptible();
#elif defined(CONFIG_PREEMPT_COUNT)
	return !preemptible();
#else
	return this_cpu_read(rust_rcu_depth) != 0;
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
