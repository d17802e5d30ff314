// SPDX-License-Identifier: GPL-2.0
/*
 * forklab_fork_entries: the non-present ptes copy_nonpresent_pte() hands
 * over, which no process can make at will. The parent is one private
 * anon vma, every page written; one pte is then replaced by the entry:
 *
 *   FORK_ADDR
 *   | page 0  | page 1                 | page 2  | page 3          |
 *   | present | migration entry (rows  | present | pte marker      |
 *   |         | 1-2), of page 1's own  |         | (the others),   |
 *   |         | folio, which stays     |         | its page zapped |
 *   |         | mapped (mapcount 1)    |         | first           |
 *
 * A migration entry asks for its folio locked while anyone looks at it
 * (pfn_swap_entry_folio()), as migrate_pages() holds it: the test holds
 * the lock from before fork until the child is gone and the parent's
 * pte is put back.
 */

#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/swap.h>
#include <linux/swapops.h>

#include "forklab_mm.h"

enum entry_kind {
	MIGRATION_WRITABLE, MIGRATION_READABLE, MIGRATION_READABLE_EXCLUSIVE,
	MARKER,
};

struct entry_case {
	const char *desc;
	enum entry_kind kind;
	bool file_page;		/* MAP_PRIVATE tmpfs; the entry's page the file's */
	pte_marker marker;	/* MARKER: the parent's */
	pte_marker child_marker;	/* MARKER: the child's (0: pte_none) */
	bool bits;		/* migration entry with soft-dirty and uffd-wp */
	bool young_dirty;	/* migration entry with SWP_MIG_YOUNG/DIRTY */
	bool uffd_wp_vma;	/* both vmas VM_UFFD_WP (forklab_register_uffd_wp()) */
};

#define ENTRY_MIGRATION_PAGE	1
#define ENTRY_MARKER_PAGE	3

static const struct entry_case entry_cases[] = {
	/*
	 * Page migration since 2.6.18: a writable entry of a COW mapping
	 * becomes readable in both mms, or remove_migration_ptes() would
	 * map the new page writable in both, and a write of either would
	 * show in the other.
	 */
	{ .desc = "writable migration entry", .kind = MIGRATION_WRITABLE },
	{ .desc = "readable migration entry", .kind = MIGRATION_READABLE },
	/*
	 * An exclusive anon page mapped read-only (try_to_migrate(),
	 * mprotect()): its entry says "exclusive", and a copy that kept it
	 * would map the new page exclusive in both, so that neither write
	 * would COW. It must come out plainly readable in both.
	 */
	{ .desc = "readable-exclusive migration entry",
	  .kind = MIGRATION_READABLE_EXCLUSIVE },
	/*
	 * A page-cache page of a MAP_PRIVATE tmpfs mapping (the vma has an
	 * anon_vma: fork copies it): the child's rss counts the entry as the
	 * folio's, MM_SHMEMPAGES, not as an anon page.
	 */
	{ .desc = "migration entry of a tmpfs page, MAP_PRIVATE",
	  .kind = MIGRATION_READABLE, .file_page = true },
#if defined(CONFIG_MEM_SOFT_DIRTY) && defined(CONFIG_HAVE_ARCH_USERFAULTFD_WP)
	/*
	 * The parent's writable entry is rewritten readable: its soft-dirty
	 * bit must be put back on the new entry, else the parent's page
	 * looks clean to a checkpoint (CRIU) once migrated. The child keeps
	 * soft-dirty and, its vma not registered for uffd-wp, loses uffd-wp.
	 * (x86_64: UML has neither bit.)
	 */
	{ .desc = "writable migration entry, soft-dirty and uffd-wp",
	  .kind = MIGRATION_WRITABLE, .bits = true },
	/* The same for the two other entries: rewritten, and kept as is. */
	{ .desc = "readable-exclusive migration entry, soft-dirty and uffd-wp",
	  .kind = MIGRATION_READABLE_EXCLUSIVE, .bits = true },
	{ .desc = "readable migration entry, soft-dirty and uffd-wp",
	  .kind = MIGRATION_READABLE, .bits = true },
	/*
	 * Both vmas registered for uffd-wp: the parent's rewritten entry and
	 * the child's must keep the bit, or once migrated the page is mapped
	 * writable in a protected range, and a snapshot (a uffd-wp
	 * monitor) misses the writes (remove_migration_pte() restores
	 * uffd-wp from the entry alone).
	 */
	{ .desc = "writable migration entry, soft-dirty and uffd-wp, both VM_UFFD_WP",
	  .kind = MIGRATION_WRITABLE, .bits = true, .uffd_wp_vma = true },
#endif
	/*
	 * The accessed and dirty bits a migration entry carries in its
	 * offset where the swap offset has room ("mm: remember young/dirty
	 * bit for page migrations", 6.1): the rewrite must keep the offset
	 * whole. One rebuilt from the pfn alone (swp_offset_pfn()) would
	 * have remove_migration_pte() map the new page old and clean in
	 * both mms: a page reclaim takes for unused, a dirty pte lost,
	 * right after migration.
	 */
	{ .desc = "writable migration entry, young and dirty",
	  .kind = MIGRATION_WRITABLE, .young_dirty = true },
	/*
	 * A poison marker (a swap-in error, 15520a3f0469; UFFDIO_POISON):
	 * if fork dropped it, the child would read zeros where the parent
	 * gets SIGBUS: data lost without an error. (Only in a vma fork
	 * copies: a shmem vma without an anon_vma is skipped under lazy,
	 * markers and all, upstream too.)
	 */
	{ .desc = "poison marker", .kind = MARKER,
	  .marker = PTE_MARKER_POISONED, .child_marker = PTE_MARKER_POISONED },
	/*
	 * An uffd-wp marker goes only where the child's vma is uffd-wp
	 * registered too (copy_pte_marker()); a stale one in an
	 * unregistered vma would make its first write a uffd-wp fault no
	 * one handles. The poison in the same marker must still come.
	 */
	{ .desc = "poison and uffd-wp marker, child not VM_UFFD_WP",
	  .kind = MARKER, .marker = PTE_MARKER_POISONED | PTE_MARKER_UFFD_WP,
	  .child_marker = PTE_MARKER_POISONED },
#ifdef CONFIG_PTE_MARKER_UFFD_WP
	/*
	 * An uffd-wp marker alone: only a kernel with uffd-wp can zap one
	 * (zap_nonpresent_ptes() WARNs on it otherwise), so x86_64's row.
	 */
	{ .desc = "uffd-wp marker, child not VM_UFFD_WP", .kind = MARKER,
	  .marker = PTE_MARKER_UFFD_WP, .child_marker = 0 },
#endif
};

