// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of fork()'s page-table copy as the kernel does it: build a
 * parent mm with real mappings, fork it with dup_mm(), and check per vma
 *
 *   (a) copied or skipped: the child's present ptes right after fork;
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
 *
 * dup_mm_fault_injection then fails each allocation of dup_mm() in turn
 * and checks that every failure leaves the parent as it was.
 *
 * What dup_mmap() (kernel/fork.c) hands the child, line by line, and the
 * row that fails if the line is wrong (KUnit here; mm-tests/ by program;
 * "x86_64" where UML cannot have it: the QEMU target's, issue 11):
 *
 *   line                          hands over              checked by
 *   dup_mm_exe_file()             /proc/PID/exe           fork_handover 1
 *   total_vm, data_vm, exec_vm,   VmSize, VmData, VmExe,  child_figures (after
 *   stack_vm copied               VmStk                   VM_DONTCOPY: mutant 16)
 *   __mt_dup()                    the vma tree            every row; fault
 *                                                         injection (mas_dup_build)
 *   VM_DONTCOPY: dropped,         no vma, figures         MADV_DONTFORK rows
 *   vm_stat_account()                                     (mutant 10), child_figures
 *   fatal_signal_pending()        -EINTR when killed      none yet
 *   VM_ACCOUNT: charged           Committed_AS            child_figures (mutant 17),
 *                                                         fault injection per attempt
 *   vm_area_dup()                 the vma's fields        every row
 *   untrack_pfn_clear()           PAT memtype             x86_64
 *   vma_dup_policy()              NUMA policy             x86_64 (UML has no NUMA)
 *   dup_userfaultfd()             the uffd context        fork_uffd (mutant 34);
 *                                 (below)                 uffd-wp: x86_64
 *   VM_WIPEONFORK: no anon_vma,   zeros                   MADV_WIPEONFORK rows
 *   no copy_page_range()                                  (mutant 09)
 *   anon_vma_fork()               rmap of COW'd pages     (below)
 *   VM_LOCKED_MASK cleared        unlocked vmas           mlock() and MLOCK_ONFAULT
 *                                                         rows (smaps lo, lf; 24),
 *                                                         child_figures
 *   hugetlb_dup_vma_private()     reservations            x86_64
 *   vma_iter_bulk_store(),        the vma in the tree,    every row; exit_mmap()'s
 *   map_count++                   its count               map_count check (console)
 *   vm_ops->open()                driver/shm refcount     fork_handover 2 (mutant 21)
 *   get_file(), i_mmap insert     file rmap               fork_handover 3 (truncate)
 *   mapping_allow_writable()      i_mmap_writable         fork_handover 4 (mutant 22)
 *   copy_page_range()             the ptes (below)        every row
 *   error path: XA_ZERO_ENTRY,    a clean teardown        dup_mm_fault_injection,
 *   MMF_OOM_SKIP, MMF_UNSTABLE                            fork_fail_nth (mutant 11)
 *   ksm_fork()                    ksmd's list, no KSM     (below)
 *                                 figures of its own
 *   khugepaged_fork()             khugepaged's list       x86_64 (UML has no THP)
 *   dup_mm(): hiwater_rss/_vm     VmHWM, VmPeak           child_figures (mutant 18)
 *   mm_init()                     what a new mm starts    (below)
 *                                 with
 *
 * mm_init() on the child's mm (after dup_mm()'s memcpy of the parent's):
 *
 *   line                          hands over              checked by
 *   INIT_LIST_HEAD(&mm->mmlist)   off swapoff's list      swap_sharing 1 (a stale
 *                                 until it has swap       list head would skip the
 *                                 entries                 list_add: mutant 28's way)
 *   map_count = 0                 counted by dup_mmap()   exit_mmap()'s check (console)
 *   mm_pgtables_bytes_init()      VmPTE, counted per      forklab_expect_rss_counters()
 *                                 table allocated         (every level walked)
 *   locked_vm = 0                 VmLck                   child_figures, mlocked rows
 *   pinned_vm = 0                 VmPin                   child_figures (mutant 29)
 *   rss_stat zeroed               counted pte by pte      forklab_expect_rss_counters(),
 *                                                         child_figures (15, 19, 25)
 *   exe_file = NULL               dup_mm_exe_file() sets  fork_handover 1 (20); the
 *                                 it (the NULL matters    NULL alone: none (only
 *                                 on its -EINTR path)     a killed fork sees it)
 *   flags = mmf_init_flags()      THP disable, KSM        fork_handover 6-10
 *                                 merge-any, MDWE, dump   (mutant 30)
 *                                 filter, dumpable
 *   def_flags & VM_INIT_DEF_MASK  not mlockall()'s        fork_handover 11, 12 (31)
 *                                 VM_LOCKED, LOCKONFAULT
 *   mm_alloc_pgd(), rss percpu    the page tables, the    dup_mm_fault_injection,
 *   counters: failure paths       counters                fork_fail_nth (pgd_alloc)
 *
 * anon_vma_fork() and anon_vma_clone() (mm/rmap.c):
 *
 *   no anon_vma in the parent     nothing (lazy skip)     "never touched" rows
 *   clone every parent chain      rmap of shared pages    forklab_fork_anon_vma
 *   entry (GFP_NOWAIT, then                               (rmap walk), fault
 *   GFP_KERNEL)                                           injection, *_retry_fails
 *   reuse an anon_vma with no     no new anon_vma         forklab_fork_anon_vma
 *   vma, < 2 children                                     (mutant 35), generations
 *   else a new anon_vma: root,    where the child's       forklab_fork_anon_vma
 *   parent, num_children++        COWs go                 (root and parent
 *                                                         pointers: mutant 38)
 *   a failure after a reuse:      num_active_vmas right   none (no fault injection
 *   dst->anon_vma = NULL                                  in a fork that reuses)
 *   error paths: unlink_anon_vmas a clean parent          fork_fail_nth(_gen2),
 *                                                         anon_vma_clone_retry_fails
 *
 * dup_userfaultfd() (fs/userfaultfd.c):
 *
 *   no context: nothing           -                       every row
 *   no UFFD_FEATURE_EVENT_FORK:   an ordinary vma         fork_uffd 1 (mutant 34)
 *   userfaultfd_reset_ctx()
 *   EVENT_FORK: a new context,    the child's own uffd,   fork_uffd 2 (two vmas,
 *   one per parent context        UFFD_EVENT_FORK         one event: mutant 39)
 *   its allocations fail          -ENOMEM, fork fails     none (a parent with
 *                                                         EVENT_FORK blocks every
 *                                                         fork until read)
 *
 * ksm_fork() (include/linux/ksm.h), when the parent is MADV_MERGEABLE:
 *
 *   ksm_merging_pages,            none of the parent's    fork_mappings' KSM row
 *   ksm_rmap_items = 0                                    (/proc/self/ksm_stat)
 *   ksm_zero_pages added to the   the child's zero pages  none (use_zero_pages is
 *   global count                  of KSM                  off here)
 *   __ksm_enter()                 ksmd merges the child   fork_mappings' KSM row
 *                                                         (mutant 33); its failure
 *                                                         is tolerated: fork_fail_nth
 *
 * And copy_page_range() down to the pte (mm/memory.c):
 *
 *   vma_needs_copy()              copy or skip            forklab_vma_needs_copy
 *                                                         (mutants 01-06)
 *   copy_present_ptes(): COW      both sides read-only    private rows (07, 08)
 *   ... rss[mm_counter()]++       RssAnon/File/Shmem      forklab_expect_rss_counters(),
 *                                                         child_figures (15)
 *   ... a driver's page in a COW  read-only in both; the   MAP_PRIVATE VM_MIXEDMAP,
 *   mapping, beside anon pages    anon pages COW-shared   half written (the device
 *                                                         stays zeros); VM_PFNMAP's
 *                                                         twin: x86_64 (a UML
 *                                                         uaccess bug, the row's
 *                                                         comment)
 *   ... PageReserved pages        a reference, an rmap    PageReserved VM_MIXEDMAP
 *   ... pte_mkold()               young bit               none (UML maps old ptes
 *                                                         PROT_EXEC: forklab.h)
 *   copy_present_page()           early COW of a pinned   pinned anon rows,
 *                                 anon page               mm-tests/pinned (12);
 *                                 (folio_prealloc() fails fault injection
 *                                 first: -EAGAIN, retry)  (folio_prealloc site)
 *   ... a large folio: batch      one pte per page        x86_64 (UML has no THP;
 *                                                         KUnit's device pages are
 *                                                         split)
 *   copy_nonpresent_pte(): swap   the entry, swap count,  paged-out rows,
 *                                 MM_SWAPENTS, not        child_figures (19),
 *                                 exclusive any more      fork_mappings' writes (23)
 *   ... swap_duplicate() fails:   count continuation      swap_sharing 2: swapoff
 *   -EIO, a continuation page                             once all let go (32)
 *   ... child's mm on mmlist      swapoff finds it        swap_sharing 1 (mutant 28)
 *   ... migration entry: rss of   readable in both if     forklab_fork_entries:
 *   its folio's kind, readable    COW, writable or        writable, readable,
 *   in a COW mapping              exclusive before        exclusive, tmpfs rows
 *                                                         (mutants 26, 36, 37)
 *   ... device private/exclusive  the entry               none (no ZONE_DEVICE on
 *                                                         UML; on x86_64 it takes
 *                                                         CONFIG_TEST_HMM and
 *                                                         hmm-tests' exclusive_cow)
 *   ... pte marker: poison kept,  SIGBUS, not zeros       forklab_fork_entries
 *   uffd-wp only if registered    (in vmas fork copies:   (mutant 27); uffd-wp
 *                                 lazy skips a shmem      alone: x86_64
 *                                 vma, markers and all)
 *   uffd-wp bit kept or dropped   VM_UFFD_WP              x86_64 (06 is equivalent
 *                                                         on UML)
 */

#include <kunit/test.h>
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/file.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/swap.h>

#include "../internal.h"
#include "fail_nth_sites.h"
#include "fork_copy_policy.h"
#include "forklab_mm.h"

static const struct fork_case fork_cases[] = {
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
#if !defined(CONFIG_ARCH_HAS_SYSCALL_WRAPPER) || defined(CONFIG_X86_64)
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

KUNIT_ARRAY_PARAM_DESC(fork_cases, fork_cases, desc);

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
	fault_around_pages = (unsigned long)pages;
}

static void set_fault_around(struct kunit *test, unsigned long pages)
{
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, restore_fault_around,
						  (void *)READ_ONCE(fault_around_pages)));
	WRITE_ONCE(fault_around_pages, pages);
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
 * With both mms gone, so must be every page-table page they allocated.
 * NR_PAGETABLE is exact only without per-CPU deltas (!SMP, as UML is).
 */
