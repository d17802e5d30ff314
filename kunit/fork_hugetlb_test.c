// SPDX-License-Identifier: GPL-2.0
/*
 * forklab_fork_hugetlb: a private hugetlb page at fork, as
 * copy_hugetlb_page_range() hands over each kind of huge pte. The parent
 * is one MAP_PRIVATE vma of a hugetlbfs file (hugetlb_file_setup(), as
 * mmap(MAP_HUGETLB) makes it), one default-size huge page at FORK_ADDR,
 * written; the rows then replace its huge pte by the entry they test:
 *
 *   FORK_ADDR (huge page aligned)
 *   |<---------------- one huge pte: huge_page_size() --------------->|
 *   present: the written page, writable, dirty, young
 *   migration: an entry of that page (folio locked, as migration holds it)
 *   marker: a pte marker, the page zapped first (MADV_DONTNEED)
 *
 * The rows read the huge ptes of both sides directly: bits no interface
 * shows per hugetlb page (write, dirty, young, the migration entry's
 * type), PageAnonExclusive, the page's references and mappings, and the
 * child's hugetlb_usage (HugetlbPages).
 */

#include <kunit/test.h>
#include <linux/file.h>
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/swapops.h>

#include "forklab_mm.h"

enum hugetlb_entry {
	HUGETLB_PRESENT, HUGETLB_MIGRATION_WRITABLE, HUGETLB_MIGRATION_READABLE,
	HUGETLB_MIGRATION_READABLE_EXCLUSIVE, HUGETLB_MARKER,
};

struct hugetlb_case {
	const char *desc;
	enum hugetlb_entry entry;
	bool uffd_wp;			/* the migration entry carries uffd-wp */
	bool uffd_wp_vma;		/* both vmas VM_UFFD_WP (a marker's too) */
	pte_marker marker;		/* HUGETLB_MARKER: the parent's */
	pte_marker child_marker;	/* HUGETLB_MARKER: the child's (0: none) */
};

static const struct hugetlb_case hugetlb_cases[] = {
	/*
	 * A written private page: write-protected in both, or the first
	 * write of either would land in the page the other maps (the COW
	 * of copy_hugetlb_page_range(), since 2.6.16). The page is no
	 * longer the parent's alone: left PageAnonExclusive, the parent's
	 * next write would reuse it in place while the child maps it. The
	 * child maps it with one more reference and mapping and counts it
	 * in its HugetlbPages. Dirty and young go as they are: hugetlb
	 * ages nothing at fork (no pte_mkold, unlike small pages and THP;
	 * hugetlb pages are not on the LRU).
	 */
	{ .desc = "hugetlb written: write-protected in both, shared, dirty and young kept",
	  .entry = HUGETLB_PRESENT },
#ifdef CONFIG_HAVE_ARCH_USERFAULTFD_WP
	/*
	 * A writable migration entry of a COW mapping becomes readable in
	 * both mms, or remove_migration_ptes() would map the new page
	 * writable in both, keeping the young and dirty bits of its offset
	 * (where the swap offset has room). The child, its vma not
	 * registered for uffd-wp, must not get the entry's uffd-wp bit: it
	 * would write-protect the migrated page for a monitor the child has
	 * not.
	 */
	{ .desc = "writable migration entry with uffd-wp: readable in both, none in the child",
	  .entry = HUGETLB_MIGRATION_WRITABLE, .uffd_wp = true },
	/* A readable entry is copied as it is, but for uffd-wp. */
	{ .desc = "readable migration entry with uffd-wp: copied, none in the child",
	  .entry = HUGETLB_MIGRATION_READABLE, .uffd_wp = true },
	/*
	 * A readable-exclusive entry (try_to_migrate() of an exclusive page
	 * mapped read-only) is rewritten too: copied as it is, both mms
	 * would map the migrated page exclusive, and neither write would
	 * COW.
	 */
	{ .desc = "readable-exclusive migration entry: readable in both",
	  .entry = HUGETLB_MIGRATION_READABLE_EXCLUSIVE },
	/*
	 * Both vmas registered for uffd-wp: both entries keep the bit, or
	 * the migrated page is mapped writable in a protected range.
	 */
	{ .desc = "writable migration entry with uffd-wp, both VM_UFFD_WP: kept in both",
	  .entry = HUGETLB_MIGRATION_WRITABLE, .uffd_wp = true, .uffd_wp_vma = true },
#endif
#ifdef CONFIG_PTE_MARKER_UFFD_WP
	/*
	 * A private hugetlb uffd-wp marker (a protected page zapped): the
	 * child not registered, copy_pte_marker() drops it; a stale one
	 * would make the child's first fault there a uffd-wp fault no one
	 * handles. (User space cannot make this one: MADV_PAGEOUT does not
	 * zap private hugetlb pages.)
	 */
	{ .desc = "uffd-wp marker, child not VM_UFFD_WP: none in the child",
	  .entry = HUGETLB_MARKER, .marker = PTE_MARKER_UFFD_WP },
	/*
	 * The same marker, both vmas registered (a monitor that asked for
	 * UFFD_FEATURE_EVENT_FORK keeps the child's): kept. Without it the
	 * child's first write there faults in a writable page, and the
	 * monitor, which asked to go on watching the child, never hears of
	 * it (bc70fbf269fd taught copy_hugetlb_page_range() markers).
	 */
	{ .desc = "uffd-wp marker, both VM_UFFD_WP: kept in the child",
	  .entry = HUGETLB_MARKER, .marker = PTE_MARKER_UFFD_WP, .uffd_wp_vma = true,
	  .child_marker = PTE_MARKER_UFFD_WP },
#endif
	/*
	 * A poison marker (UFFDIO_POISON on hugetlb): kept, or the child
	 * would fault in a zeroed huge page where the parent gets SIGBUS.
	 */
	{ .desc = "poison marker: kept in the child",
	  .entry = HUGETLB_MARKER, .marker = PTE_MARKER_POISONED,
	  .child_marker = PTE_MARKER_POISONED },
};

