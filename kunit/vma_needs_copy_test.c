// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for vma_needs_copy(), the decision at the top of
 * copy_page_range(): does fork() copy this vma's page tables into the
 * child, or leave them empty for page faults to refill?
 *
 * Since 2.6.14 ("Lazy page table copies in fork()", d992895ba2b2) fork
 * skips every vma whose ptes a fault can rebuild from the page cache or
 * from shmem. Each exception to that rule came from a bug, and each row
 * of the table below says what a wrong answer would bring back.
 *
 * The vmas are built as mmap() builds them (vm_area_alloc(), the file's
 * ->mmap() or shmem_zero_setup(), insert_vm_struct(), anon_vma_prepare()
 * where the parent touched private pages); the child's is a vm_area_dup()
 * in a second mm, as in dup_mmap().
 *
 *   parent mm   FORKLAB_VMA_START          + FORKLAB_VMA_PAGES pages
 *               |<------------ parent vma (one row) ------------>|
 *   child mm    |<------------ vm_area_dup(), not linked ------->|
 *
 * Neither mm holds a page: only the decision runs, once called directly
 * and once as fork takes it, inside copy_page_range(). There, the
 * fork_copy= policy the kernel booted with (patches/0008) may copy what
 * vma_needs_copy() skips, and the /proc/vmstat counters (patches/0007)
 * must name the reason.
 */

#include <kunit/test.h>
#include <linux/fs.h>
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/rmap.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/userfaultfd_k.h>

#include "../internal.h"
#include "fork_copy_policy.h"
#include "forklab_compat.h"

#define FORKLAB_VMA_START	0x10000000UL
#define FORKLAB_VMA_PAGES	4
#define FORKLAB_VMA_SIZE	(FORKLAB_VMA_PAGES * PAGE_SIZE)

/* The vm_flags that mmap() gives each kind of mapping (see do_mmap()). */
#define PRIVATE_RW	(VM_READ | VM_WRITE | VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC)
#define PRIVATE_RO	(VM_READ | VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC)
#define SHARED_RW	(PRIVATE_RW | VM_SHARED | VM_MAYSHARE)
/* MAP_SHARED of a file opened O_RDONLY: VM_MAYSHARE without VM_SHARED. */
#define SHARED_RO	(VM_READ | VM_MAYREAD | VM_MAYEXEC | VM_MAYSHARE)
/* What remap_pfn_range() adds to the vma it maps. */
#define PFNMAP		(VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP)

enum vma_backing {
	PRIVATE_ANON,	/* MAP_PRIVATE | MAP_ANONYMOUS: no file, no vm_ops */
	SHARED_ANON,	/* MAP_SHARED | MAP_ANONYMOUS: shmem_zero_setup() */
	SHMEM_FILE,	/* a tmpfs file, mapped through its own ->mmap() */
	HUGETLB_FILE,	/* a hugetlbfs file (x86_64), one huge page long */
};

struct vma_needs_copy_case {
	const char *desc;
	vm_flags_t flags;		/* the parent's vma */
	enum vma_backing backing;
	bool anon_vma;			/* the parent has private (COWed) pages */
	bool dst_uffd_wp;		/* the child kept uffd-wp (EVENT_FORK) */
	bool copy;			/* expected decision */
};