static void expect_torn_down(struct kunit *test, struct mm_struct *parent,
			     struct mm_struct *child, unsigned long pagetables)
{
	forklab_use_mm(NULL);
	kunit_release_action(test, forklab_mmput_action, child);
	kunit_release_action(test, forklab_mmput_action, parent);
	if (!IS_ENABLED(CONFIG_SMP))
		KUNIT_EXPECT_EQ_MSG(test,
				    global_node_page_state(NR_PAGETABLE), pagetables,
				    "page-table pages after both mms are gone");
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
	WRITE_ONCE(fault_around_pages, default_fault_around);
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
	unsigned long default_fault_around = READ_ONCE(fault_around_pages);
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
	expect_torn_down(test, run->parent, run->child, run->pagetables);
}

#if IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS) && IS_ENABLED(CONFIG_FAILSLAB) && \
	IS_ENABLED(CONFIG_FAIL_PAGE_ALLOC)
/*
 * Fault injection. By default failslab and fail_page_alloc ignore exactly
 * the allocations fork makes (GFP_KERNEL may sleep; order 0; highmem), and
 * print a stack per failure. Make them eligible and quiet for this test;
 * put each knob back afterwards. There is no user space to write debugfs
 * from, so reach the values through the files' i_private, which is where
 * debugfs_create_bool() and friends keep a pointer to the variable.
 */

