// SPDX-License-Identifier: GPL-2.0
/*
 * forklab_fork: fork()'s page-table copy as the kernel does it, one row
 * per mapping kind: build a parent mm with a real mapping, fork it with
 * dup_mm(), and check the vma
 *
 *   (a) copied or skipped: the child's present ptes right after fork,
 *       and the bits of each copy and of the parent's ptes;
 *   (b) contents: the child reads the parent's bytes, and after either
 *       side writes, a private mapping keeps each side's own data while a
 *       shared one shows the write to both;
 *   (c) faults: the child's minor faults to read the whole vma, with
 *       fault-around at one page and at its default;
 *   (d) no leak: once the child is gone, the parent's pages are back at
 *       the reference counts they had before the fork; once both are
 *       gone, so is every page-table page they allocated.
 *
 * The rows say what upstream's "lazy" decision does. Booted with another
 * fork_copy= policy (patches/0008), the suite expects that policy's copies
 * instead, with the same bytes: only (a), (c) and the /proc/vmstat fork_*
 * counters (patches/0007), checked around each fork, may differ.
 *
 * How the test thread forks and where a row's vma lies: forklab_mm.h.
 * Which line of dup_mmap() and copy_page_range() each row checks:
 * docs/kunit.md.
 */

#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/swap.h>

#include "../internal.h"
#include "fork_copy_policy.h"
#include "forklab_mm.h"

