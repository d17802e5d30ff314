/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every forklab suite checks of patches/0007 and 0008, in the kernel
 * (kunit/fork_copy_policy.h) and in user space (mm-tests/forklab.h): the
 * fork_copy= rule, the policies' names and the /proc/vmstat fork_*
 * counters' names. One copy: the two sides cannot drift apart.
 */
#ifndef FORKLAB_FORK_COPY_RULE_H
#define FORKLAB_FORK_COPY_RULE_H

#ifndef __KERNEL__
/* The kernel's enum (mm/internal.h, patches/0008), value for value. */
enum fork_copy_policy { FORK_COPY_LAZY, FORK_COPY_ALWAYS, FORK_COPY_SKIP_SHARED };
#endif

/* /proc/sys/vm/fork_copy's words, by enum fork_copy_policy. */
static const char * const fork_copy_policy_names[] = {
	"lazy", "always", "skip-shared",
};

/*
 * Does fork copy a vma under @policy? @lazy_copies is upstream's answer
 * (vma_needs_copy()); @shared: the vma is VM_MAYSHARE, not VM_SHARED: a
 * MAP_SHARED file opened O_RDONLY is shared too.
 */
static inline bool fork_copy_rule(enum fork_copy_policy policy,
				  bool lazy_copies, bool shared)
{
	switch (policy) {
	case FORK_COPY_ALWAYS:
		return true;
	case FORK_COPY_SKIP_SHARED:
		return lazy_copies || !shared;
	default:
		return lazy_copies;
	}
}

/*
 * Why fork copied a vma, or that it did not, and the ptes it copied: one
 * counter each (patches/0007 counts the first reason vma_needs_copy() has
 * to copy, in its order, or the skip).
 */
enum fork_count {
	COUNT_UFFD_WP, COUNT_PFNMAP, COUNT_ANON_VMA, COUNT_POLICY, COUNT_SKIP,
	COUNT_PTES, NR_FORK_COUNTS
};

/* Their names in /proc/vmstat. */
static const char * const fork_count_names[NR_FORK_COUNTS] = {
	"fork_vma_copy_uffd_wp", "fork_vma_copy_pfnmap",
	"fork_vma_copy_anon_vma", "fork_vma_copy_policy",
	"fork_vma_skip", "fork_pte_copy",
};

#endif /* FORKLAB_FORK_COPY_RULE_H */
