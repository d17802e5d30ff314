// SPDX-License-Identifier: GPL-2.0
/*
 * forklab_fork_anon_vma: which anon_vma anon_vma_fork() gives a child's
 * vma. anon_vma_clone() may hand it an ancestor's that no vma uses any
 * more and that has at most one child anon_vma, instead of a new one:
 *
 *   gen1 --fork--> gen2 --fork--> gen3 --fork--> gen4 --fork--> gen5
 *   anon_vma A     B (parent A)   C (parent B)   B again, if    E (parent B)
 *                                                gen2 is gone
 *                                                and gen3 is
 *                                                B's only child;
 *                                                else D (parent C)
 *
 * A wrong reuse puts two lineages in one anon_vma, whose counts then go
 * wrong and free it under a live vma: the 2022 use-after-free that
 * 2555283eb40d ("mm/rmap: Fix anon_vma->degree ambiguity leading to
 * double-reuse") fixed by splitting degree into num_children and
 * num_active_vmas. After the first reuse, gen4's chain holds C, a
 * descendant of its own anon_vma B that gen3's vma still uses and that
 * has no child: a degree of 1 that the old test (degree < 2) read as "no
 * vma, one child", handing C to gen5 too. No reuse at all only costs
 * memory, and user space cannot see either: so here, by pointer.
 *
 * gen1 writes every page and gen2 page 1 again: page 0's folio is A's,
 * page 1's B's. After the last fork, an rmap walk of each folio must find
 * every vma that maps it (folio_mapcount()): a chain link that the clone
 * left out would hide a vma from reclaim and migration, which would then
 * free or move a page it still maps.
 */

#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/rmap.h>

#include "forklab_mm.h"

struct reuse_case {
	const char *desc;
	bool gen2_gone;		/* gen2 exits before gen3 forks gen4 */
	bool gen3_sibling;	/* gen2 forks a second child too */
	bool fork_twice;	/* gen3 forks gen4, then gen4b */
	bool fork_gen5;		/* gen4 forks gen5 */
	bool reuse;		/* gen4 gets B */
};

static const struct reuse_case reuse_cases[] = {
	/* B still has a vma: reused, two mms' ptes would share B. */
	{ .desc = "gen2 alive: new anon_vma", .reuse = false },
	{ .desc = "gen2 gone, gen3 only child: reuses gen2's", .gen2_gone = true,
	  .reuse = true },
	/* Two lineages below B: reused, their counts would mix. */
	{ .desc = "gen2 gone, two children: new anon_vma", .gen2_gone = true,
	  .gen3_sibling = true, .reuse = false },
	/* After the first reuse B is active again. */
	{ .desc = "gen2 gone, second fork of gen3: no double reuse",
	  .gen2_gone = true, .fork_twice = true, .reuse = true },
	/*
	 * 2555283eb40d: C is in gen4's chain, used by gen3 and childless,
	 * which degree (1) did not tell from "no vma, one child": gen5
	 * would share C with gen3's vma.
	 */
	{ .desc = "gen2 gone, gen4 forks: gen3's anon_vma is not reused",
	  .gen2_gone = true, .fork_gen5 = true, .reuse = true },
};

KUNIT_ARRAY_PARAM_DESC(reuse_cases, reuse_cases, desc);

static struct anon_vma *vma_anon_vma(struct mm_struct *mm)
{
	struct vm_area_struct *vma;
	struct anon_vma *anon_vma;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, FORK_ADDR);
	anon_vma = vma ? vma->anon_vma : NULL;
	mmap_read_unlock(mm);
	return anon_vma;
}

static bool count_vma(struct folio *folio, struct vm_area_struct *vma,
		      unsigned long addr, void *arg)
{
	(*(int *)arg)++;
	return true;
}

/* The vmas an rmap walk of @page's folio finds, against its mapcount. */
static void expect_rmap_finds_all(struct kunit *test, struct page *page,
				  const char *which)
{
	struct folio *folio = page_folio(page);
	int found = 0;
	struct rmap_walk_control rwc = {
		.rmap_one = count_vma,
		.arg = &found,
	};

	folio_lock(folio);
	rmap_walk(folio, &rwc);
	KUNIT_EXPECT_EQ_MSG(test, found, folio_mapcount(folio),
			    "%s: vmas found by rmap against mapcount", which);
	folio_unlock(folio);
}

