// SPDX-License-Identifier: GPL-2.0

#include <linux/string.h>

/*
 * memset_l() is a static inline everywhere, and so is memset64() on x86
 * (a function on arm64): the one name bindgen sees on every architecture.
 */
void *rust_helper_memset_l(unsigned long *p, unsigned long v, size_t n)
{
	return memset_l(p, v, n);
}