KUNIT_ARRAY_PARAM_DESC(entry_cases, entry_cases, desc);

static pte_t exchange_pte(struct kunit *test, struct mm_struct *mm,
			  unsigned long addr, pte_t entry)
{
	pte_t old;

	if (!forklab_swap_pte(mm, addr, entry, &old))
		KUNIT_FAIL_AND_ABORT(test, "no pte at %#lx", addr);
	return old;
}

/*
 * A migration entry the test put in: the parent's pte to put back and
 * the folio to unlock, once the child is gone (an action, so that an
 * assertion that ends the test early does it too).
 */
struct planted_migration {
	struct mm_struct *mm;
	unsigned long addr;
	pte_t orig;
	struct folio *folio;
};

static void unplant_migration(void *data)
{
	struct planted_migration *planted = data;
	pte_t old;

	forklab_swap_pte(planted->mm, planted->addr, planted->orig, &old);
	folio_unlock(planted->folio);
}

static swp_entry_t entry_at(struct kunit *test, struct mm_struct *mm,
			    unsigned long addr)
{
	pte_t pte;

	mmap_read_lock(mm);
	KUNIT_EXPECT_TRUE(test, forklab_read_pte(mm, addr, &pte));
	mmap_read_unlock(mm);
	if (pte_none(pte) || pte_present(pte))
		return (swp_entry_t){ 0 };
	return pte_to_swp_entry(pte);
}

static void expect_migration_entry(struct kunit *test, struct mm_struct *mm,
				   unsigned long addr, unsigned long pfn,
				   const char *who)
{
	swp_entry_t entry = entry_at(test, mm, addr);

	KUNIT_ASSERT_TRUE_MSG(test, is_migration_entry(entry),
			      "%s: no migration entry", who);
	KUNIT_EXPECT_EQ_MSG(test, swp_offset_pfn(entry), pfn, "%s: pfn", who);
	KUNIT_EXPECT_TRUE_MSG(test, is_readable_migration_entry(entry),
			      "%s: the entry of a COW-shared page is %s", who,
			      is_writable_migration_entry(entry) ? "writable" :
			      "exclusive");
}

