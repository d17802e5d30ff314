// SPDX-License-Identifier: GPL-2.0
/*
 * forklab_fork_thp: a PMD-mapped transparent huge page at fork, as
 * copy_huge_pmd() hands it over. The parent is one private anon vma of
 * HPAGE_PMD_SIZE at FORK_ADDR (aligned), MADV_HUGEPAGE, first touched by
 * the row's access, which maps it with one pmd:
 *
 *   FORK_ADDR (PMD aligned)
 *   |<------------------ one pmd: HPAGE_PMD_SIZE ------------------>|
 *   written: a THP, one pmd
 *   read: the huge zero page, one pmd
 *   pinned: a THP, one pmd, which fork splits
 *   split: a THP mapped by ptes | the last page zapped (MADV_DONTNEED) |
 *
 * The rows read the pmds and ptes of both sides directly: bits no
 * interface shows per pmd (young, dirty, PageAnonExclusive of the head),
 * and the huge zero page's reference, which the mm's MMF_HUGE_ZERO_PAGE
 * stands for. Once the child is gone the THP's references are back to
 * what they were, and once both are gone every page table they had.
 */

#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/coredump.h>

#include "forklab_mm.h"

enum thp_access { THP_WRITTEN, THP_READ, THP_PINNED, THP_SPLIT, THP_MIGRATING };

struct thp_case {
	const char *desc;
	enum thp_access access;
	bool mixed;	/* THP_SPLIT: the first pte read-only, the sixth clean */
	bool exclusive;	/* THP_MIGRATING: readable-exclusive, not writable */
	bool uffd_wp_vma;	/* THP_MIGRATING: both vmas VM_UFFD_WP */
};

static const struct thp_case thp_cases[] = {
	/*
	 * One pmd, write-protected on both sides (else a write of either
	 * shows in the other: mutants 42, 46), the child's old; the head
	 * page exclusive to neither, else the parent's next write would
	 * reuse the THP under the child.
	 */
	{ .desc = "THP written: one pmd copied", .access = THP_WRITTEN },
	/*
	 * The child maps the huge zero page too and must hold its own
	 * reference (mm_get_huge_zero_folio()): without it, the shrinker
	 * frees the page once the parent is gone, under the child's pmd.
	 */
	{ .desc = "huge zero page: the child holds a reference", .access = THP_READ },
	/*
	 * A pinned THP cannot be shared (CVE-2020-29374's THP side):
	 * copy_huge_pmd() splits the parent's pmd and the pte copy then
	 * gives the child its own copy of every page, at once.
	 */
	{ .desc = "THP pinned: split, every page copied early", .access = THP_PINNED },
	/*
	 * A THP mapped by ptes (its pmd split by a partial zap) is copied in
	 * batches (folio_pte_batch(), 6.9): every pte of a batch must come
	 * out as the single-pte copy would, write-protected on both sides
	 * (wrprotect_ptes() over the whole batch), the child's old, every
	 * page exclusive to neither side.
	 */
	{ .desc = "THP mapped by ptes: batch-copied", .access = THP_SPLIT },
	/*
	 * The bits a batch may not ignore, and one it ignores: a batch
	 * begins at a read-only pte and takes writable ones (write is
	 * ignored), so it must still write-protect the parent's whole
	 * batch (any_writable); a clean pte in a private mapping ends a
	 * batch (dirty is ignored only in a shared one), or the child's
	 * copy of it would be dirty like the first.
	 */
	{ .desc = "THP mapped by ptes, the first read-only, one clean: batch-copied",
	  .access = THP_SPLIT, .mixed = true },
#if defined(CONFIG_ARCH_ENABLE_THP_MIGRATION) && defined(CONFIG_MEM_SOFT_DIRTY) && \
	defined(CONFIG_HAVE_ARCH_USERFAULTFD_WP)
	/*
	 * A THP under migration: its pmd a writable migration entry
	 * (set_pmd_migration_entry(), the folio locked), with soft-dirty,
	 * uffd-wp, young and dirty. As for a pte (forklab_fork_entries),
	 * the entry must come out readable in both mms, or the migrated THP
	 * is mapped writable in both; the parent's keeps soft-dirty (a
	 * checkpoint would take the page for unwritten) and dirty, the
	 * child's too, but not uffd-wp, its vma not registered. The child
	 * counts the THP in its rss and holds a deposited page table, as
	 * for a present pmd.
	 */
	{ .desc = "THP under migration: the pmd entry readable in both, soft-dirty kept",
	  .access = THP_MIGRATING },
	/*
	 * The same from a readable-exclusive entry (an exclusive THP
	 * mapped read-only): copied as it is, both mms would map the
	 * migrated THP exclusive, and neither write would COW.
	 */
	{ .desc = "THP under migration, readable-exclusive: readable in both",
	  .access = THP_MIGRATING, .exclusive = true },
	/*
	 * Both vmas registered for uffd-wp: both entries keep uffd-wp, or
	 * the migrated THP is mapped writable in a protected range.
	 */
	{ .desc = "THP under migration, both VM_UFFD_WP: uffd-wp kept in both",
	  .access = THP_MIGRATING, .uffd_wp_vma = true },
#endif
};