struct saved_knob {
	struct fail_nth_knob knob;	/* a copy: the caller's table may be on its stack */
	void *value;
	unsigned long old;
};

static unsigned long knob_swap(const struct fail_nth_knob *knob, void *p,
			       unsigned long value)
{
	unsigned long old;

	switch (knob->type) {
	case FAIL_NTH_BOOL:
		old = *(bool *)p;
		*(bool *)p = value;
		break;
	case FAIL_NTH_U32:
		old = *(u32 *)p;
		*(u32 *)p = value;
		break;
	default:
		old = *(unsigned long *)p;
		*(unsigned long *)p = value;
	}
	return old;
}

static void restore_knob(void *data)
{
	struct saved_knob *saved = data;

	knob_swap(&saved->knob, saved->value, saved->old);
}

static void set_fault_knob(struct kunit *test, const struct fail_nth_knob *knob)
{
	struct saved_knob *saved = kunit_kzalloc(test, sizeof(*saved), GFP_KERNEL);
	struct dentry *dir, *file;

	KUNIT_ASSERT_NOT_NULL(test, saved);
	dir = debugfs_lookup(knob->dir, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, dir, "debugfs %s", knob->dir);
	file = debugfs_lookup(knob->name, dir);
	dput(dir);
	KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, file, "debugfs %s/%s",
					 knob->dir, knob->name);
	saved->knob = *knob;
	saved->value = d_inode(file)->i_private;
	dput(file);
	saved->old = knob_swap(knob, saved->value, knob->value);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, restore_knob, saved));
}