static const struct vma_needs_copy_case vma_needs_copy_cases[] = {
	/*
	 * Never touched: there is nothing to copy, a fault gives the child
	 * the zero page. Copying would only redo 2.6.13's walk of empty
	 * page tables.
	 */
	{ "private anon, untouched", PRIVATE_RW, PRIVATE_ANON,
	  false, false, false },
	/*
	 * The parent's anonymous pages live only in its page tables. If we
	 * skip them, the child reads zeros where the parent wrote data:
	 * the anon_vma rule of d992895ba2b2.
	 */
	{ "private anon, touched", PRIVATE_RW, PRIVATE_ANON,
	  true, false, true },
	/*
	 * Ray Fucillo's 2005 case: SysV shm and MAP_SHARED anonymous memory
	 * live in shmem, so faults refill the child. Copying is the ~23 ms
	 * of fork per 100 MB of touched shm that the lazy copy removed.
	 */
	{ "shared anon (shmem_zero_setup)", SHARED_RW, SHARED_ANON,
	  false, false, false },
	{ "MAP_SHARED tmpfs file, rw", SHARED_RW, SHMEM_FILE,
	  false, false, false },
	/*
	 * MAP_SHARED of a file opened O_RDONLY has VM_MAYSHARE but not
	 * VM_SHARED (Hugh Dickins in the 2005 thread): a VM_SHARED test,
	 * as Nick Piggin's first patch had, copies it for nothing.
	 */
	{ "MAP_SHARED file opened read-only", SHARED_RO, SHMEM_FILE,
	  false, false, false },
	/* Never written: every page is still the page cache's. */
	{ "MAP_PRIVATE file, never written", PRIVATE_RW, SHMEM_FILE,
	  false, false, false },
	/*
	 * Andi Kleen's 2005 variant copied only vmas without a file. The
	 * parent's written pages of a MAP_PRIVATE file are anonymous COW
	 * copies: skip them and the child reads the file's bytes, not the
	 * parent's.
	 */
	{ "MAP_PRIVATE file, written", PRIVATE_RW, SHMEM_FILE,
	  true, false, true },
	/*
	 * PTRACE_POKEDATA (FOLL_FORCE) into a PROT_READ MAP_PRIVATE file
	 * mapping COWs an anonymous page. A child forked afterwards must
	 * see the poked bytes (cda540ace6a1 kept this path, and only this).
	 */
	{ "PROT_READ MAP_PRIVATE file, poked", PRIVATE_RO, SHMEM_FILE,
	  true, false, true },
	/*
	 * Hugh's "awkward case" of 2005: anonymous pages inside a VM_MAYSHARE
	 * vma (a forced write before 3.15 made them). A rule keyed on
	 * VM_MAYSHARE skips the vma and the child loses those pages; the
	 * anon_vma rule keeps them.
	 */
	{ "MAP_SHARED read-only file with anon pages", SHARED_RO, SHMEM_FILE,
	  true, false, true },
	/*
	 * VM_PFNMAP has no struct pages and no ->fault to refill them. If
	 * we skip, the child takes SIGBUS where the parent reads device
	 * memory (6aab341e0a28, 2.6.15).
	 */
	{ "VM_PFNMAP shared", SHARED_RW | PFNMAP, SHMEM_FILE,
	  false, false, true },
	{ "VM_PFNMAP private (COW pfnmap)", PRIVATE_RW | PFNMAP, SHMEM_FILE,
	  false, false, true },
	/*
	 * vm_insert_page() mappings (VM_MIXEDMAP since 3.7): the driver put
	 * the pages there, no fault handler puts them back (4d7672b46244).
	 */
	{ "VM_MIXEDMAP shared", SHARED_RW | VM_MIXEDMAP, SHMEM_FILE,
	  false, false, true },
	{ "VM_MIXEDMAP private, touched", PRIVATE_RW | VM_MIXEDMAP, SHMEM_FILE,
	  true, false, true },
	/*
	 * VM_HUGETLB no longer forces a copy (bcd51a3c679d, 6.0): shared
	 * hugetlb faults back in like shmem; private hugetlb with COWed
	 * pages has an anon_vma. Where the kernel has hugetlb the vmas are
	 * hugetlbfs files (x86_64); on UML the flag is set on a tmpfs vma,
	 * which is all the decision reads.
	 */
#ifdef CONFIG_HUGETLBFS
	{ "VM_HUGETLB shared", SHARED_RW | VM_NORESERVE, HUGETLB_FILE,
	  false, false, false },
	{ "VM_HUGETLB private, touched", PRIVATE_RW | VM_NORESERVE,
	  HUGETLB_FILE, true, false, true },
#else
	{ "VM_HUGETLB shared", SHARED_RW | VM_HUGETLB, SHMEM_FILE,
	  false, false, false },
	{ "VM_HUGETLB private, touched", PRIVATE_RW | VM_HUGETLB, SHMEM_FILE,
	  true, false, true },
#endif
#if defined(CONFIG_USERFAULTFD) && defined(CONFIG_HAVE_ARCH_USERFAULTFD_WP)
	/*
	 * A child that kept uffd-wp (UFFD_FEATURE_EVENT_FORK) holds its
	 * write-protection only in pte bits and markers. Skip the copy and
	 * the child's writes are never reported (c56d1b62cce8, 5.19).
	 */
	{ "shmem file, child keeps uffd-wp", SHARED_RW | VM_UFFD_WP, SHMEM_FILE,
	  false, true, true },
	{ "private anon untouched, child keeps uffd-wp",
	  PRIVATE_RW | VM_UFFD_WP, PRIVATE_ANON, false, true, true },
	/*
	 * The rule looks at the child: without EVENT_FORK, dup_userfaultfd()
	 * cleared the flags, and a copy would only cost time.
	 */
	{ "shmem file, uffd-wp dropped at fork", SHARED_RW | VM_UFFD_WP,
	  SHMEM_FILE, false, false, false },
#endif
};