KUNIT_ARRAY_PARAM_DESC(thp_cases, thp_cases, desc);

KUNIT_DEFINE_ACTION_WRAPPER(unpin_action, unpin_user_page, struct page *);

/* The pmd mapping @addr in @mm (pmd_none if none), read under the mmap lock. */
static pmd_t read_pmd(struct mm_struct *mm, unsigned long addr)
{
	pmd_t pmdval = __pmd(0), *pmd;

	mmap_read_lock(mm);
	pmd = forklab_find_pmd(mm, addr);
	if (pmd)
		pmdval = pmdp_get(pmd);
	mmap_read_unlock(mm);
	return pmdval;
}

/* Rewrite the pte at @addr of @mm by @change, as the test's own bits. */
static void change_pte(struct kunit *test, struct mm_struct *mm, unsigned long addr,
		       pte_t (*change)(pte_t))
{
	pte_t pte, old;

	mmap_read_lock(mm);
	KUNIT_ASSERT_TRUE_MSG(test, forklab_read_pte(mm, addr, &pte), "no pte at %#lx", addr);
	mmap_read_unlock(mm);
	KUNIT_ASSERT_TRUE(test, forklab_swap_pte(mm, addr, change(pte), &old));
}

static struct mm_struct *thp_parent(struct kunit *test,
				    const struct thp_case *row, u8 *buf)
{
	struct mm_struct *mm = forklab_new_mm(test);
	struct page *page;
	unsigned long mapped;

	forklab_use_mm(mm);
	mapped = vm_mmap(NULL, FORK_ADDR, HPAGE_PMD_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, 0);
	KUNIT_ASSERT_EQ(test, mapped, FORK_ADDR);
	KUNIT_ASSERT_EQ(test, 0, do_madvise(mm, FORK_ADDR, HPAGE_PMD_SIZE,
					    MADV_HUGEPAGE));
	if (row->access == THP_READ)
		forklab_read_vma_at(test, mm, FORK_ADDR, buf);
	else
		forklab_write_vma_at(test, mm, FORK_ADDR, PARENT_PATTERN, buf);
	forklab_use_mm(NULL);
	if (!pmd_trans_huge(read_pmd(mm, FORK_ADDR)))
		kunit_skip(test, "no THP at the fault (sysfs settings, or no order-%d page)",
			   HPAGE_PMD_ORDER);
	if (row->access == THP_SPLIT) {
		/*
		 * No THP for the vma before the split: khugepaged, woken by
		 * MADV_HUGEPAGE, would collapse the ptes into a new THP.
		 */
		forklab_use_mm(mm);
		KUNIT_ASSERT_EQ(test, 0, do_madvise(mm, FORK_ADDR, HPAGE_PMD_SIZE,
						    MADV_NOHUGEPAGE));
		KUNIT_ASSERT_EQ(test, 0, do_madvise(mm, FORK_ADDR + HPAGE_PMD_SIZE - PAGE_SIZE,
						    PAGE_SIZE, MADV_DONTNEED));
		forklab_use_mm(NULL);
		if (row->mixed) {
			change_pte(test, mm, FORK_ADDR, pte_wrprotect);
			change_pte(test, mm, FORK_ADDR + 5 * PAGE_SIZE, pte_mkclean);
		}
	}
	if (row->access == THP_PINNED) {
		mmap_read_lock(mm);
		KUNIT_ASSERT_EQ(test, 1L, forklab_pin_user_page_remote(mm, FORK_ADDR,
								       FOLL_WRITE, &page));
		mmap_read_unlock(mm);
		KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, unpin_action, page));
	}
	return mm;
}