static swp_entry_t make_migration_entry(enum entry_kind kind,
					unsigned long pfn)
{
	switch (kind) {
	case MIGRATION_WRITABLE:
		return make_writable_migration_entry(pfn);
	case MIGRATION_READABLE_EXCLUSIVE:
		return make_readable_exclusive_migration_entry(pfn);
	default:
		return make_readable_migration_entry(pfn);
	}
}

/* @entry as a pte, with the soft-dirty and uffd-wp bits if @bits. */
static pte_t migration_pte(swp_entry_t entry, bool bits)
{
	pte_t pte = swp_entry_to_pte(entry);

	return bits ? pte_swp_mkuffd_wp(pte_swp_mksoft_dirty(pte)) : pte;
}

/*
 * The bits of the migration entry at @addr of @mm: soft-dirty on both
 * sides; uffd-wp on both where the vmas are registered, none in the
 * child's where they are not. (An unregistered parent's keeps it, but a
 * kernel that put it back only for a registered vma, as hugetlb does,
 * would be as right: not checked.)
 */
static void expect_entry_bits(struct kunit *test, struct mm_struct *mm,
			      unsigned long addr, bool child, bool registered,
			      const char *who)
{
	pte_t pte;

	mmap_read_lock(mm);
	KUNIT_ASSERT_TRUE(test, forklab_read_pte(mm, addr, &pte));
	mmap_read_unlock(mm);
	KUNIT_EXPECT_TRUE_MSG(test, pte_swp_soft_dirty(pte), "%s: soft-dirty lost", who);
	if (registered)
		KUNIT_EXPECT_TRUE_MSG(test, pte_swp_uffd_wp(pte),
				      "%s: uffd-wp lost in a vma registered for it", who);
	else if (child)
		KUNIT_EXPECT_FALSE_MSG(test, pte_swp_uffd_wp(pte),
				       "%s: uffd-wp kept in a vma not registered for it", who);
}

/*
 * The young and dirty bits of the migration entry at @addr: both on the
 * parent's; dirty on the child's. (6.12 copies the child's young bit as
 * it is, where a present pte's copy is made old; a kernel that aged it
 * would be as right, so the child's young bit is not checked.)
 */
static void expect_entry_young_dirty(struct kunit *test, struct mm_struct *mm,
				     unsigned long addr, bool child, const char *who)
{
	swp_entry_t entry = entry_at(test, mm, addr);

	KUNIT_EXPECT_TRUE_MSG(test, is_migration_entry_dirty(entry), "%s: dirty lost", who);
	if (!child)
		KUNIT_EXPECT_TRUE_MSG(test, is_migration_entry_young(entry),
				      "%s: young lost", who);
}

/* The row's parent: every page written, or (file_page) page 0 only. */
static struct mm_struct *entry_parent(struct kunit *test,
				      const struct entry_case *row, u8 *buf)
{
	static const struct fork_case anon = {
		.desc = "private anon", .mapping = PRIVATE_ANON, .prot = RW,
		.access = WRITES,
	};
	static const struct fork_case file = {
		.desc = "MAP_PRIVATE tmpfs", .mapping = PRIVATE_FILE, .prot = RW,
		.access = READS,
	};
	struct mm_struct *mm;

	if (!row->file_page) {
		mm = forklab_build_parent(test, &anon, buf);
	} else {
		mm = forklab_build_parent(test, &file, buf);
		forklab_write_at(test, mm, FORK_ADDR, PAGE_SIZE, PARENT_PATTERN, buf);
	}
	forklab_use_mm(NULL);
	if (row->uffd_wp_vma)
		forklab_register_uffd_wp(test, mm, FORK_ADDR);
	return mm;
}