/* What of the parent a failed fork must leave exactly as it was. */
struct parent_state {
	struct pte_census census[ARRAY_SIZE(fork_cases)];
	unsigned int refs[ARRAY_SIZE(fork_cases)][FORK_PAGES];
	s64 rss[NR_MM_COUNTERS];
	unsigned long pgtables_bytes;
	unsigned long pagetables;	/* NR_PAGETABLE: exact on !SMP */
	unsigned long committed;	/* what VM_ACCOUNT vmas charged */
	unsigned int avcs[ARRAY_SIZE(fork_cases)];	/* see rmap_links() */
};

/*
 * The anon_vma_chains linked into the anon_vmas that the vma at @addr
 * hangs off: a failed anon_vma_clone() that leaves a chain of the child's
 * vma copy behind in one of them, which rmap would then walk into a
 * freed vma, raises the count.
 */
static unsigned int rmap_links(struct mm_struct *mm, unsigned long addr)
{
	struct anon_vma_chain *avc, *link;
	struct vm_area_struct *vma;
	unsigned int n = 0;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, addr);
	if (vma && vma->anon_vma) {
		anon_vma_lock_read(vma->anon_vma);
		list_for_each_entry(avc, &vma->anon_vma_chain, same_vma)
			anon_vma_interval_tree_foreach(link, &avc->anon_vma->rb_root,
						       0, ULONG_MAX)
				n++;
		anon_vma_unlock_read(vma->anon_vma);
	}
	mmap_read_unlock(mm);
	return n;
}

/*
 * Each row in a page table of its own: the child's copy of every copied
 * vma then allocates a pte table, which the injection fails in turn, so
 * that each vma's copy_page_range() fails once (a VM_PFNMAP one under x86
 * PAT must then undo track_pfn_copy(), dc84bc2aba85).
 *
 *   FORK_ADDR   + PMD_SIZE    + 2 * PMD_SIZE    ...
 *   |row 0|     |row 1|       |row 2|
 */
static unsigned long slot_addr(unsigned int i)
{
	return FORK_ADDR + i * PMD_SIZE;
}

static void snapshot(struct mm_struct *mm, struct parent_state *state)
{
	unsigned int i, j;

	/*
	 * A kthread's fput() is deferred to a workqueue; the last one of a
	 * shmem file (an earlier case's) unaccounts its size from the
	 * committed memory whenever that work runs. Run it now.
	 */
	flush_delayed_fput();
	lru_add_drain();
	for (i = 0; i < ARRAY_SIZE(fork_cases); i++) {
		state->census[i] = forklab_take_census(mm, slot_addr(i));
		for (j = 0; j < FORK_PAGES; j++)
			state->refs[i][j] = state->census[i].pages[j] ?
				page_ref_count(state->census[i].pages[j]) : 0;
	}
	for (i = 0; i < ARRAY_SIZE(fork_cases); i++)
		state->avcs[i] = rmap_links(mm, slot_addr(i));
	for (i = 0; i < NR_MM_COUNTERS; i++)
		state->rss[i] = percpu_counter_sum(&mm->rss_stat[i]);
	state->pgtables_bytes = mm_pgtables_bytes(mm);
	state->pagetables = IS_ENABLED(CONFIG_SMP) ? 0 :
		global_node_page_state(NR_PAGETABLE);
	state->committed = vm_memory_committed();
}

/* Compare all but the pte write bits: a failed fork may leave COW ptes
 * write-protected, which costs the parent a fault, not data.
 */
/* What differs between two states of the parent, or NULL if nothing. */
static const char *state_change(const struct parent_state *a,
				const struct parent_state *b)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fork_cases); i++) {
		if (a->census[i].present != b->census[i].present ||
		    memcmp(a->census[i].pages, b->census[i].pages,
			   sizeof(a->census[i].pages)))
			return "present ptes or pages";
		if (memcmp(a->refs[i], b->refs[i], sizeof(a->refs[i])))
			return "page references";
		if (a->avcs[i] != b->avcs[i])
			return "anon_vma_chains in its anon_vmas";
	}
	if (memcmp(a->rss, b->rss, sizeof(a->rss)))
		return "rss";
	if (a->pgtables_bytes != b->pgtables_bytes)
		return "pgtables_bytes";
	if (a->pagetables != b->pagetables)
		return "NR_PAGETABLE";
	if (a->committed != b->committed)
		return "committed memory";
	return NULL;
}