/* A THP_MIGRATING row's entry, to take out once the child is gone. */
struct planted_pmd {
	struct mm_struct *mm;
	pmd_t orig;
	struct folio *folio;
};

/* Put @entry in the pmd at FORK_ADDR of @mm; the old one in @old. */
static bool swap_pmd(struct mm_struct *mm, pmd_t entry, pmd_t *old)
{
	spinlock_t *ptl;	/* the pmd's, as fork takes it */
	pmd_t *pmd;

	mmap_read_lock(mm);
	pmd = forklab_find_pmd(mm, FORK_ADDR);
	if (pmd) {
		ptl = pmd_lock(mm, pmd);
		*old = pmdp_get(pmd);
		set_pmd_at(mm, FORK_ADDR, pmd, entry);
		spin_unlock(ptl);
	}
	mmap_read_unlock(mm);
	return pmd;
}

static void unplant_pmd(void *data)
{
	struct planted_pmd *planted = data;
	pmd_t old;

	swap_pmd(planted->mm, planted->orig, &old);
	folio_unlock(planted->folio);
}

/*
 * Replace the parent's THP pmd by a writable (or readable-exclusive)
 * migration entry with every bit.
 */
static struct planted_pmd *plant_pmd_migration(struct kunit *test, struct mm_struct *mm,
					       struct folio *folio, bool exclusive)
{
	struct planted_pmd *planted = kunit_kzalloc(test, sizeof(*planted), GFP_KERNEL);
	swp_entry_t entry = exclusive ?
		make_readable_exclusive_migration_entry(folio_pfn(folio)) :
		make_writable_migration_entry(folio_pfn(folio));
	pmd_t pmd;

	forklab_require_migration_ad(test);
	KUNIT_ASSERT_NOT_NULL(test, planted);
	KUNIT_ASSERT_TRUE(test, folio_trylock(folio));
	planted->folio = folio;
	planted->mm = mm;
	entry = make_migration_entry_dirty(make_migration_entry_young(entry));
	pmd = pmd_swp_mkuffd_wp(pmd_swp_mksoft_dirty(swp_entry_to_pmd(entry)));
	if (!swap_pmd(mm, pmd, &planted->orig)) {
		folio_unlock(folio);
		KUNIT_FAIL_AND_ABORT(test, "no pmd at %#lx", FORK_ADDR);
	}
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, unplant_pmd, planted));
	return planted;
}

