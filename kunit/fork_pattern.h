/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bytes every forklab suite writes into the memory it forks, in the
 * kernel (kunit/forklab_mm.c) and in user space (mm-tests/forklab.h):
 * word @word of page @page of region @region as @writer wrote it, a hash
 * of all four (splitmix64's finalizer). A pte that points at another
 * page, another region's, or the other side's copy reads wrong in nearly
 * every word of it.
 */
#ifndef FORKLAB_FORK_PATTERN_H
#define FORKLAB_FORK_PATTERN_H

static inline uint64_t page_word(unsigned int writer, uint32_t region,
				 size_t page, size_t word)
{
	uint64_t h = ((uint64_t)region << 32 | (uint64_t)writer << 24) ^
		     ((uint64_t)page << 40 | page >> 24) ^
		     (word * 0x9e3779b97f4a7c15ULL);

	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

#endif /* FORKLAB_FORK_PATTERN_H */