const struct fork_case forklab_fork_cases[] = {
	/*
	 * If we skip it, the child reads zeros where the parent wrote. If we
	 * copy without write-protecting both sides, a write of either side
	 * shows through to the other.
	 */
	{ .desc = "private anon, touched", .mapping = PRIVATE_ANON, .prot = RW,
	  .access = WRITES, .outcome = COPIED, .child_reads = PARENT_BYTES },
	/* No anon_vma: nothing to copy; a copy would only cost fork time. */
	{ .desc = "private anon, never touched", .mapping = PRIVATE_ANON, .prot = RW,
	  .access = NO_ACCESS, .outcome = SKIPPED, .child_reads = ZEROES,
	  .default_faults = FORK_PAGES },
	/* Ray Fucillo's SysV shm case: faults bring the same pages back. */
	{ .desc = "shared anon, touched", .mapping = SHARED_ANON, .prot = RW,
	  .access = WRITES, .outcome = SKIPPED, .child_reads = PARENT_BYTES,
	  .default_faults = 1 },
	{ .desc = "MAP_SHARED tmpfs file, rw", .mapping = SHARED_FILE, .prot = RW,
	  .access = WRITES, .outcome = SKIPPED, .child_reads = PARENT_BYTES,
	  .default_faults = 1 },
	/* VM_MAYSHARE without VM_SHARED (Hugh Dickins, 2005). */
	{ .desc = "MAP_SHARED PROT_READ, file opened O_RDONLY",
	  .mapping = SHARED_FILE_RDONLY, .prot = PROT_READ, .access = READS,
	  .outcome = SKIPPED, .child_reads = FILE_BYTES, .default_faults = 1 },
	/* Every page is still the page cache's: faults refill the child. */
	{ .desc = "MAP_PRIVATE file, read, never written", .mapping = PRIVATE_FILE,
	  .prot = RW, .access = READS, .outcome = SKIPPED, .child_reads = FILE_BYTES,
	  .default_faults = 1 },
	/*
	 * Andi Kleen's 2005 "copy only without a file" would skip this: the
	 * child would see the file's bytes, not the parent's private ones.
	 */
	{ .desc = "MAP_PRIVATE file, written", .mapping = PRIVATE_FILE, .prot = RW,
	  .access = WRITES, .outcome = COPIED, .child_reads = PARENT_BYTES },
	/*
	 * PTRACE_POKEDATA into a PROT_READ MAP_PRIVATE file mapping COWs an
	 * anonymous page (cda540ace6a1 kept this): if fork skipped the vma,
	 * a child forked afterwards would read the file, not the poke.
	 */
	{ .desc = "FOLL_FORCE write, PROT_READ MAP_PRIVATE file",
	  .mapping = PRIVATE_FILE, .prot = PROT_READ, .access = POKES,
	  .outcome = COPIED, .child_reads = PARENT_BYTES },
	/*
	 * The same into PROT_READ MAP_SHARED must be refused: an anon page
	 * inside a shared vma is the "awkward case" of 2005. The file stays
	 * as it was and fork still skips the vma.
	 */
	{ .desc = "FOLL_FORCE write, PROT_READ MAP_SHARED file",
	  .mapping = SHARED_FILE, .prot = PROT_READ, .access = POKES,
	  .outcome = SKIPPED, .child_reads = FILE_BYTES, .default_faults = 1 },
	/*
	 * No struct page behind a pfn, no ->fault to bring it back: skip the
	 * copy and the child faults on a VM_PFNMAP vma and gets SIGBUS
	 * (6aab341e0a28).
	 */
	{ .desc = "VM_PFNMAP (remap_pfn_range)", .mapping = PFNMAP_DEVICE, .prot = RW,
	  .access = WRITES, .outcome = COPIED, .child_reads = PARENT_BYTES },
	/* vm_insert_page() pages: the driver put them there (4d7672b46244). */
	{ .desc = "VM_MIXEDMAP (vm_insert_page)", .mapping = MIXEDMAP_DEVICE,
	  .prot = RW, .access = WRITES, .outcome = COPIED,
	  .child_reads = PARENT_BYTES },
	/*
	 * A pinned anon page must not be shared with the child: the parent's
	 * DMA would land in a page the child may COW away (CVE-2020-29374,
	 * 70e806e4e645). Fork copies it early; the other pages are shared.
	 */
	{ .desc = "pinned anon page (early COW)", .mapping = PRIVATE_ANON, .prot = RW,
	  .access = WRITES, .outcome = COPIED, .child_reads = PARENT_BYTES,
	  .pin = true },
	/*
	 * A pinned page in a vma fork copies without an anon_vma: only anon
	 * pages are early-COWed; the 5.10/5.15-stable BUG in
	 * copy_present_page() came from treating this one as anon.
	 */
	/*
	 * A COW mapping of a driver's pages, half written: the written
	 * half is anon pages (wp_page_copy()), the rest the driver's pages,
	 * read-only. Fork copies both; a copy that left a driver pte
	 * writable in the child would let the child's write reach the
	 * device page, which the parent then reads (it must read zeros).
	 * (The VM_PFNMAP twin is x86_64's: on UML a copy_to_user() into an
	 * old read-only pfn pte of a COW mapping writes the driver's page,
	 * because UML's maybe_map() takes one fault, which here only makes
	 * the pte young, as the first fault on hardware would, and then
	 * writes without checking again.)
	 */
	{ .desc = "MAP_PRIVATE VM_MIXEDMAP, half written",
	  .mapping = PRIVATE_MIXEDMAP_DEVICE, .prot = RW, .access = WRITES_HALF,
	  .outcome = COPIED, .child_reads = PARENT_THEN_ZEROES },
	/*
	 * A driver's PageReserved pages, as drivers mark what they map:
	 * refcounted and rmapped like any page since "remove PageReserved
	 * special casing" (2.6.15). A copy that took no reference for them
	 * would leave the driver's count short once the child unmaps.
	 */
	{ .desc = "VM_MIXEDMAP of PageReserved pages",
	  .mapping = RESERVED_MIXEDMAP_DEVICE, .prot = RW, .access = WRITES,
	  .outcome = COPIED, .child_reads = PARENT_BYTES },
	{ .desc = "pinned page in VM_MIXEDMAP", .mapping = MIXEDMAP_DEVICE, .prot = RW,
	  .access = WRITES, .outcome = COPIED, .child_reads = PARENT_BYTES,
	  .pin = true },
#if FORK_REMAP_FILE_PAGES
	/*
	 * remap_file_pages() (emulated since 4.0 by one linear MAP_SHARED
	 * vma per rearranged page): fork skips these vmas like any shared
	 * file mapping, and the child must still find each page at the file
	 * offset the parent arranged, not the linear one. One vma per page,
	 * so fault-around cannot map more than the faulting page.
	 */
	{ .desc = "remap_file_pages, reversed", .mapping = SHARED_FILE, .prot = RW,
	  .access = NO_ACCESS, .outcome = SKIPPED, .child_reads = FILE_BYTES,
	  .default_faults = FORK_PAGES, .remap_reversed = true },
#endif
	/* If dup_mmap() kept it, the child could read the parent's secret. */
	{ .desc = "MADV_DONTFORK", .mapping = PRIVATE_ANON, .prot = RW,
	  .access = WRITES, .advice = MADV_DONTFORK, .outcome = ABSENT,
	  .child_reads = ZEROES },
	/*
	 * If we copied its ptes, the child would read the parent's data
	 * instead of zeros (d2cd9ede6e19).
	 */
	{ .desc = "MADV_WIPEONFORK", .mapping = PRIVATE_ANON, .prot = RW,
	  .access = WRITES, .advice = MADV_WIPEONFORK, .outcome = SKIPPED,
	  .child_reads = ZEROES, .default_faults = FORK_PAGES },
};

