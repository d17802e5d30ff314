/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the suites need from patches/0007 and 0008: the fork_copy= policy
 * the kernel booted with, and the /proc/vmstat fork_* counters. Without
 * those options the policy is upstream's and there are no counters.
 */
#ifndef FORKLAB_FORK_COPY_POLICY_H
#define FORKLAB_FORK_COPY_POLICY_H

#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/vmstat.h>

#include "../internal.h"
#include "fork_copy_rule.h"

static inline enum fork_copy_policy booted_fork_copy_policy(void)
{
#ifdef CONFIG_FORK_COPY_POLICY
	return READ_ONCE(fork_copy_policy);
#else
	return FORK_COPY_LAZY;
#endif
}

/* Does the booted policy copy a vma? @lazy_copies is upstream's answer. */
static inline bool policy_copies(vm_flags_t flags, bool lazy_copies)
{
	return fork_copy_rule(booted_fork_copy_policy(), lazy_copies,
			      flags & VM_MAYSHARE);
}

struct fork_counts {
	unsigned long n[NR_FORK_COUNTS];
};

/*
 * The counter one vma's decision moves: patches/0007 counts the first
 * reason vma_needs_copy() has to copy, in its order, or the skip. @copy
 * is the decision under the booted policy (policy_copies()); a copy for
 * none of upstream's reasons is the policy's.
 */
static inline enum fork_count fork_count_of(bool copy, bool dst_uffd_wp,
					    vm_flags_t flags, bool anon_vma)
{
	if (!copy)
		return COUNT_SKIP;
	if (dst_uffd_wp)
		return COUNT_UFFD_WP;
	if (flags & (VM_PFNMAP | VM_MIXEDMAP))
		return COUNT_PFNMAP;
	if (anon_vma)
		return COUNT_ANON_VMA;
	return COUNT_POLICY;
}

#ifdef CONFIG_FORK_COPY_STATS
static inline struct fork_counts read_fork_counts(struct kunit *test)
{
	static const enum vm_event_item items[NR_FORK_COUNTS] = {
		FORK_VMA_COPY_UFFD_WP, FORK_VMA_COPY_PFNMAP,
		FORK_VMA_COPY_ANON_VMA, FORK_VMA_COPY_POLICY, FORK_VMA_SKIP,
		FORK_PTE_COPY,
	};
	struct fork_counts counts;
	unsigned long *events;
	int i;

	events = kunit_kcalloc(test, NR_VM_EVENT_ITEMS, sizeof(*events),
			       GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, events);
	all_vm_events(events);
	for (i = 0; i < NR_FORK_COUNTS; i++)
		counts.n[i] = events[items[i]];
	kunit_kfree(test, events);
	return counts;
}

/*
 * The counters moved by exactly @want between @before and now. Nothing
 * else forks while KUnit runs: kernel threads have no mm to copy.
 */
static inline void expect_fork_counts(struct kunit *test,
				      const struct fork_counts *before,
				      const struct fork_counts *want)
{
	struct fork_counts now = read_fork_counts(test);
	int i;

	for (i = 0; i < NR_FORK_COUNTS; i++)
		KUNIT_EXPECT_EQ_MSG(test, now.n[i] - before->n[i], want->n[i],
				    "%s", fork_count_names[i]);
}
#else
static inline struct fork_counts read_fork_counts(struct kunit *test)
{
	return (struct fork_counts){};
}

static inline void expect_fork_counts(struct kunit *test,
				      const struct fork_counts *before,
				      const struct fork_counts *want)
{
}
#endif /* CONFIG_FORK_COPY_STATS */

#endif /* FORKLAB_FORK_COPY_POLICY_H */