/* What a child holds right after fork: per row, its ptes and bytes. */
struct child_image {
	unsigned int present[ARRAY_SIZE(fork_cases)];
	bool mapped[ARRAY_SIZE(fork_cases)];
	u8 bytes[ARRAY_SIZE(fork_cases)][FORK_SIZE];
};

static void take_child_image(struct kunit *test, struct mm_struct *child,
			     struct child_image *image)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fork_cases); i++)
		image->present[i] = forklab_take_census(child, slot_addr(i)).present;
	for (i = 0; i < ARRAY_SIZE(fork_cases); i++) {
		mmap_read_lock(child);
		image->mapped[i] = find_vma_intersection(child, slot_addr(i),
							 slot_addr(i) + FORK_SIZE);
		mmap_read_unlock(child);
		if (image->mapped[i])
			forklab_read_vma_at(test, child, slot_addr(i), image->bytes[i]);
	}
	forklab_use_mm(NULL);
}

#if IS_ENABLED(CONFIG_FAULT_INJECTION_NTH_SITE)
/*
 * Each injection point by its call site (patches/0009 keeps the stack of
 * the check fail-nth failed; fail_nth_sites.h says how to read it), with
 * how often a failure there failed dup_mm() and how often dup_mm() went on.
 */
#define MAX_FAIL_SITES	32

struct fail_site {
	char name[64];
	enum fail_nth_via via;
	bool nowarn;
	unsigned int failed, tolerated;
};

struct fail_sites {
	struct fail_site site[MAX_FAIL_SITES];
	unsigned int nr;
	struct fault_nth_site rec;
	char sym[KSYM_SYMBOL_LEN];
};

/* The site of the last injection: its caller outside the allocator. */
static struct fail_site *injection_site(struct kunit *test,
					struct fail_sites *sites)
{
	struct fault_nth_site *rec = &sites->rec;
	struct fail_site *site, key = {};
	unsigned int i;

	key.nowarn = rec->flags & FAULT_NOWARN;
	strscpy(key.name, "?", sizeof(key.name));
	for (i = 0; i < rec->nr_entries; i++) {
		sprint_symbol_no_offset(sites->sym, rec->entries[i]);
		sites->sym[strcspn(sites->sym, ".")] = '\0';	/* .constprop.0 */
		key.via = fail_nth_via_of(sites->sym, key.via);
		if (!fail_nth_is_alloc_frame(sites->sym)) {
			strscpy(key.name, sites->sym, sizeof(key.name));
			break;
		}
	}
	for (i = 0; i < sites->nr; i++) {
		site = &sites->site[i];
		if (!strcmp(site->name, key.name) && site->via == key.via &&
		    site->nowarn == key.nowarn)
			return site;
	}
	KUNIT_ASSERT_LT_MSG(test, sites->nr, MAX_FAIL_SITES, "too many sites");
	sites->site[sites->nr] = key;
	return &sites->site[sites->nr++];
}

/*
 * Hold the N-th injection to its site's rule: a site with a fallback
 * (fail_nth_fallback()) is tolerated, every other fails dup_mm().
 */
static void check_injection(struct kunit *test, struct fail_sites *sites,
			    unsigned long seq, unsigned int n, bool tolerated)
{
	struct fail_site *site;
	const char *why;

	fault_nth_site(&sites->rec);
	KUNIT_ASSERT_EQ_MSG(test, sites->rec.seq, seq + 1,
			    "N=%u: no record of the injection", n);
	KUNIT_ASSERT_EQ(test, sites->rec.pid, task_pid_nr(current));
	site = injection_site(test, sites);
	why = fail_nth_fallback(site->name, site->via, site->nowarn);
	kunit_info(test, "injection %u: %s%s%s: %s\n", n, site->name,
		   fail_nth_via_names[site->via],
		   site->nowarn ? ", no-warn" : "",
		   tolerated ? "tolerated" : "failed cleanly");
	if (fail_nth_either_way(site->name)) {
		if (tolerated)
			site->tolerated++;
		else
			site->failed++;
		return;
	}
	if (tolerated) {
		site->tolerated++;
		KUNIT_EXPECT_NOT_NULL_MSG(test, why,
					  "N=%u: dup_mm() went on after a failure in %s%s, which has no fallback",
					  n, site->name, fail_nth_via_names[site->via]);
	} else {
		site->failed++;
		KUNIT_EXPECT_NULL_MSG(test, why,
				      "N=%u: a failure in %s failed dup_mm(), although %s",
				      n, site->name, why);
	}
}

