/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interfaces of 6.12 that forklab's suites use and Debian 12's 6.1
 * lacks, given to a 6.1 tree in 6.1's terms (docs/trees.md), so that each
 * suite is one file for both trees. On 6.12 this header defines only
 * forklab_* and FORKLAB_* names: the calls that differ between the trees
 * (forklab_mm_counter(), forklab_entry_page(), forklab_mm_counter_sum(),
 * forklab_pin_user_page_remote(), the fault-around and huge pte
 * accessors) and what a row asks of the tree (FORKLAB_LINUX_6_1,
 * FORKLAB_HAS_POISON_MARKER).
 */
#ifndef FORKLAB_COMPAT_H
#define FORKLAB_COMPAT_H

#include <kunit/test.h>
#include <kunit/resource.h>
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <linux/swapops.h>
#include <linux/version.h>

#include "../internal.h"

/* forklab builds 6.12 and 6.1: "before 6.2" is 6.1 */
#define FORKLAB_LINUX_6_1	(LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0))

#if FORKLAB_LINUX_6_1

/*
 * KUnit's deferred actions (6.5): one kunit_resource each, whose free
 * runs the action; resources are freed in reverse order of adding, as
 * actions run.
 */
typedef void (kunit_action_t)(void *);

#define KUNIT_DEFINE_ACTION_WRAPPER(wrapper, orig, arg_type)	\
	static void wrapper(void *in)				\
	{							\
		orig((arg_type)in);				\
	}

struct forklab_action {
	kunit_action_t *fn;
	void *ctx;
};

/*
 * Told from other resources by name: this header's functions are static,
 * one copy per file, so their addresses do not tell.
 */
#define FORKLAB_ACTION	"forklab_action"

static inline int forklab_action_init(struct kunit_resource *res, void *action)
{
	res->data = action;
	res->name = FORKLAB_ACTION;
	return 0;
}

static inline void forklab_action_free(struct kunit_resource *res)
{
	struct forklab_action *action = res->data;

	action->fn(action->ctx);
	kfree(action);
}

static inline int kunit_add_action_or_reset(struct kunit *test,
					    kunit_action_t *fn, void *ctx)
{
	struct forklab_action *action = kmalloc(sizeof(*action), GFP_KERNEL);

	if (action) {
		action->fn = fn;
		action->ctx = ctx;
		if (kunit_alloc_resource(test, forklab_action_init,
					 forklab_action_free, GFP_KERNEL,
					 action))
			return 0;
		kfree(action);
	}
	fn(ctx);
	return -ENOMEM;
}

static inline bool forklab_action_match(struct kunit *test,
					struct kunit_resource *res, void *want)
{
	struct forklab_action *action = res->data, *wanted = want;

	return res->name && !strcmp(res->name, FORKLAB_ACTION) &&
	       action->fn == wanted->fn && action->ctx == wanted->ctx;
}

/* Run the action now, and not again at the end of the test. */
static inline void kunit_release_action(struct kunit *test,
					kunit_action_t *fn, void *ctx)
{
	struct forklab_action wanted = { .fn = fn, .ctx = ctx };

	kunit_destroy_resource(test, forklab_action_match, &wanted);
}

/* A parameter's description is the row's member @member (6.6). */
#define KUNIT_ARRAY_PARAM_DESC(name, array, member)			\
	static void name##_forklab_desc(typeof((array)[0]) *row,	\
					char *desc)			\
	{								\
		strscpy(desc, row->member, KUNIT_PARAM_DESC_SIZE);	\
	}								\
	KUNIT_ARRAY_PARAM(name, array, name##_forklab_desc)

#define KUNIT_EXPECT_MEMEQ_MSG(test, left, right, size, fmt, ...)	\
	KUNIT_EXPECT_TRUE_MSG(test, !memcmp(left, right, size), fmt,	\
			      ##__VA_ARGS__)

#define KUNIT_FAIL_AND_ABORT(test, fmt, ...)				\
	KUNIT_ASSERT_TRUE_MSG(test, false, fmt, ##__VA_ARGS__)

/* 6.1's KUnit has no attributes: a slow case is a case */
#define KUNIT_CASE_SLOW(name)	KUNIT_CASE(name)

#define pmdp_get(pmdp)	READ_ONCE(*(pmdp))

/* 6.1 counts rss by page, and finds a migration entry's page */
#define forklab_mm_counter(page)	mm_counter(page)
#define forklab_entry_page(entry)	pfn_swap_entry_to_page(entry)

/*
 * 6.1's rss counters are atomics, with a task's own faults cached in the
 * task until sync_mm_rss() (kthread_unuse_mm() syncs them too).
 */
static inline unsigned long forklab_mm_counter_sum(struct mm_struct *mm,
						   int member)
{
	if (current->mm == mm)
		sync_mm_rss(mm);
	return get_mm_counter(mm, member);
}

#define forklab_pin_user_page_remote(mm, addr, flags, page)		\
	pin_user_pages_remote(mm, addr, 1, flags, page, NULL, NULL)

#ifdef CONFIG_HUGETLB_PAGE
/* 6.1's huge pte accessors take neither the mm and address nor the size */
static inline pte_t forklab_huge_ptep_get(struct mm_struct *mm,
					  unsigned long addr, pte_t *ptep)
{
	return huge_ptep_get(ptep);
}

static inline void forklab_set_huge_pte_at(struct mm_struct *mm,
					   unsigned long addr, pte_t *ptep,
					   pte_t pte, unsigned long sz)
{
	set_huge_pte_at(mm, addr, ptep, pte);
}
#endif

static inline void vm_flags_init(struct vm_area_struct *vma,
				 unsigned long flags)
{
	vma->vm_flags = flags;
}

static inline void vm_flags_set(struct vm_area_struct *vma,
				unsigned long flags)
{
	vma->vm_flags |= flags;
}

/*
 * 6.1 has the uffd-wp marker only (PTE_MARKER_POISONED came in 6.8): a
 * bit 6.1's markers do not use names the rows that need it, which skip.
 */
#define FORKLAB_HAS_POISON_MARKER	0
#define PTE_MARKER_POISONED		BIT(1)

/* 6.1's fault-around window is in bytes (fault_around_bytes) */
static inline unsigned long forklab_fault_around(void)
{
	return READ_ONCE(fault_around_bytes) >> PAGE_SHIFT;
}

static inline void forklab_set_fault_around(unsigned long pages)
{
	WRITE_ONCE(fault_around_bytes, pages << PAGE_SHIFT);
}

#else /* 6.12 */

#define forklab_mm_counter(page)	mm_counter(page_folio(page))
#define forklab_entry_page(entry)	folio_page(pfn_swap_entry_folio(entry), 0)
#define forklab_mm_counter_sum(mm, member)	get_mm_counter_sum(mm, member)
#define forklab_pin_user_page_remote(mm, addr, flags, page)		\
	pin_user_pages_remote(mm, addr, 1, flags, page, NULL)
#define forklab_huge_ptep_get(mm, addr, ptep)	huge_ptep_get(mm, addr, ptep)
#define forklab_set_huge_pte_at(mm, addr, ptep, pte, sz)		\
	set_huge_pte_at(mm, addr, ptep, pte, sz)
#define FORKLAB_HAS_POISON_MARKER	1

static inline unsigned long forklab_fault_around(void)
{
	return READ_ONCE(fault_around_pages);
}

static inline void forklab_set_fault_around(unsigned long pages)
{
	WRITE_ONCE(fault_around_pages, pages);
}

#endif

#endif /* FORKLAB_COMPAT_H */