static void fork_entry_test(struct kunit *test)
{
	const struct entry_case *row = test->param_value;
	unsigned long mig = FORK_ADDR + ENTRY_MIGRATION_PAGE * PAGE_SIZE;
	unsigned long mark = FORK_ADDR + ENTRY_MARKER_PAGE * PAGE_SIZE;
	struct planted_migration *planted = NULL;
	struct mm_struct *parent, *child;
	struct pte_census before, after;
	unsigned long pfn = 0;
	unsigned int refs = 0;
	swp_entry_t entry;
	u8 *buf = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);

	if (!FORKLAB_HAS_POISON_MARKER && (row->marker & PTE_MARKER_POISONED))
		kunit_skip(test, "no poison marker on 6.1 (15520a3f0469 came in 6.2)");
	if (row->young_dirty)
		forklab_require_migration_ad(test);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	parent = entry_parent(test, row, buf);
	lru_add_drain();
	before = forklab_take_census(parent, FORK_ADDR);
	KUNIT_ASSERT_EQ(test, before.present, FORK_PAGES);

	if (row->kind == MARKER) {
		forklab_use_mm(parent);
		KUNIT_ASSERT_EQ(test, 0, do_madvise(parent, mark, PAGE_SIZE,
						    MADV_DONTNEED));
		forklab_use_mm(NULL);
		exchange_pte(test, parent, mark,
			     make_pte_marker(row->marker));
	} else {
		planted = kunit_kzalloc(test, sizeof(*planted), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, planted);
		planted->folio = page_folio(before.pages[ENTRY_MIGRATION_PAGE]);
		KUNIT_ASSERT_EQ(test, folio_test_anon(planted->folio),
				!row->file_page);
		pfn = folio_pfn(planted->folio);
		KUNIT_ASSERT_TRUE(test, folio_trylock(planted->folio));
		refs = folio_ref_count(planted->folio);
		planted->mm = parent;
		planted->addr = mig;
		entry = make_migration_entry(row->kind, pfn);
		if (row->young_dirty)
			entry = make_migration_entry_dirty(make_migration_entry_young(entry));
		planted->orig = exchange_pte(test, parent, mig,
					     migration_pte(entry, row->bits));
		KUNIT_ASSERT_EQ(test, 0,
				kunit_add_action_or_reset(test, unplant_migration,
							  planted));
	}

	/* its action runs before unplant_migration's: the folio is locked */
	child = forklab_fork_mm(test, parent);
	forklab_expect_rss_counters(test, child);
	after = forklab_take_census(child, FORK_ADDR);
	KUNIT_EXPECT_EQ(test, after.present, FORK_PAGES - 1);
	KUNIT_EXPECT_EQ(test, after.writable, 0U);
	if (row->kind == MARKER) {
		entry = entry_at(test, child, mark);
		if (row->child_marker)
			KUNIT_EXPECT_TRUE_MSG(test, is_pte_marker_entry(entry) &&
					      pte_marker_get(entry) == row->child_marker,
					      "the child's marker: %#lx, want %#lx",
					      is_pte_marker_entry(entry) ?
					      (unsigned long)pte_marker_get(entry) : 0UL,
					      (unsigned long)row->child_marker);
		else
			KUNIT_EXPECT_EQ_MSG(test, entry.val, 0UL,
					    "the child's pte: want none");
		/* copy_pte_marker() reads the parent's; it must not change it */
		entry = entry_at(test, parent, mark);
		KUNIT_EXPECT_TRUE_MSG(test, is_pte_marker_entry(entry) &&
				      pte_marker_get(entry) == row->marker,
				      "the parent's marker changed at fork");
		return;
	}
	expect_migration_entry(test, child, mig, pfn, "child");
	expect_migration_entry(test, parent, mig, pfn, "parent");
	if (row->bits) {
		expect_entry_bits(test, child, mig, true, row->uffd_wp_vma, "child");
		expect_entry_bits(test, parent, mig, false, row->uffd_wp_vma, "parent");
	}
	if (row->young_dirty) {
		expect_entry_young_dirty(test, child, mig, true, "child");
		expect_entry_young_dirty(test, parent, mig, false, "parent");
	}
	/* gone while the folio is still locked; it took no reference */
	kunit_release_action(test, forklab_mmput_action, child);
	KUNIT_EXPECT_EQ(test, folio_ref_count(planted->folio), refs);
	kunit_release_action(test, unplant_migration, planted);
}

static struct kunit_case fork_entry_cases[] = {
	KUNIT_CASE_PARAM(fork_entry_test, entry_cases_gen_params),
	{}
};

static struct kunit_suite fork_entry_suite = {
	.name = "forklab_fork_entries",
	.test_cases = fork_entry_cases,
};

kunit_test_suite(fork_entry_suite);

MODULE_DESCRIPTION("KUnit tests of the non-present ptes fork() copies");
MODULE_LICENSE("GPL");