static void expect_pmd_migration(struct kunit *test, struct mm_struct *mm,
				 unsigned long pfn, bool child, bool registered,
				 const char *who)
{
	pmd_t pmd = read_pmd(mm, FORK_ADDR);
	swp_entry_t entry;

	KUNIT_ASSERT_TRUE_MSG(test, is_pmd_migration_entry(pmd), "%s: no pmd migration entry",
			      who);
	entry = pmd_to_swp_entry(pmd);
	KUNIT_EXPECT_EQ_MSG(test, swp_offset_pfn(entry), pfn, "%s: pfn", who);
	KUNIT_EXPECT_TRUE_MSG(test, is_readable_migration_entry(entry),
			      "%s: the entry of a COW-shared THP is %s", who,
			      is_writable_migration_entry(entry) ? "writable" : "exclusive");
	KUNIT_EXPECT_TRUE_MSG(test, pmd_swp_soft_dirty(pmd), "%s: soft-dirty lost", who);
	KUNIT_EXPECT_TRUE_MSG(test, is_migration_entry_dirty(entry), "%s: dirty lost", who);
	if (!child)
		KUNIT_EXPECT_TRUE_MSG(test, is_migration_entry_young(entry), "%s: young lost",
				      who);
	if (registered)
		KUNIT_EXPECT_TRUE_MSG(test, pmd_swp_uffd_wp(pmd),
				      "%s: uffd-wp lost in a vma registered for it", who);
	else if (child)
		KUNIT_EXPECT_FALSE_MSG(test, pmd_swp_uffd_wp(pmd),
				       "%s: uffd-wp kept in a vma not registered for it", who);
}

static void expect_pmd_copied(struct kunit *test, pmd_t before, pmd_t parent,
			      pmd_t child)
{
	struct page *head = pmd_page(before);

	KUNIT_ASSERT_TRUE_MSG(test, pmd_trans_huge(child), "the child has no huge pmd");
	KUNIT_ASSERT_TRUE(test, pmd_trans_huge(parent));
	KUNIT_EXPECT_EQ(test, pmd_pfn(child), pmd_pfn(before));
	KUNIT_EXPECT_EQ(test, pmd_pfn(parent), pmd_pfn(before));
	KUNIT_EXPECT_FALSE_MSG(test, pmd_write(parent), "the parent's pmd is writable");
	KUNIT_EXPECT_FALSE_MSG(test, pmd_write(child), "the child's pmd is writable");
	KUNIT_EXPECT_FALSE_MSG(test, pmd_young(child), "the child's pmd is young");
	KUNIT_EXPECT_EQ_MSG(test, !!pmd_young(parent), !!pmd_young(before),
			    "the parent's young bit");
	KUNIT_EXPECT_EQ_MSG(test, !!pmd_dirty(child), !!pmd_dirty(before),
			    "the child's dirty bit");
	KUNIT_EXPECT_EQ_MSG(test, !!pmd_dirty(parent), !!pmd_dirty(before),
			    "the parent's dirty bit");
	KUNIT_EXPECT_EQ_MSG(test, !!pmd_soft_dirty(child), !!pmd_soft_dirty(before),
			    "the child's soft-dirty bit");
	if (!is_huge_zero_pmd(before))
		KUNIT_EXPECT_FALSE_MSG(test, PageAnonExclusive(head),
				       "the THP stays exclusive while both map it");
}

/* What the ptes over the THP's range map in one mm. */
struct thp_ptes {
	unsigned int present, writable, young, dirty;
	unsigned int thp_pages;	/* the THP's own pages, each where it was */
	unsigned int exclusive;	/* anon pages with PageAnonExclusive */
};

static struct thp_ptes thp_ptes(struct mm_struct *mm, struct page *head)
{
	struct thp_ptes census = {};
	unsigned int i;
	pte_t pte;

	mmap_read_lock(mm);
	for (i = 0; i < HPAGE_PMD_NR; i++) {
		struct page *page;

		if (!forklab_read_pte(mm, FORK_ADDR + i * PAGE_SIZE, &pte) ||
		    !pte_present(pte))
			continue;
		page = pte_page(pte);
		census.present++;
		census.writable += !!pte_write(pte);
		census.young += !!pte_young(pte);
		census.dirty += !!pte_dirty(pte);
		census.thp_pages += page == head + i;
		census.exclusive += PageAnon(page) && PageAnonExclusive(page);
	}
	mmap_read_unlock(mm);
	return census;
}