KUNIT_ARRAY_PARAM_DESC(hugetlb_cases, hugetlb_cases, desc);

static unsigned long huge_size(void)
{
	return huge_page_size(&default_hstate);
}

/* The huge pte at FORK_ADDR of @mm (none if it has no page table). */
static pte_t read_huge_pte(struct mm_struct *mm)
{
	pte_t pte = __pte(0), *ptep;

	mmap_read_lock(mm);
	ptep = huge_pte_offset(mm, FORK_ADDR, huge_size());
	if (ptep)
		pte = forklab_huge_ptep_get(mm, FORK_ADDR, ptep);
	mmap_read_unlock(mm);
	return pte;
}

/* Put @entry at FORK_ADDR of @mm; the old huge pte in @old. */
static bool swap_huge_pte(struct mm_struct *mm, pte_t entry, pte_t *old)
{
	spinlock_t *ptl;	/* the huge pte's, as fork takes it */
	pte_t *ptep;

	mmap_read_lock(mm);
	ptep = huge_pte_offset(mm, FORK_ADDR, huge_size());
	if (ptep) {
		ptl = huge_pte_lock(&default_hstate, mm, ptep);
		*old = forklab_huge_ptep_get(mm, FORK_ADDR, ptep);
		forklab_set_huge_pte_at(mm, FORK_ADDR, ptep, entry, huge_size());
		spin_unlock(ptl);
	}
	mmap_read_unlock(mm);
	return ptep;
}

/* The parent: a private hugetlb vma at FORK_ADDR, written. */
static struct mm_struct *hugetlb_parent(struct kunit *test, u8 *buf)
{
	struct mm_struct *mm = forklab_new_mm(test);
	unsigned long mapped;
	struct file *file;

	file = hugetlb_file_setup("forklab", huge_size(), 0,
				  HUGETLB_ANONHUGE_INODE, 0);
	if (IS_ERR(file))
		kunit_skip(test, "no hugetlbfs file: %ld", PTR_ERR(file));
	forklab_use_mm(mm);
	mapped = vm_mmap(file, FORK_ADDR, huge_size(), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_FIXED_NOREPLACE, 0);
	fput(file);	/* the vma holds its own */
	if (mapped != FORK_ADDR)
		kunit_skip(test, "no huge page for the parent (mmap: %ld)", (long)mapped);
	forklab_write_vma_at(test, mm, FORK_ADDR, PARENT_PATTERN, buf);
	forklab_use_mm(NULL);
	return mm;
}

/* A migration entry the test put in, to take out once the child is gone. */
struct planted_entry {
	struct mm_struct *mm;
	pte_t orig;
	struct folio *folio;
};

static void unplant_entry(void *data)
{
	struct planted_entry *planted = data;
	pte_t old;

	swap_huge_pte(planted->mm, planted->orig, &old);
	folio_unlock(planted->folio);
}

static void expect_present_copied(struct kunit *test, pte_t before,
				  struct mm_struct *parent, struct mm_struct *child)
{
	pte_t ours = read_huge_pte(parent), theirs = read_huge_pte(child);