static_assert(ARRAY_SIZE(forklab_fork_cases) == NR_FORK_CASES);

KUNIT_ARRAY_PARAM_DESC(fork_cases, forklab_fork_cases, desc);

static bool has_vma(struct mm_struct *mm)
{
	bool found;

	mmap_read_lock(mm);
	found = find_vma_intersection(mm, FORK_ADDR, FORK_ADDR + FORK_SIZE);
	mmap_read_unlock(mm);
	return found;
}

static unsigned long read_vma(struct kunit *test, struct mm_struct *mm, u8 *buf)
{
	return forklab_read_vma_at(test, mm, FORK_ADDR, buf);
}

static void write_vma(struct kunit *test, struct mm_struct *mm, u8 seed,
		      u8 *buf)
{
	forklab_write_vma_at(test, mm, FORK_ADDR, seed, buf);
}

static void expect_bytes(struct kunit *test, const u8 *got, u8 seed,
			 const char *who)
{
	u8 *want = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, want);
	if (seed)
		forklab_fill(want, seed);
	else
		memset(want, 0, FORK_SIZE);
	KUNIT_EXPECT_MEMEQ_MSG(test, got, want, FORK_SIZE, "%s", who);
}

/* The first half PARENT_PATTERN, the rest zeros (a half-written row). */
static void expect_bytes_half(struct kunit *test, const u8 *got,
			      const char *who)
{
	u8 *want = kunit_kzalloc(test, FORK_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, want);
	size_t i;

	forklab_fill(want, PARENT_PATTERN);
	memset(want + FORK_SIZE / 2, 0, FORK_SIZE / 2);
	for (i = 0; i < FORK_SIZE && got[i] == want[i]; i++)
		;
	KUNIT_EXPECT_EQ_MSG(test, i, (size_t)FORK_SIZE,
			    "%s: first wrong byte at %zu (page %zu): %#x, want %#x",
			    who, i, i / PAGE_SIZE, i < FORK_SIZE ? got[i] : 0,
			    i < FORK_SIZE ? want[i] : 0);
}

static void restore_fault_around(void *pages)
{
	forklab_set_fault_around((unsigned long)pages);
}

static void set_fault_around(struct kunit *test, unsigned long pages)
{
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, restore_fault_around,
						  (void *)forklab_fault_around()));
	forklab_set_fault_around(pages);
}

static u8 child_seed(const struct fork_case *row)
{
	switch (row->child_reads) {
	case PARENT_BYTES:
		return PARENT_PATTERN;
	case FILE_BYTES:
		return FILE_PATTERN;
	default:
		return 0;
	}
}

/*
 * After a copy: a private mapping shares each page write-protected on both
 * sides, except a pinned anon page, which the child gets a copy of at once
 * (both sides then write their own page). A shared mapping shares every
 * page, writable where it was.
 */