KUNIT_ARRAY_PARAM_DESC(vma_needs_copy, vma_needs_copy_cases, desc);

KUNIT_DEFINE_ACTION_WRAPPER(mmput_action, mmput, struct mm_struct *);
KUNIT_DEFINE_ACTION_WRAPPER(vm_area_free_action, vm_area_free,
			    struct vm_area_struct *);

/* The vma's length: a huge page for hugetlbfs, else FORKLAB_VMA_SIZE. */
static unsigned long vma_size(enum vma_backing backing)
{
#ifdef CONFIG_HUGETLBFS
	if (backing == HUGETLB_FILE)
		return huge_page_size(&default_hstate);
#endif
	return FORKLAB_VMA_SIZE;
}

/* Give @vma the file and vm_ops that mmap() would, per @backing. */
static int attach_backing(struct vm_area_struct *vma, enum vma_backing backing)
{
	struct file *file;

	switch (backing) {
	case HUGETLB_FILE:
#ifdef CONFIG_HUGETLBFS
		/* hugetlbfs' ->mmap() adds VM_HUGETLB and VM_DONTEXPAND. */
		file = hugetlb_file_setup("forklab", vma_size(backing),
					  VM_NORESERVE, HUGETLB_ANONHUGE_INODE,
					  0);
		if (IS_ERR(file))
			return PTR_ERR(file);
		vma->vm_file = file;
		return call_mmap(file, vma);
#else
		return -EINVAL;
#endif
	case PRIVATE_ANON:
		vma_set_anonymous(vma);
		return 0;
	case SHARED_ANON:
		return shmem_zero_setup(vma);
	case SHMEM_FILE:
		file = shmem_file_setup("forklab", FORKLAB_VMA_SIZE,
					VM_NORESERVE);
		if (IS_ERR(file))
			return PTR_ERR(file);
		vma->vm_file = file;	/* the vma owns this reference */
		return call_mmap(file, vma);
	}
	return -EINVAL;
}

/* Build the parent's vma for @row in a new mm that the test owns. */
static struct vm_area_struct *build_parent_vma(struct kunit *test,
					       const struct vma_needs_copy_case *row)
{
	struct vm_area_struct *vma;
	struct mm_struct *mm;
	int err;

	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, mmput_action, mm));

	vma = vm_area_alloc(mm);
	KUNIT_ASSERT_NOT_NULL(test, vma);
	vma->vm_start = FORKLAB_VMA_START;
	vma->vm_end = FORKLAB_VMA_START + vma_size(row->backing);
	vm_flags_init(vma, row->flags);

	/* No assertion may abort the test while it holds mmap_lock. */
	mmap_write_lock(mm);
	err = attach_backing(vma, row->backing);
	if (!err)
		err = insert_vm_struct(mm, vma);
	if (err) {
		mmap_write_unlock(mm);
		if (vma->vm_file)
			fput(vma->vm_file);
		vm_area_free(vma);
		KUNIT_ASSERT_EQ_MSG(test, 0, err, "building the vma failed");
	}
	/* From here on, mmput() frees the vma, its file and its anon_vma. */
	if (row->anon_vma)
		err = anon_vma_prepare(vma);
	mmap_write_unlock(mm);
	KUNIT_ASSERT_EQ(test, 0, err);

	/* The fixture must be the mapping the row describes. */
	KUNIT_ASSERT_EQ(test, vma_is_anonymous(vma), row->backing == PRIVATE_ANON);
	KUNIT_ASSERT_EQ(test, !!vma->anon_vma, row->anon_vma);
	/* (Without CONFIG_HUGETLB_PAGE no vma is hugetlb, whatever its flags.) */
	KUNIT_ASSERT_EQ(test, is_vm_hugetlb_page(vma),
			IS_ENABLED(CONFIG_HUGETLB_PAGE) &&
			(row->backing == HUGETLB_FILE || (row->flags & VM_HUGETLB)));
	return vma;
}