	KUNIT_ASSERT_TRUE_MSG(test, pte_present(theirs), "the child has no huge pte");
	KUNIT_ASSERT_TRUE(test, pte_present(ours));
	KUNIT_EXPECT_EQ(test, pte_pfn(theirs), pte_pfn(before));
	KUNIT_EXPECT_EQ(test, pte_pfn(ours), pte_pfn(before));
	KUNIT_EXPECT_FALSE_MSG(test, huge_pte_write(ours), "the parent's huge pte is writable");
	KUNIT_EXPECT_FALSE_MSG(test, huge_pte_write(theirs), "the child's huge pte is writable");
	KUNIT_EXPECT_EQ_MSG(test, !!huge_pte_dirty(theirs), !!huge_pte_dirty(before),
			    "the child's dirty bit");
	KUNIT_EXPECT_EQ_MSG(test, !!huge_pte_dirty(ours), !!huge_pte_dirty(before),
			    "the parent's dirty bit");
	KUNIT_EXPECT_EQ_MSG(test, !!pte_young(theirs), !!pte_young(before),
			    "the child's young bit");
	KUNIT_EXPECT_EQ_MSG(test, !!pte_young(ours), !!pte_young(before),
			    "the parent's young bit");
}

static void expect_migration_copied(struct kunit *test, struct mm_struct *mm,
				    const struct hugetlb_case *row, unsigned long pfn,
				    bool child, const char *who)
{
	pte_t pte = read_huge_pte(mm);
	swp_entry_t entry;

	KUNIT_ASSERT_FALSE_MSG(test, pte_none(pte) || pte_present(pte),
			       "%s: no migration entry", who);
	entry = pte_to_swp_entry(pte);
	KUNIT_ASSERT_TRUE_MSG(test, is_migration_entry(entry), "%s: no migration entry", who);
	KUNIT_EXPECT_EQ_MSG(test, swp_offset_pfn(entry), pfn, "%s: pfn", who);
	KUNIT_EXPECT_TRUE_MSG(test, is_readable_migration_entry(entry),
			      "%s: the entry of a COW-shared page is %s", who,
			      is_writable_migration_entry(entry) ? "writable" : "exclusive");
	if (row->entry == HUGETLB_MIGRATION_WRITABLE) {
		KUNIT_EXPECT_TRUE_MSG(test, is_migration_entry_dirty(entry), "%s: dirty lost",
				      who);
		if (!child)
			KUNIT_EXPECT_TRUE_MSG(test, is_migration_entry_young(entry),
					      "%s: young lost", who);
	}
	/*
	 * An unregistered parent's bit is not checked: hugetlb puts it
	 * back only for a vma registered for uffd-wp, ptes always; both
	 * are right.
	 */
	if (row->uffd_wp_vma)
		KUNIT_EXPECT_TRUE_MSG(test, pte_swp_uffd_wp(pte),
				      "%s: uffd-wp lost in a vma registered for it", who);
	else if (child)
		KUNIT_EXPECT_FALSE_MSG(test, pte_swp_uffd_wp(pte),
				       "%s: uffd-wp kept in a vma not registered for it", who);
}

static void expect_marker(struct kunit *test, struct mm_struct *mm,
			  pte_marker want, const char *who)
{
	pte_t pte = read_huge_pte(mm);
	swp_entry_t entry;

	if (!want) {
		KUNIT_EXPECT_TRUE_MSG(test, pte_none(pte), "%s: want no entry, have %#lx",
				      who, (unsigned long)pte_val(pte));
		return;
	}
	KUNIT_ASSERT_FALSE_MSG(test, pte_none(pte) || pte_present(pte), "%s: no marker", who);
	entry = pte_to_swp_entry(pte);
	KUNIT_EXPECT_TRUE_MSG(test, is_pte_marker_entry(entry) && pte_marker_get(entry) == want,
			      "%s: marker %#lx, want %#lx", who,
			      is_pte_marker_entry(entry) ?
			      (unsigned long)pte_marker_get(entry) : 0UL,
			      (unsigned long)want);
}