static void expect_cow_state(struct kunit *test, const struct fork_case *row,
			     const struct pte_census *before,
			     const struct pte_census *parent,
			     const struct pte_census *child)
{
	bool early_cow = row->pin && !forklab_is_shared(row);
	unsigned int i;

	for (i = 0; i < FORK_PAGES; i++) {
		if (early_cow && i == 0)
			KUNIT_EXPECT_PTR_NE_MSG(test, child->pages[i],
						before->pages[i],
						"pinned page shared with the child");
		else
			KUNIT_EXPECT_PTR_EQ_MSG(test, child->pages[i],
						before->pages[i], "page %u", i);
		KUNIT_EXPECT_PTR_EQ_MSG(test, parent->pages[i],
					before->pages[i], "page %u", i);
	}
	if (forklab_is_shared(row)) {
		KUNIT_EXPECT_EQ(test, parent->writable, before->writable);
		KUNIT_EXPECT_EQ(test, child->writable, before->writable);
	} else {
		KUNIT_EXPECT_EQ(test, parent->writable, early_cow ? 1U : 0U);
		KUNIT_EXPECT_EQ(test, child->writable, early_cow ? 1U : 0U);
	}
}

/*
 * The bits of the copies (__copy_present_ptes()): every copy old, so
 * that reclaim does not count pages the child never touched as the
 * child's recent use; a shared mapping's copies clean (pte_mkclean()),
 * a private one's as dirty as the parent's; soft-dirty as it was (the
 * early-COW copy is made dirty, which on x86 sets soft-dirty too, as
 * every page of these rows was anyway: written since the mm began). The
 * parent's ptes keep their bits, but for write. An anon page both sides
 * map is exclusive to neither (folio_try_dup_anon_rmap_ptes()), else a
 * write of the parent would reuse it under the child; the early-COW
 * copy of a pinned page is the child's alone, young and dirty as a
 * fault's copy would be (copy_present_page()), and the pinned page
 * stays the parent's alone.
 */
static void expect_copied_bits(struct kunit *test, const struct fork_case *row,
			       const struct pte_census *before,
			       const struct pte_census *parent,
			       const struct pte_census *child)
{
	unsigned int early_cow = row->pin && !forklab_is_shared(row);

	KUNIT_EXPECT_EQ_MSG(test, child->young, early_cow, "young ptes in the child");
	KUNIT_EXPECT_EQ_MSG(test, parent->young, before->young, "young ptes in the parent");
	KUNIT_EXPECT_EQ_MSG(test, child->dirty,
			    forklab_is_shared(row) ? 0U : before->dirty,
			    "dirty ptes in the child");
	KUNIT_EXPECT_EQ_MSG(test, parent->dirty, before->dirty, "dirty ptes in the parent");
	KUNIT_EXPECT_EQ_MSG(test, child->soft_dirty, before->soft_dirty,
			    "soft-dirty ptes in the child");
	KUNIT_EXPECT_EQ_MSG(test, parent->soft_dirty, before->soft_dirty,
			    "soft-dirty ptes in the parent");
	KUNIT_EXPECT_EQ_MSG(test, parent->anon_exclusive, early_cow,
			    "PageAnonExclusive pages the parent maps");
	KUNIT_EXPECT_EQ_MSG(test, child->anon_exclusive, early_cow,
			    "PageAnonExclusive pages the child maps");
}

/* What the child must read right after fork. */
static void expect_child_view(struct kunit *test, const struct fork_case *row,
			      const u8 *got)
{
	u8 *file, *want;
	unsigned int i;

	if (row->child_reads == PARENT_THEN_ZEROES) {
		expect_bytes_half(test, got, "child after fork");
		return;
	}
	if (!row->remap_reversed) {
		expect_bytes(test, got, child_seed(row), "child after fork");
		return;
	}
	file = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);
	want = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, file);
	KUNIT_ASSERT_NOT_NULL(test, want);
	forklab_fill(file, FILE_PATTERN);
	for (i = 0; i < FORK_PAGES; i++)
		memcpy(want + i * PAGE_SIZE,
		       file + (FORK_PAGES - 1 - i) * PAGE_SIZE, PAGE_SIZE);
	KUNIT_EXPECT_MEMEQ_MSG(test, got, want, FORK_SIZE,
			       "child after fork: file pages not where remapped");
}