static void report_sites(struct kunit *test, const struct fail_sites *sites)
{
	unsigned int i;

	for (i = 0; i < sites->nr; i++) {
		const struct fail_site *site = &sites->site[i];

		kunit_info(test, "site %s%s%s: %u failed cleanly, %u tolerated\n",
			   site->name, fail_nth_via_names[site->via],
			   site->nowarn ? ", no-warn" : "", site->failed,
			   site->tolerated);
	}
}
#endif

/*
 * For N = 1, 2, ...: fail the N-th fault-injection check inside dup_mm()
 * of a parent holding every mapping kind of the table. Each failure must
 * come back as NULL (-ENOMEM) with the parent's ptes, pages, page
 * references, rss and page tables as they were: a leak or a half-undone
 * copy on an error path shows here. Once N passes the number of checks,
 * dup_mm() succeeds without an injection and the test stops.
 */
static void dup_mm_fault_injection(struct kunit *test)
{
	struct file *files[ARRAY_SIZE(fork_cases)];
	struct parent_state *before, *after;
	struct child_image *want, *got;
	unsigned int i, n, failed = 0, tolerated = 0, left;
	const char *change;
	struct mm_struct *parent, *child;
	u8 *buf, *bytes;
#if IS_ENABLED(CONFIG_FAULT_INJECTION_NTH_SITE)
	struct fail_sites *sites = kunit_kzalloc(test, sizeof(*sites), GFP_KERNEL);
	unsigned long seq;

	KUNIT_ASSERT_NOT_NULL(test, sites);
#endif

	buf = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);
	bytes = kunit_kmalloc_array(test, ARRAY_SIZE(fork_cases), FORK_SIZE,
				    GFP_KERNEL);
	before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	after = kunit_kzalloc(test, sizeof(*after), GFP_KERNEL);
	want = kunit_kzalloc(test, sizeof(*want), GFP_KERNEL);
	got = kunit_kzalloc(test, sizeof(*got), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_NOT_NULL(test, got);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, bytes);
	KUNIT_ASSERT_NOT_NULL(test, before);
	KUNIT_ASSERT_NOT_NULL(test, after);

	for (i = 0; i < ARRAY_SIZE(fork_cases); i++)
		files[i] = forklab_row_file(test, &fork_cases[i]);
	parent = forklab_new_mm(test);
	for (i = 0; i < ARRAY_SIZE(fork_cases); i++)
		forklab_map_row(test, parent, &fork_cases[i], files[i], slot_addr(i), buf);
	for (i = 0; i < ARRAY_SIZE(fork_cases); i++)
		forklab_read_vma_at(test, parent, slot_addr(i), bytes + i * FORK_SIZE);
	forklab_use_mm(NULL);
	snapshot(parent, before);

	for (i = 0; i < ARRAY_SIZE(fail_nth_knobs); i++)
		set_fault_knob(test, &fail_nth_knobs[i]);

	/*
	 * The same checks in the same order on every boot: each failed
	 * dup_mm() frees its maple nodes through RCU, so without a barrier
	 * whether the next one can find free nodes or refills the slab (a page
	 * allocation that the N-th injection may hit, tolerated through
	 * allocate_slab()'s fallback to a lower order) depends on when a
	 * grace period ended. One uninjected dup_mm() first fills every
	 * cache that a whole fork takes objects from; its child is what
	 * the child of every tolerated injection must look like.
	 */
	child = dup_mm(current, parent);
	KUNIT_ASSERT_NOT_NULL(test, child);
	take_child_image(test, child, want);
	mmput(child);
	for (n = 1; n < 100000; n++) {
		rcu_barrier();
#if IS_ENABLED(CONFIG_FAULT_INJECTION_NTH_SITE)
		fault_nth_site(&sites->rec);
		seq = sites->rec.seq;
#endif
		WRITE_ONCE(current->fail_nth, n);
		child = dup_mm(current, parent);
		left = READ_ONCE(current->fail_nth);
		WRITE_ONCE(current->fail_nth, 0);
#if IS_ENABLED(CONFIG_FAULT_INJECTION_NTH_SITE)
		if (!left)
			check_injection(test, sites, seq, n, child);
#endif
		if (child) {
			if (left) {
				mmput(child);
				break;	/* fewer than n checks: done */
			}
			/*
			 * The failure had a fallback: the child must be the
			 * child of a fork without injection, row by row.
			 */
			take_child_image(test, child, got);
			forklab_expect_rss_counters(test, child);
			mmput(child);
			for (i = 0; i < ARRAY_SIZE(fork_cases); i++) {
				KUNIT_EXPECT_EQ_MSG(test, got->present[i], want->present[i],
						    "N=%u, row %u: child's present ptes", n, i);
				KUNIT_EXPECT_EQ_MSG(test, got->mapped[i], want->mapped[i],
						    "N=%u, row %u: child's vma", n, i);
				if (got->mapped[i] && want->mapped[i])
					KUNIT_EXPECT_MEMEQ_MSG(test, got->bytes[i], want->bytes[i],
							       FORK_SIZE,
							       "N=%u, row %u: child's bytes",
							       n, i);
			}
			tolerated++;
			continue;
		}
		failed++;
		KUNIT_ASSERT_EQ_MSG(test, left, 0U,
				    "dup_mm() failed at N=%u with no injection", n);
		snapshot(parent, after);
		change = state_change(before, after);
		KUNIT_ASSERT_TRUE_MSG(test, !change,
				      "parent's %s changed by a fork failed at N=%u",
				      change, n);
	}
	KUNIT_ASSERT_LT(test, n, 100000U);

	for (i = 0; i < ARRAY_SIZE(fork_cases); i++) {
		forklab_read_vma_at(test, parent, slot_addr(i), buf);
		KUNIT_EXPECT_MEMEQ_MSG(test, buf, bytes + i * FORK_SIZE, FORK_SIZE,
				       "row %u: %s", i, fork_cases[i].desc);
	}
	forklab_use_mm(NULL);
	kunit_info(test, "dup_mm(): %u injection points, %u failed cleanly, %u tolerated; parent intact after each\n",
		   n - 1, failed, tolerated);