static void fork_hugetlb_test(struct kunit *test)
{
	const struct hugetlb_case *row = test->param_value;
	u8 *buf = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);
	struct planted_entry *planted;
	struct mm_struct *parent, *child;
	struct folio *folio;
	unsigned int refs;
	swp_entry_t entry;
	pte_t before, pte;

	if (!FORKLAB_HAS_POISON_MARKER && (row->marker & PTE_MARKER_POISONED))
		kunit_skip(test, "no poison marker on 6.1 (15520a3f0469 came in 6.2)");
	KUNIT_ASSERT_NOT_NULL(test, buf);
	parent = hugetlb_parent(test, buf);
	before = read_huge_pte(parent);
	KUNIT_ASSERT_TRUE_MSG(test, pte_present(before), "the parent's page is not mapped");
	KUNIT_ASSERT_TRUE(test, huge_pte_write(before) && huge_pte_dirty(before));
	folio = page_folio(pte_page(before));
	KUNIT_ASSERT_TRUE(test, folio_test_hugetlb(folio) && folio_test_anon(folio));
	KUNIT_ASSERT_TRUE(test, PageAnonExclusive(&folio->page));
	refs = folio_ref_count(folio);

	switch (row->entry) {
	case HUGETLB_PRESENT:
		child = forklab_fork_mm(test, parent);
		expect_present_copied(test, before, parent, child);
		KUNIT_EXPECT_FALSE_MSG(test, PageAnonExclusive(&folio->page),
				       "the page stays the parent's alone while both map it");
		KUNIT_EXPECT_EQ(test, folio_ref_count(folio), refs + 1);
		KUNIT_EXPECT_EQ(test, folio_mapcount(folio), 2);
		KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&child->hugetlb_usage),
				    (long)pages_per_huge_page(&default_hstate),
				    "the child's HugetlbPages");
		kunit_release_action(test, forklab_mmput_action, child);
		KUNIT_EXPECT_EQ(test, folio_ref_count(folio), refs);
		KUNIT_EXPECT_EQ(test, folio_mapcount(folio), 1);
		return;
	case HUGETLB_MARKER:
		forklab_use_mm(parent);
		KUNIT_ASSERT_EQ(test, 0, do_madvise(parent, FORK_ADDR, huge_size(),
						    MADV_DONTNEED));
		forklab_use_mm(NULL);
		if (row->uffd_wp_vma)
			forklab_register_uffd_wp(test, parent, FORK_ADDR);
		KUNIT_ASSERT_TRUE(test, swap_huge_pte(parent, make_pte_marker(row->marker),
						      &pte));
		KUNIT_ASSERT_TRUE(test, pte_none(pte));
		child = forklab_fork_mm(test, parent);
		expect_marker(test, child, row->child_marker, "child");
		expect_marker(test, parent, row->marker, "parent");
		KUNIT_EXPECT_EQ(test, atomic_long_read(&child->hugetlb_usage), 0L);
		return;
	default:
		break;
	}

	forklab_require_migration_ad(test);
	if (row->uffd_wp_vma)
		forklab_register_uffd_wp(test, parent, FORK_ADDR);
	planted = kunit_kzalloc(test, sizeof(*planted), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, planted);
	KUNIT_ASSERT_TRUE(test, folio_trylock(folio));
	planted->folio = folio;
	planted->mm = parent;
	if (row->entry == HUGETLB_MIGRATION_WRITABLE) {
		entry = make_writable_migration_entry(folio_pfn(folio));
		entry = make_migration_entry_dirty(make_migration_entry_young(entry));
	} else if (row->entry == HUGETLB_MIGRATION_READABLE_EXCLUSIVE) {
		entry = make_readable_exclusive_migration_entry(folio_pfn(folio));
	} else {
		entry = make_readable_migration_entry(folio_pfn(folio));
	}
	pte = swp_entry_to_pte(entry);
	if (row->uffd_wp)
		pte = pte_swp_mkuffd_wp(pte);
	if (!swap_huge_pte(parent, pte, &planted->orig)) {
		folio_unlock(folio);
		KUNIT_FAIL_AND_ABORT(test, "no huge pte at %#lx", FORK_ADDR);
	}
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, unplant_entry, planted));

	/* its action runs before unplant_entry's: the folio is locked */
	child = forklab_fork_mm(test, parent);
	expect_migration_copied(test, child, row, folio_pfn(folio), true, "child");
	expect_migration_copied(test, parent, row, folio_pfn(folio), false, "parent");
	KUNIT_EXPECT_EQ_MSG(test, atomic_long_read(&child->hugetlb_usage), 0L,
			    "the child's HugetlbPages: an entry is not a page");
	/* gone while the folio is still locked; it took no reference */
	kunit_release_action(test, forklab_mmput_action, child);
	KUNIT_EXPECT_EQ(test, folio_ref_count(folio), refs);
	kunit_release_action(test, unplant_entry, planted);
}

static struct kunit_case fork_hugetlb_cases[] = {
	KUNIT_CASE_PARAM(fork_hugetlb_test, hugetlb_cases_gen_params),
	{}
};

static struct kunit_suite fork_hugetlb_suite = {
	.name = "forklab_fork_hugetlb",
	.test_cases = fork_hugetlb_cases,
};

kunit_test_suite(fork_hugetlb_suite);

MODULE_DESCRIPTION("KUnit tests of the huge ptes fork() copies for a private hugetlb page");
MODULE_LICENSE("GPL");