/*
 * What fork does with the row's vma under the booted policy. dup_mmap()
 * never hands a VM_WIPEONFORK vma to copy_page_range(), whatever the
 * policy; and a copy of a vma without ptes copies nothing.
 */
static enum fork_outcome policy_outcome(const struct fork_case *row,
					const struct pte_census *before)
{
	if (row->outcome != SKIPPED || row->advice == MADV_WIPEONFORK ||
	    !before->present)
		return row->outcome;
	return policy_copies(forklab_is_shared(row) ? VM_MAYSHARE : 0, false) ?
	       COPIED : SKIPPED;
}

/*
 * The counters one fork of the row's parent must move: one decision per
 * vma that reaches copy_page_range() (remap_file_pages() made several),
 * and every present pte of a copied vma.
 */
static struct fork_counts expected_counts(const struct fork_case *row,
					  struct mm_struct *parent,
					  const struct pte_census *before)
{
	bool device = forklab_is_device(row);
	vm_flags_t flags = (device ? VM_PFNMAP : 0) |
			   (forklab_is_shared(row) ? VM_MAYSHARE : 0);
	struct fork_counts want = {};
	enum fork_count reason;

	if (row->outcome == ABSENT || row->advice == MADV_WIPEONFORK)
		return want;
	reason = fork_count_of(policy_copies(flags, row->outcome == COPIED),
			       false, flags, row->outcome == COPIED && !device);
	want.n[reason] = parent->map_count;
	if (reason != COUNT_SKIP)
		want.n[COUNT_PTES] = before->present;
	return want;
}

/*
 * One row's run, split the way cow.c splits do_run_with_*() from its
 * tests: start_fork() builds the parent and forks it once; each check_*()
 * is one of (a)-(d) above on what it left.
 */
struct fork_run {
	const struct fork_case *row;
	struct mm_struct *parent, *child;
	struct pte_census before;	/* the parent's ptes before fork */
	unsigned int refs[FORK_PAGES];	/* and its pages' references */
	enum fork_outcome outcome;	/* under the booted policy */
	unsigned long pagetables;	/* NR_PAGETABLE before the parent */
	unsigned long missing;		/* pages the first child must fault */
	u8 *buf;
};

static struct fork_run *start_fork(struct kunit *test,
				   const struct fork_case *row)
{
	struct fork_run *run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	struct fork_counts counts, want;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, run);
	run->row = row;
	run->pagetables = global_node_page_state(NR_PAGETABLE);
	run->buf = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, run->buf);
	run->parent = forklab_build_parent(test, row, run->buf);

	lru_add_drain();	/* an LRU batch holds page refs of its own */
	run->before = forklab_take_census(run->parent, FORK_ADDR);
	for (i = 0; i < FORK_PAGES; i++)
		if (run->before.pages[i])
			run->refs[i] = page_ref_count(run->before.pages[i]);

	/* (a) copied, skipped, or not there at all; and counted so */
	run->outcome = policy_outcome(row, &run->before);
	run->missing = FORK_PAGES -
		       (run->outcome == COPIED ? run->before.present : 0);
	want = expected_counts(row, run->parent, &run->before);
	counts = read_fork_counts(test);
	run->child = forklab_fork_mm(test, run->parent);
	expect_fork_counts(test, &counts, &want);
	return run;
}