/* @who's anon_vma @x is a new one, a child of @parent: none of A, B, C. */
static void expect_new_anon_vma(struct kunit *test, const char *who,
				struct anon_vma *x, struct anon_vma *parent,
				struct anon_vma *a, struct anon_vma *b,
				struct anon_vma *c)
{
	KUNIT_EXPECT_TRUE_MSG(test, x != a && x != b && x != c &&
			      x->parent == parent,
			      "%s reused an anon_vma (A %d, B %d, C %d)",
			      who, x == a, x == b, x == c);
}

static void anon_vma_reuse_test(struct kunit *test)
{
	const struct reuse_case *row = test->param_value;
	static const struct fork_case anon = {
		.desc = "private anon", .mapping = PRIVATE_ANON, .prot = RW,
		.access = WRITES,
	};
	struct mm_struct *gen1, *gen2, *gen3, *gen4, *last;
	struct anon_vma *a, *b, *c, *d;
	struct pte_census census;
	u8 *buf = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	gen1 = forklab_build_parent(test, &anon, buf);
	forklab_use_mm(NULL);
	gen2 = forklab_fork_mm(test, gen1);
	forklab_write_at(test, gen2, FORK_ADDR + PAGE_SIZE, PAGE_SIZE, CHILD_PATTERN, buf);
	forklab_use_mm(NULL);
	gen3 = forklab_fork_mm(test, gen2);
	if (row->gen3_sibling)
		forklab_fork_mm(test, gen2);
	a = vma_anon_vma(gen1);
	b = vma_anon_vma(gen2);
	c = vma_anon_vma(gen3);
	KUNIT_ASSERT_TRUE(test, a && b && c && a != b && b != c && a != c);
	/* the root's lock is every anon_vma's of the lineage */
	KUNIT_EXPECT_PTR_EQ(test, b->parent, a);
	KUNIT_EXPECT_PTR_EQ(test, c->parent, b);
	KUNIT_EXPECT_PTR_EQ(test, b->root, a);
	KUNIT_EXPECT_PTR_EQ(test, c->root, a);
	/* gen3's chain keeps B alive once gen2 is gone */
	if (row->gen2_gone)
		kunit_release_action(test, forklab_mmput_action, gen2);

	gen4 = forklab_fork_mm(test, gen3);
	last = gen4;
	d = vma_anon_vma(gen4);
	if (row->reuse)
		KUNIT_EXPECT_PTR_EQ_MSG(test, d, b, "gen4 did not reuse gen2's anon_vma");
	else
		expect_new_anon_vma(test, "gen4", d, c, a, b, c);
	if (row->fork_twice) {
		last = forklab_fork_mm(test, gen3);
		d = vma_anon_vma(last);
		expect_new_anon_vma(test, "gen4b", d, c, a, b, c);
	}
	if (row->fork_gen5) {
		last = forklab_fork_mm(test, gen4);
		d = vma_anon_vma(last);
		expect_new_anon_vma(test, "gen5", d, b, a, b, c);
	}
	KUNIT_EXPECT_PTR_EQ(test, d->root, a);
	forklab_expect_rss_counters(test, last);
	census = forklab_take_census(last, FORK_ADDR);
	KUNIT_ASSERT_TRUE(test, census.pages[0] && census.pages[1]);
	expect_rmap_finds_all(test, census.pages[0], "page 0 (A's)");
	expect_rmap_finds_all(test, census.pages[1], "page 1 (B's)");
}

static struct kunit_case fork_anon_vma_cases[] = {
	KUNIT_CASE_PARAM(anon_vma_reuse_test, reuse_cases_gen_params),
	{}
};

static struct kunit_suite fork_anon_vma_suite = {
	.name = "forklab_fork_anon_vma",
	.test_cases = fork_anon_vma_cases,
};

kunit_test_suite(fork_anon_vma_suite);

MODULE_DESCRIPTION("KUnit tests of the anon_vma a forked vma gets");
MODULE_LICENSE("GPL");