#if IS_ENABLED(CONFIG_FAULT_INJECTION_NTH_SITE)
	report_sites(test, sites);
#endif
	KUNIT_EXPECT_GT(test, failed, 0U);
}

#if IS_ENABLED(CONFIG_FAULT_INJECTION_STACKTRACE_FILTER) && IS_ENABLED(CONFIG_KALLSYMS)
/*
 * fail-nth fails one check, so the fallback of a site that has one is
 * never made to fail with it: anon_vma_clone() tries GFP_NOWAIT under
 * the anon_vma lock, then drops it and retries with GFP_KERNEL. Fail
 * both, with failslab itself (probability 100, times 2, this task only,
 * only under anon_vma_clone() by the stacktrace filter, after letting
 * @passes chain entries through by its "space"), forking the child of a
 * fork, whose anon vmas hang off two anon_vmas each:
 *
 *   origin --fork--> parent --fork (injected)--> child
 *   vma: anon_vma A  vma: A, B                   vma: A ok, B fails
 *
 * dup_mm() must fail through dup_mmap()'s anon_vma_fork() error path and
 * leave the parent as it was: its ptes, page references, rss, page
 * tables, the commit charge, and the chains in A and B (an
 * anon_vma_clone() that forgets to unlink the entry it already made, or
 * unlocks A's root twice, shows here). A leaked vma copy (mutant 13)
 * leaves no trace in the parent: fork_fail_nth counts vm_area_struct
 * objects.
 */
struct clone_failure {
	const char *desc;
	unsigned int passes;	/* chain entries cloned before the failure */
};

static const struct clone_failure clone_failures[] = {
	{ "the first chain entry fails", 0 },
	{ "the second chain entry fails", 1 },
};

