// SPDX-License-Identifier: GPL-2.0

#include <linux/sched.h>

/* For seq_file callbacks that may run over many records without sleeping. */
void rust_helper_cond_resched(void)
{
	cond_resched();
}
