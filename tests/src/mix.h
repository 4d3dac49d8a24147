/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mix.h: the 64-bit mixer (splitmix64's finaliser) the test programs derive
 * their page contents from: each input gives a well-spread, reproducible
 * word, so that a page's data follows from its index and a seed.
 */
#ifndef RZRAM_TESTS_MIX_H
#define RZRAM_TESTS_MIX_H

#include <stdint.h>

static inline uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

#endif