/* THP_PINNED: the parent's ptes map the THP's pages, the child's copies. */
static void expect_split_and_copied(struct kunit *test, struct mm_struct *parent,
				    struct mm_struct *child, struct page *head)
{
	struct thp_ptes theirs;

	KUNIT_ASSERT_FALSE_MSG(test, pmd_trans_huge(read_pmd(parent, FORK_ADDR)),
			       "the parent's pinned THP was not split");
	KUNIT_ASSERT_FALSE(test, pmd_trans_huge(read_pmd(child, FORK_ADDR)));
	theirs = thp_ptes(child, head);
	KUNIT_EXPECT_EQ_MSG(test, theirs.present, HPAGE_PMD_NR, "ptes in the child");
	KUNIT_EXPECT_EQ_MSG(test, theirs.thp_pages, 0U,
			    "pages of the pinned THP shared with the child");
	KUNIT_EXPECT_EQ_MSG(test, theirs.exclusive, HPAGE_PMD_NR,
			    "the child's copies exclusive");
	KUNIT_EXPECT_EQ(test, theirs.writable, HPAGE_PMD_NR);
	KUNIT_EXPECT_EQ(test, thp_ptes(parent, head).thp_pages, HPAGE_PMD_NR);
	KUNIT_EXPECT_TRUE_MSG(test, PageAnonExclusive(head),
			      "the pinned page is not the parent's alone");
}

/* THP_SPLIT: the batch copy, as the single-pte copy would have it. */
static void expect_batch_copied(struct kunit *test, const struct thp_ptes *before,
				struct mm_struct *parent, struct mm_struct *child,
				struct page *head)
{
	struct thp_ptes ours = thp_ptes(parent, head), theirs = thp_ptes(child, head);
	unsigned int mapped = HPAGE_PMD_NR - 1;

	KUNIT_ASSERT_EQ(test, before->thp_pages, mapped);
	KUNIT_EXPECT_EQ_MSG(test, theirs.thp_pages, mapped, "the THP's pages in the child");
	KUNIT_EXPECT_EQ_MSG(test, ours.thp_pages, mapped, "the THP's pages in the parent");
	KUNIT_EXPECT_EQ_MSG(test, ours.writable, 0U, "writable ptes in the parent");
	KUNIT_EXPECT_EQ_MSG(test, theirs.writable, 0U, "writable ptes in the child");
	KUNIT_EXPECT_EQ_MSG(test, theirs.young, 0U, "young ptes in the child");
	KUNIT_EXPECT_EQ_MSG(test, ours.young, before->young, "young ptes in the parent");
	KUNIT_EXPECT_EQ_MSG(test, theirs.dirty, before->dirty, "dirty ptes in the child");
	KUNIT_EXPECT_EQ_MSG(test, ours.dirty, before->dirty, "dirty ptes in the parent");
	KUNIT_EXPECT_EQ_MSG(test, ours.exclusive, 0U,
			    "pages both map, exclusive to the parent");
}