static void clone_failure_desc(const struct clone_failure *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(clone_failures, clone_failures, clone_failure_desc);

static void clear_make_it_fail(void *unused)
{
	current->make_it_fail = 0;
}

static void anon_vma_clone_retry_fails(struct kunit *test)
{
	const struct clone_failure *param = test->param_value;
	unsigned long start = (unsigned long)anon_vma_clone, size, offset, reject;
	struct fail_nth_knob knobs[] = {
		{ "failslab", "task-filter", FAIL_NTH_BOOL, 1 },
		{ "failslab", "stacktrace-depth", FAIL_NTH_ULONG, 32 },
		{ "failslab", "require-start", FAIL_NTH_ULONG, start },
		{ "failslab", "require-end", FAIL_NTH_ULONG, 0 },
		{ "failslab", "reject-start", FAIL_NTH_ULONG, 0 },
		{ "failslab", "reject-end", FAIL_NTH_ULONG, 0 },
		{ "failslab", "space", FAIL_NTH_U32, 0 },
		{ "failslab", "interval", FAIL_NTH_ULONG, 1 },
		{ "failslab", "times", FAIL_NTH_U32, 2 },
		{ "failslab", "probability", FAIL_NTH_ULONG, 100 },
	};
	struct file *files[ARRAY_SIZE(fork_cases)];
	struct mm_struct *origin, *parent, *child;
	struct parent_state *before, *after;
	const char *change;
	unsigned int i;
	u8 *buf;

	KUNIT_ASSERT_TRUE(test, kallsyms_lookup_size_offset(start, &size, &offset));
	knobs[3].value = start + size;
	/*
	 * kmemleak allocates an object of its own inside every allocation
	 * (make check SANITIZE=1), under anon_vma_clone() too; it has a
	 * fallback, and is not what this case fails: keep it out.
	 */
	reject = IS_ENABLED(CONFIG_DEBUG_KMEMLEAK) ?
		 kallsyms_lookup_name("__alloc_object") : 0;
	if (reject && kallsyms_lookup_size_offset(reject, &size, &offset)) {
		knobs[4].value = reject;
		knobs[5].value = reject + size;
	}
	/* "space" lets allocations through while it exceeds their size */
	if (param->passes)
		knobs[6].value = param->passes * sizeof(struct anon_vma_chain) + 1;
	buf = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);
	before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	after = kunit_kzalloc(test, sizeof(*after), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, before);
	KUNIT_ASSERT_NOT_NULL(test, after);

	for (i = 0; i < ARRAY_SIZE(fork_cases); i++)
		files[i] = forklab_row_file(test, &fork_cases[i]);
	origin = forklab_new_mm(test);
	for (i = 0; i < ARRAY_SIZE(fork_cases); i++)
		forklab_map_row(test, origin, &fork_cases[i], files[i], slot_addr(i), buf);
	forklab_use_mm(NULL);
	parent = dup_mm(current, origin);
	KUNIT_ASSERT_NOT_NULL(test, parent);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, forklab_mmput_action, parent));
	snapshot(parent, before);

	for (i = 0; i < ARRAY_SIZE(fail_nth_knobs); i++)
		set_fault_knob(test, &fail_nth_knobs[i]);
	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		set_fault_knob(test, &knobs[i]);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, clear_make_it_fail, NULL));
	current->make_it_fail = 1;
	child = dup_mm(current, parent);
	current->make_it_fail = 0;
	if (child)
		mmput(child);
	KUNIT_EXPECT_NULL_MSG(test, child,
			      "dup_mm() went on although both of anon_vma_clone()'s tries failed");
	snapshot(parent, after);
	change = state_change(before, after);
	KUNIT_EXPECT_TRUE_MSG(test, !change,
			      "parent's %s changed by a fork that failed in anon_vma_clone()",
			      change);
}
#endif /* CONFIG_FAULT_INJECTION_STACKTRACE_FILTER */

#endif

static struct kunit_case fork_test_cases[] = {
	KUNIT_CASE_PARAM(fork_case_test, fork_cases_gen_params),
#if IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS) && IS_ENABLED(CONFIG_FAILSLAB) && \
	IS_ENABLED(CONFIG_FAIL_PAGE_ALLOC)
	KUNIT_CASE_SLOW(dup_mm_fault_injection),
#endif
#if IS_ENABLED(CONFIG_FAULT_INJECTION_STACKTRACE_FILTER) && IS_ENABLED(CONFIG_KALLSYMS) && \
	IS_ENABLED(CONFIG_FAILSLAB) && IS_ENABLED(CONFIG_FAIL_PAGE_ALLOC)
	KUNIT_CASE_PARAM(anon_vma_clone_retry_fails, clone_failures_gen_params),
#endif
	{}
};

static struct kunit_suite fork_test_suite = {
	.name = "forklab_fork",
	.test_cases = fork_test_cases,
};

kunit_test_suites(&fork_test_suite);

MODULE_DESCRIPTION("KUnit tests of fork()'s page-table copy, per mapping kind");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