/* (a): the child's vma and ptes right after fork, and its rss. */
static void check_copy(struct kunit *test, struct fork_run *run)
{
	struct pte_census parent_after, child_after;

	KUNIT_ASSERT_TRUE(test, has_vma(run->child));
	forklab_expect_rss_counters(test, run->child);
	child_after = forklab_take_census(run->child, FORK_ADDR);
	parent_after = forklab_take_census(run->parent, FORK_ADDR);
	if (run->row->outcome == COPIED)	/* upstream copies: nothing to fault */
		KUNIT_EXPECT_EQ(test, run->before.present, FORK_PAGES);
	if (run->outcome == COPIED) {
		KUNIT_EXPECT_EQ(test, child_after.present, run->before.present);
		expect_cow_state(test, run->row, &run->before, &parent_after,
				 &child_after);
		expect_copied_bits(test, run->row, &run->before, &parent_after,
				   &child_after);
	} else {
		KUNIT_EXPECT_EQ(test, child_after.present, 0U);
	}
}

/* (b) and (c): the child reads, one fault per page it lacks. */
static void check_child_reads(struct kunit *test, struct fork_run *run)
{
	set_fault_around(test, 1);
	KUNIT_EXPECT_EQ(test, read_vma(test, run->child, run->buf),
			run->missing);
	expect_child_view(test, run->row, run->buf);
}

/* (d): the child's references are gone with the child. */
static void check_child_refs_dropped(struct kunit *test, struct fork_run *run)
{
	unsigned int i;

	forklab_use_mm(NULL);
	kunit_release_action(test, forklab_mmput_action, run->child);
	run->child = NULL;
	lru_add_drain();
	for (i = 0; i < FORK_PAGES; i++)
		if (run->before.pages[i])
			KUNIT_EXPECT_EQ_MSG(test, page_ref_count(run->before.pages[i]),
					    run->refs[i], "page %u", i);
}

/* (c) at the default fault-around, in a second child. */
static void check_default_faults(struct kunit *test, struct fork_run *run,
				 unsigned long default_fault_around)
{
	forklab_set_fault_around(default_fault_around);
	run->child = forklab_fork_mm(test, run->parent);
	KUNIT_EXPECT_EQ(test, read_vma(test, run->child, run->buf),
			run->missing ? (unsigned long)run->row->default_faults : 0UL);
}

/* (b) after writes: private stays private, shared is shared. */
static void check_writes(struct kunit *test, struct fork_run *run)
{
	const struct fork_case *row = run->row;

	write_vma(test, run->child, CHILD_PATTERN, run->buf);
	read_vma(test, run->parent, run->buf);
	if (row->access == WRITES_HALF && !forklab_is_shared(row))
		expect_bytes_half(test, run->buf, "parent after the child wrote");
	else
		expect_bytes(test, run->buf, forklab_is_shared(row) ? CHILD_PATTERN :
			     row->access == WRITES ? PARENT_PATTERN :
			     child_seed(row), "parent after the child wrote");
	write_vma(test, run->parent, PARENT_PATTERN_2, run->buf);
	read_vma(test, run->child, run->buf);
	expect_bytes(test, run->buf, forklab_is_shared(row) ? PARENT_PATTERN_2 :
		     CHILD_PATTERN, "child after the parent wrote");
}

static void fork_case_test(struct kunit *test)
{
	const struct fork_case *row = test->param_value;
	unsigned long default_fault_around = forklab_fault_around();
	struct fork_run *run = start_fork(test, row);

	if (row->outcome == ABSENT) {
		KUNIT_EXPECT_FALSE(test, has_vma(run->child));
	} else {
		check_copy(test, run);
		check_child_reads(test, run);
		check_child_refs_dropped(test, run);
		check_default_faults(test, run, default_fault_around);
		if (row->prot & PROT_WRITE)
			check_writes(test, run);
	}
	forklab_expect_torn_down(test, run->parent, run->child, run->pagetables);
}

static struct kunit_case fork_test_cases[] = {
	KUNIT_CASE_PARAM(fork_case_test, fork_cases_gen_params),
	{}
};

static struct kunit_suite fork_test_suite = {
	.name = "forklab_fork",
	.test_cases = fork_test_cases,
};

kunit_test_suite(fork_test_suite);

MODULE_DESCRIPTION("KUnit tests of fork()'s page-table copy, per mapping kind");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