static void fork_thp_test(struct kunit *test)
{
	const struct thp_case *row = test->param_value;
	unsigned long pagetables = global_node_page_state(NR_PAGETABLE);
	u8 *buf = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);
	struct mm_struct *parent, *child;
	struct thp_ptes ptes_before = {};
	pmd_t before = __pmd(0);
	struct planted_pmd *planted = NULL;
	struct folio *folio;
	unsigned int refs;
	struct page *head;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	parent = thp_parent(test, row, buf);
	if (row->access == THP_SPLIT) {
		/* the first pte's page is the THP's head */
		head = forklab_take_census(parent, FORK_ADDR).pages[0];
		KUNIT_ASSERT_NOT_NULL(test, head);
		KUNIT_ASSERT_TRUE_MSG(test, folio_test_large(page_folio(head)),
				      "the THP was split, not only its pmd");
		ptes_before = thp_ptes(parent, head);
	} else {
		before = read_pmd(parent, FORK_ADDR);
		KUNIT_ASSERT_EQ(test, !!is_huge_zero_pmd(before), row->access == THP_READ);
		head = pmd_page(before);
	}
	if (row->access != THP_READ)
		KUNIT_ASSERT_TRUE(test, PageAnonExclusive(head));
	folio = page_folio(head);
	lru_add_drain();
	refs = folio_ref_count(folio);
	if (row->access == THP_MIGRATING) {
		if (row->uffd_wp_vma)
			forklab_register_uffd_wp(test, parent, FORK_ADDR);
		planted = plant_pmd_migration(test, parent, folio, row->exclusive);
	}

	/* its action runs before unplant_pmd's: the folio is locked */
	child = forklab_fork_mm(test, parent);
	if (row->access == THP_MIGRATING) {
		expect_pmd_migration(test, child, folio_pfn(folio), true, row->uffd_wp_vma,
				     "child");
		expect_pmd_migration(test, parent, folio_pfn(folio), false, row->uffd_wp_vma,
				     "parent");
		KUNIT_EXPECT_EQ_MSG(test, mm_pgtables_bytes(child), mm_pgtables_bytes(parent),
				    "the child's pgtables_bytes (VmPTE), with the deposited table");
		KUNIT_EXPECT_EQ(test, get_mm_counter(child, MM_ANONPAGES),
				(unsigned long)HPAGE_PMD_NR);
	} else if (row->access == THP_PINNED || row->access == THP_SPLIT) {
		forklab_expect_rss_counters(test, child);
		if (row->access == THP_PINNED)
			expect_split_and_copied(test, parent, child, head);
		else
			expect_batch_copied(test, &ptes_before, parent, child, head);
	} else {
		expect_pmd_copied(test, before, read_pmd(parent, FORK_ADDR),
				  read_pmd(child, FORK_ADDR));
		/*
		 * The pte walk of forklab_expect_rss_counters() sees neither
		 * a pmd nor the page table deposited under it
		 * (pgtable_trans_huge_deposit(), counted in pgtables_bytes):
		 * the child's must be the parent's.
		 */
		KUNIT_EXPECT_EQ_MSG(test, mm_pgtables_bytes(child), mm_pgtables_bytes(parent),
				    "the child's pgtables_bytes (VmPTE), with the deposited table");
		KUNIT_EXPECT_EQ(test, get_mm_counter(child, MM_ANONPAGES),
				row->access == THP_READ ? 0UL : (unsigned long)HPAGE_PMD_NR);
	}
	if (row->access == THP_READ)
		KUNIT_EXPECT_TRUE_MSG(test, test_bit(MMF_HUGE_ZERO_PAGE, &child->flags),
				      "the child holds no huge zero page reference");

	/*
	 * The child's references on the THP go with it (not the zero
	 * page's); the parent's split pmd holds one per pte now.
	 */
	if (row->access != THP_READ) {
		kunit_release_action(test, forklab_mmput_action, child);
		lru_add_drain();
		if (row->access == THP_PINNED)
			refs += HPAGE_PMD_NR - 1;
		KUNIT_EXPECT_EQ_MSG(test, folio_ref_count(folio), refs,
				    "the THP's references once the child is gone");
		child = NULL;
	}
	if (planted)
		kunit_release_action(test, unplant_pmd, planted);
	forklab_expect_torn_down(test, parent, child, pagetables);
}

static struct kunit_case fork_thp_cases[] = {
	KUNIT_CASE_PARAM(fork_thp_test, thp_cases_gen_params),
	{}
};

static struct kunit_suite fork_thp_suite = {
	.name = "forklab_fork_thp",
	.test_cases = fork_thp_cases,
};

kunit_test_suite(fork_thp_suite);

MODULE_DESCRIPTION("KUnit tests of fork() of PMD-mapped transparent huge pages");
MODULE_LICENSE("GPL");
