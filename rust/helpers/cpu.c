// SPDX-License-Identifier: GPL-2.0

#include <linux/cpumask.h>
#include <linux/smp.h>

unsigned int rust_helper_raw_smp_processor_id(void)
{
	return raw_smp_processor_id();
}

unsigned int rust_helper_num_online_cpus(void)
{
	return num_online_cpus();
}