/* The child's vma, as dup_mmap() and dup_userfaultfd() leave it. */
static struct vm_area_struct *build_child_vma(struct kunit *test,
					      struct vm_area_struct *parent,
					      bool keeps_uffd_wp)
{
	struct mm_struct *mm = mm_alloc();
	struct vm_area_struct *vma;

	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, mmput_action, mm));
	vma = vm_area_dup(parent);
	KUNIT_ASSERT_NOT_NULL(test, vma);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, vm_area_free_action, vma));
	vma->vm_mm = mm;
	if (!keeps_uffd_wp)
		vm_flags_init(vma, vma->vm_flags & ~__VM_UFFD_FLAGS);
	KUNIT_ASSERT_EQ(test, userfaultfd_wp(vma), keeps_uffd_wp);
	return vma;
}

static void vma_needs_copy_decision(struct kunit *test)
{
	const struct vma_needs_copy_case *row = test->param_value;
	struct vm_area_struct *parent, *child;

	parent = build_parent_vma(test, row);
	child = build_child_vma(test, parent, row->dst_uffd_wp);

	KUNIT_EXPECT_EQ_MSG(test, vma_needs_copy(child, parent), row->copy,
			    "vm_flags %#lx, anon_vma %d, child uffd-wp %d",
			    parent->vm_flags, row->anon_vma, row->dst_uffd_wp);
}

/*
 * The same decision as fork() takes it: inlined in copy_page_range(). The
 * parent has no page, so nothing is copied either way; but a COW mapping
 * that copy_page_range() decides to copy is write-protected under the
 * parent's write_protect_seq, which then moves by one write section. If
 * the inlined decision disagreed with the row, the count would say so.
 */
/* The counters one copy_page_range() of @row's vma must move. */
static struct fork_counts expected_counts(const struct vma_needs_copy_case *row,
					  vm_flags_t flags, bool copy)
{
	struct fork_counts want = {};

	want.n[fork_count_of(copy, row->dst_uffd_wp, flags, row->anon_vma)] = 1;
	return want;
}

static void copy_page_range_decision(struct kunit *test)
{
	const struct vma_needs_copy_case *row = test->param_value;
	struct vm_area_struct *parent, *child;
	struct fork_counts counts, want;
	unsigned int seq_before, seq_after;
	bool copy;
	int err;

	parent = build_parent_vma(test, row);
	child = build_child_vma(test, parent, row->dst_uffd_wp);
	copy = policy_copies(parent->vm_flags, row->copy);
	want = expected_counts(row, parent->vm_flags, copy);
	counts = read_fork_counts(test);

	/* dup_mmap() holds both; copy_page_range() asserts the parent's. */
	mmap_write_lock(parent->vm_mm);
	mmap_write_lock_nested(child->vm_mm, SINGLE_DEPTH_NESTING);
	seq_before = raw_read_seqcount(&parent->vm_mm->write_protect_seq);
	err = copy_page_range(child, parent);
	seq_after = raw_read_seqcount(&parent->vm_mm->write_protect_seq);
	mmap_write_unlock(child->vm_mm);
	mmap_write_unlock(parent->vm_mm);

	KUNIT_EXPECT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ_MSG(test, seq_after - seq_before,
			    copy && is_cow_mapping(parent->vm_flags) ? 2U : 0U,
			    "vm_flags %#lx, anon_vma %d, child uffd-wp %d",
			    parent->vm_flags, row->anon_vma, row->dst_uffd_wp);
	expect_fork_counts(test, &counts, &want);
}

static struct kunit_case vma_needs_copy_test_cases[] = {
	KUNIT_CASE_PARAM(vma_needs_copy_decision, vma_needs_copy_gen_params),
	KUNIT_CASE_PARAM(copy_page_range_decision, vma_needs_copy_gen_params),
	{}
};

static struct kunit_suite vma_needs_copy_test_suite = {
	.name = "forklab_vma_needs_copy",
	.test_cases = vma_needs_copy_test_cases,
};

kunit_test_suite(vma_needs_copy_test_suite);

MODULE_DESCRIPTION("KUnit tests for the fork-time page-table copy decision");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
