// SPDX-License-Identifier: GPL-2.0
/*
 * The mm, pte and byte helpers forklab's fork suites share (what they are
 * for: forklab_mm.h), linked once for all of them: CONFIG_FORKLAB_MM,
 * which each suite that calls them selects.
 */

#include <kunit/test.h>
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/swap.h>
#include <linux/swapops.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>

#include <asm/tlbflush.h>

#include "../internal.h"
#include "fork_pattern.h"
#include "forklab_mm.h"

KUNIT_DEFINE_ACTION_WRAPPER(fput_action, fput, struct file *);
KUNIT_DEFINE_ACTION_WRAPPER(unpin_action, unpin_user_page, struct page *);

void forklab_mmput_action(void *mm)
{
	mmput(mm);
}

/* FORK_SIZE bytes of @seed's pattern (fork_pattern.h, as user space's) */
void forklab_fill(u8 *buf, u8 seed)
{
	size_t words = PAGE_SIZE / sizeof(u64), w;

	for (w = 0; w < FORK_SIZE / sizeof(u64); w++)
		((u64 *)buf)[w] = page_word(seed, 0, w / words, w % words);
}

/*
 * Run the test thread on @mm (NULL: none). The thread owns one mm_users
 * reference on the mm it uses, as a process does: if an assertion ends the
 * test, exit_mm() drops it.
 */
void forklab_use_mm(struct mm_struct *mm)
{
	struct mm_struct *old = current->mm;

	if (old == mm)
		return;
	if (old) {
		kthread_unuse_mm(old);
		mmput(old);
	}
	if (mm) {
		mmget(mm);
		kthread_use_mm(mm);
	}
}

/* A user address space the test owns, laid out as exec would. */
struct mm_struct *forklab_new_mm(struct kunit *test)
{
	struct mm_struct *mm = mm_alloc();

	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, forklab_mmput_action, mm));
	mm->task_size = TASK_SIZE;
	arch_pick_mmap_layout(mm, &current->signal->rlim[RLIMIT_STACK]);
	return mm;
}

struct mm_struct *forklab_fork_mm(struct kunit *test, struct mm_struct *parent)
{
	struct mm_struct *child;

	forklab_use_mm(NULL);	/* dup_mmap() takes the parent's mmap_lock itself */
	child = dup_mm(current, parent);
	KUNIT_ASSERT_NOT_NULL(test, child);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, forklab_mmput_action, child));
	return child;
}

/* The pmd entry covering @addr in @mm; NULL if no pmd table does. */
/*
 * Skip a row that plants a migration entry's young and dirty bits where
 * the swap offset has no room for them (migration_entry_supports_ad(),
 * decided at boot: UML no; x86_64 yes, its qemu64 CPU has no L1TF limit).
 */
void forklab_require_migration_ad(struct kunit *test)
{
	if (!migration_entry_supports_ad())
		kunit_skip(test, "this boot's swap offset has no room for migration A/D bits");
}

/*
 * Give the vma at @addr VM_UFFD_WP, as UFFDIO_REGISTER_MODE_WP would, with
 * no userfaultfd context: 6.12's dup_userfaultfd() leaves the flag on the
 * child's vma then (it resets only a context without EVENT_FORK), so
 * that parent and child are both registered, which a test's mm, with no
 * process to open a userfaultfd, could not be otherwise. 6.1's clears it
 * in the child: the test skips there.
 */
void forklab_register_uffd_wp(struct kunit *test, struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma;

	if (FORKLAB_LINUX_6_1)
		kunit_skip(test, "on 6.1 fork unregisters a child vma with no uffd context");

	mmap_write_lock(mm);
	vma = find_vma(mm, addr);
	if (vma && vma->vm_start <= addr)
		vm_flags_set(vma, VM_UFFD_WP);
	mmap_write_unlock(mm);
}

pmd_t *forklab_find_pmd(struct mm_struct *mm, unsigned long addr)
{
	pgd_t *pgd = pgd_offset(mm, addr);
	p4d_t *p4d;
	pud_t *pud;

	if (pgd_none(*pgd) || pgd_bad(*pgd))
		return NULL;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(*p4d) || p4d_bad(*p4d))
		return NULL;
	pud = pud_offset(p4d, addr);
	if (pud_none(*pud) || pud_bad(*pud))
		return NULL;
	return pmd_offset(pud, addr);
}

/*
 * The pte mapping @addr, mapped and locked, found by walking @mm's page
 * tables by hand (walk_page_range() skips VM_PFNMAP vmas, and those are
 * rows too); NULL if no page table covers @addr.
 */
pte_t *forklab_lock_pte(struct mm_struct *mm, unsigned long addr,
			spinlock_t **ptl)
{
	pmd_t *pmd = forklab_find_pmd(mm, addr), pmdval;

	if (!pmd)
		return NULL;
	pmdval = pmdp_get(pmd);
	if (pmd_none(pmdval) || pmd_leaf(pmdval))
		return NULL;
	return pte_offset_map_lock(mm, pmd, addr, ptl);
}

/* Replace the pte at @addr of @mm by @entry into @old; false: no pte. */
bool forklab_swap_pte(struct mm_struct *mm, unsigned long addr, pte_t entry,
		      pte_t *old)
{
	struct vm_area_struct *vma;
	spinlock_t *ptl;	/* the pte table's lock */
	pte_t *pte;

	mmap_write_lock(mm);
	vma = vma_lookup(mm, addr);
	pte = vma ? forklab_lock_pte(mm, addr, &ptl) : NULL;
	if (pte) {
		*old = ptep_get_and_clear(mm, addr, pte);
		set_pte_at(mm, addr, pte, entry);
		pte_unmap_unlock(pte, ptl);
		flush_tlb_page(vma, addr);
	}
	mmap_write_unlock(mm);
	return pte;
}

bool forklab_read_pte(struct mm_struct *mm, unsigned long addr, pte_t *entry)
{
	spinlock_t *ptl;	/* the pte table's lock */
	pte_t *pte = forklab_lock_pte(mm, addr, &ptl);

	if (!pte)
		return false;
	*entry = ptep_get(pte);
	pte_unmap_unlock(pte, ptl);
	return true;
}

struct pte_census forklab_take_census(struct mm_struct *mm, unsigned long addr)
{
	struct pte_census census = {};
	unsigned int i;
	pte_t entry;

	mmap_read_lock(mm);
	for (i = 0; i < FORK_PAGES; i++) {
		if (!forklab_read_pte(mm, addr + i * PAGE_SIZE, &entry) ||
		    !pte_present(entry))
			continue;
		census.present++;
		census.writable += !!pte_write(entry);
		census.dirty += !!pte_dirty(entry);
		census.young += !!pte_young(entry);
		census.soft_dirty += !!pte_soft_dirty(entry);
		if (!is_zero_pfn(pte_pfn(entry)) && pfn_valid(pte_pfn(entry))) {
			struct page *page = pfn_to_page(pte_pfn(entry));

			census.pages[i] = page;
			census.anon_exclusive += PageAnon(page) &&
						 PageAnonExclusive(page);
		}
	}
	mmap_read_unlock(mm);
	return census;
}

/*
 * The page-table pages of @mm, walked level by level over every pgd
 * entry below the user address space's end, in bytes as
 * mm_pgtables_bytes() counts them (VmPTE): a pte table per present pmd
 * entry, a pmd table per present pud entry and a pud table per present
 * p4d entry where those levels are not folded. (Above it, x86_64's pgd
 * holds the kernel's mappings, shared by every mm and not counted.)
 */
#ifdef TASK_SIZE_MAX
#define TASK_SIZE_OF_WALK	TASK_SIZE_MAX
#else
#define TASK_SIZE_OF_WALK	TASK_SIZE
#endif

static unsigned long walked_pgtables_bytes(struct mm_struct *mm)
{
	unsigned long bytes = 0, pgd_addr, pud_addr, pmd_addr;
	unsigned int i, j, k;
	pgd_t *pgd;
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd;

	for (i = 0; i < pgd_index(TASK_SIZE_OF_WALK - 1) + 1; i++) {
		pgd_addr = (unsigned long)i << PGDIR_SHIFT;
		pgd = pgd_offset(mm, pgd_addr);
		if (pgd_none(*pgd) || pgd_bad(*pgd))
			continue;
		p4d = p4d_offset(pgd, pgd_addr);
		if (p4d_none(*p4d) || p4d_bad(*p4d))
			continue;
#ifndef __PAGETABLE_PUD_FOLDED
		bytes += PTRS_PER_PUD * sizeof(pud_t);
#endif
		for (j = 0; j < PTRS_PER_PUD; j++) {
			pud_addr = pgd_addr + ((unsigned long)j << PUD_SHIFT);
			pud = pud_offset(p4d, pud_addr);
			if (pud_none(*pud) || pud_bad(*pud))
				continue;
#ifndef __PAGETABLE_PMD_FOLDED
			bytes += PTRS_PER_PMD * sizeof(pmd_t);
#endif
			for (k = 0; k < PTRS_PER_PMD; k++) {
				pmd_addr = pud_addr + ((unsigned long)k << PMD_SHIFT);
				pmd = pmd_offset(pud, pmd_addr);
				if (!pmd_none(*pmd) && !pmd_leaf(*pmd))
					bytes += PTRS_PER_PTE * sizeof(pte_t);
			}
		}
	}
	return bytes;
}

/*
 * The child's rss counters against its page tables, walked now: each
 * present pte of a normal page counts in its folio's counter
 * (mm_counter()), each swap or migration entry as zap_pte_range() will
 * uncount it when the mm goes. A pte that copy_present_ptes() or
 * copy_nonpresent_pte() forgot to count would otherwise show only at
 * exit, in check_mm()'s "Bad rss-counter state". And its pgtables_bytes
 * (VmPTE) against the page-table pages walked at every level.
 */
void forklab_expect_rss_counters(struct kunit *test, struct mm_struct *mm)
{
	static const char *const names[NR_MM_COUNTERS] = {
		[MM_FILEPAGES] = "MM_FILEPAGES", [MM_ANONPAGES] = "MM_ANONPAGES",
		[MM_SWAPENTS] = "MM_SWAPENTS", [MM_SHMEMPAGES] = "MM_SHMEMPAGES",
	};
	unsigned long walked[NR_MM_COUNTERS] = {}, addr;
	struct vm_area_struct *vma;
	struct page *page;
	swp_entry_t entry;
	struct vma_iterator vmi;
	pte_t pte;
	int i;

	vma_iter_init(&vmi, mm, 0);
	mmap_read_lock(mm);
	for_each_vma(vmi, vma) {
		for (addr = vma->vm_start; addr < vma->vm_end; addr += PAGE_SIZE) {
			if (!forklab_read_pte(mm, addr, &pte) || pte_none(pte))
				continue;
			if (pte_present(pte)) {
				page = vm_normal_page(vma, addr, pte);
				if (page)
					walked[forklab_mm_counter(page)]++;
				continue;
			}
			entry = pte_to_swp_entry(pte);
			if (!non_swap_entry(entry))
				walked[MM_SWAPENTS]++;
			else if (is_migration_entry(entry))
				walked[forklab_mm_counter(forklab_entry_page(entry))]++;
		}
	}
	for (i = 0; i < NR_MM_COUNTERS; i++)
		KUNIT_EXPECT_EQ_MSG(test, forklab_mm_counter_sum(mm, i), walked[i],
				    "the child's %s against its page tables",
				    names[i]);
	/* VmPTE: what dup_mmap()'s page-table allocations added up */
	KUNIT_EXPECT_EQ_MSG(test, mm_pgtables_bytes(mm), walked_pgtables_bytes(mm),
			    "the child's pgtables_bytes (VmPTE) against its page tables");
	mmap_read_unlock(mm);
}

/*
 * With both mms gone (@child NULL: already gone), so must be every
 * page-table page they allocated (@pagetables: NR_PAGETABLE before the
 * parent was built). NR_PAGETABLE
 * is exact only without per-CPU deltas (!SMP, as both guests are).
 */
void forklab_expect_torn_down(struct kunit *test, struct mm_struct *parent,
			      struct mm_struct *child, unsigned long pagetables)
{
	forklab_use_mm(NULL);
	if (child)
		kunit_release_action(test, forklab_mmput_action, child);
	kunit_release_action(test, forklab_mmput_action, parent);
	if (!IS_ENABLED(CONFIG_SMP))
		KUNIT_EXPECT_EQ_MSG(test,
				    global_node_page_state(NR_PAGETABLE), pagetables,
				    "page-table pages after both mms are gone");
}

/* Read the vma at @addr in @mm into @buf; return the minor faults taken. */
unsigned long forklab_read_vma_at(struct kunit *test, struct mm_struct *mm,
				  unsigned long addr, u8 *buf)
{
	unsigned long faults;

	forklab_use_mm(mm);
	faults = current->min_flt;
	KUNIT_ASSERT_EQ(test, 0UL,
			copy_from_user(buf, (void __user *)addr, FORK_SIZE));
	return current->min_flt - faults;
}

/* Write @len bytes of @seed's pattern at @addr of @mm, from @buf. */
void forklab_write_at(struct kunit *test, struct mm_struct *mm,
		      unsigned long addr, size_t len, u8 seed, u8 *buf)
{
	forklab_fill(buf, seed);
	forklab_use_mm(mm);
	KUNIT_ASSERT_EQ(test, 0UL, copy_to_user((void __user *)addr, buf, len));
}

void forklab_write_vma_at(struct kunit *test, struct mm_struct *mm,
			  unsigned long addr, u8 seed, u8 *buf)
{
	forklab_write_at(test, mm, addr, FORK_SIZE, seed, buf);
}

/*
 * A test-only "device": FORK_PAGES pages the test owns, which the file's
 * mmap() maps the way drivers do. The pages are freed after both mms.
 */
struct device_pages {
	struct page *pages;	/* order-2, physically contiguous */
	bool pfnmap;
	bool reserved;		/* PageReserved while mapped */
};

static int device_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct device_pages *dev = file->private_data;
	unsigned int i;
	int err;

	if (vma->vm_end - vma->vm_start != FORK_SIZE || vma->vm_pgoff)
		return -EINVAL;
	if (dev->pfnmap)
		return remap_pfn_range(vma, vma->vm_start,
				       page_to_pfn(dev->pages), FORK_SIZE,
				       vma->vm_page_prot);
	for (i = 0; i < FORK_PAGES; i++) {
		err = vm_insert_page(vma, vma->vm_start + i * PAGE_SIZE,
				     dev->pages + i);
		if (err)
			return err;
	}
	return 0;
}

static const struct file_operations device_fops = {
	.owner = THIS_MODULE,
	.mmap = device_mmap,
};

static void free_device_pages(void *data)
{
	struct device_pages *dev = data;
	unsigned int i;

	for (i = 0; i < FORK_PAGES; i++) {
		if (dev->reserved)
			ClearPageReserved(dev->pages + i);
		__free_page(dev->pages + i);
	}
}

static struct file *device_file(struct kunit *test, bool pfnmap,
				bool reserved)
{
	unsigned int i;
	struct device_pages *dev = kunit_kzalloc(test, sizeof(*dev), GFP_KERNEL);
	struct file *file;

	KUNIT_ASSERT_NOT_NULL(test, dev);
	dev->pfnmap = pfnmap;
	dev->pages = alloc_pages(GFP_KERNEL | __GFP_ZERO, get_order(FORK_SIZE));
	KUNIT_ASSERT_NOT_NULL(test, dev->pages);
	/* vm_insert_page() maps each page on its own: refcount each. */
	split_page(dev->pages, get_order(FORK_SIZE));
	dev->reserved = reserved;
	for (i = 0; reserved && i < FORK_PAGES; i++)
		SetPageReserved(dev->pages + i);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, free_device_pages, dev));
	file = anon_inode_getfile("forklab-device", &device_fops, dev, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, fput_action, file));
	return file;
}

/* A tmpfs file holding FILE_PATTERN, opened as the row maps it. */
struct file *forklab_row_file(struct kunit *test, const struct fork_case *row)
{
	struct file *file, *rdonly;
	u8 *buf;
	loff_t pos = 0;

	if (row->mapping == PRIVATE_ANON || row->mapping == SHARED_ANON)
		return NULL;
	if (forklab_is_device(row))
		return device_file(test, row->mapping == PFNMAP_DEVICE,
				   row->mapping == RESERVED_MIXEDMAP_DEVICE);
	file = shmem_file_setup("forklab-fork", FORK_SIZE, VM_NORESERVE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, fput_action, file));
	buf = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	forklab_fill(buf, FILE_PATTERN);
	KUNIT_ASSERT_EQ(test, (ssize_t)FORK_SIZE,
			kernel_write(file, buf, FORK_SIZE, &pos));
	if (row->mapping != SHARED_FILE_RDONLY)
		return file;
	rdonly = dentry_open(&file->f_path, O_RDONLY, current_cred());
	KUNIT_ASSERT_FALSE(test, IS_ERR(rdonly));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, fput_action, rdonly));
	return rdonly;
}

static unsigned long row_flags(const struct fork_case *row)
{
	switch (row->mapping) {
	case PRIVATE_ANON:
		return MAP_PRIVATE | MAP_ANONYMOUS;
	case SHARED_ANON:
		return MAP_SHARED | MAP_ANONYMOUS;
	case PRIVATE_FILE:
	case PRIVATE_MIXEDMAP_DEVICE:
		return MAP_PRIVATE;
	default:
		return MAP_SHARED;
	}
}

/* FOLL_PIN the first page, as O_DIRECT or RDMA would; unpinned at the end. */
static void pin_first_page(struct kunit *test, struct mm_struct *mm,
			   unsigned long addr)
{
	struct page *page;
	long pinned;

	mmap_read_lock(mm);
	pinned = forklab_pin_user_page_remote(mm, addr, FOLL_WRITE, &page);
	mmap_read_unlock(mm);
	KUNIT_ASSERT_EQ(test, pinned, 1L);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, unpin_action, page));
	KUNIT_ASSERT_TRUE(test, test_bit(MMF_HAS_PINNED, &mm->flags));
}

#ifndef CONFIG_ARCH_HAS_SYSCALL_WRAPPER
/* Map file page FORK_PAGES-1-i at page i, with the syscall itself. */
static void remap_reversed(struct kunit *test, unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < FORK_PAGES; i++)
		KUNIT_ASSERT_EQ(test, 0L,
				sys_remap_file_pages(addr + i * PAGE_SIZE, PAGE_SIZE,
						     0, FORK_PAGES - 1 - i, 0));
}
#elif defined(CONFIG_X86_64)
/* x86_64's syscalls take their arguments in a pt_regs, as the entry code left them. */
long __x64_sys_remap_file_pages(const struct pt_regs *regs);

static void remap_reversed(struct kunit *test, unsigned long addr)
{
	struct pt_regs regs = { .si = PAGE_SIZE };
	unsigned int i;

	for (i = 0; i < FORK_PAGES; i++) {
		regs.di = addr + i * PAGE_SIZE;
		regs.r10 = FORK_PAGES - 1 - i;
		KUNIT_ASSERT_EQ(test, 0L, __x64_sys_remap_file_pages(&regs));
	}
}
#else
static void remap_reversed(struct kunit *test, unsigned long addr)
{
	KUNIT_FAIL(test, "remap_file_pages rows need a direct sys_ call");
}
#endif

/* Map @row's vma at @addr of @mm and access it as the row says. */
void forklab_map_row(struct kunit *test, struct mm_struct *mm,
		     const struct fork_case *row, struct file *file,
		     unsigned long addr, u8 *buf)
{
	unsigned long mapped;
	int poked;

	forklab_use_mm(mm);
	mapped = vm_mmap(file, addr, FORK_SIZE, row->prot,
			 row_flags(row) | MAP_FIXED_NOREPLACE, 0);
	KUNIT_ASSERT_EQ(test, mapped, addr);
	if (row->advice)
		KUNIT_ASSERT_EQ(test, 0,
				do_madvise(mm, addr, FORK_SIZE, row->advice));
	if (row->remap_reversed)
		remap_reversed(test, addr);
	if (row->access == WRITES) {
		forklab_write_vma_at(test, mm, addr, PARENT_PATTERN, buf);
	} else if (row->access == WRITES_HALF) {
		forklab_write_at(test, mm, addr, FORK_SIZE / 2, PARENT_PATTERN, buf);
	} else if (row->access == READS) {
		forklab_read_vma_at(test, mm, addr, buf);
	} else if (row->access == POKES) {
		forklab_fill(buf, PARENT_PATTERN);
		forklab_use_mm(NULL);
		poked = access_remote_vm(mm, addr, buf, FORK_SIZE,
					 FOLL_WRITE | FOLL_FORCE);
		/* cda540ace6a1: no COW inside a shared mapping, forced or not */
		KUNIT_ASSERT_EQ(test, poked, forklab_is_shared(row) ? 0 : (int)FORK_SIZE);
	}
	if (row->pin)
		pin_first_page(test, mm, addr);
}

/* The parent: one vma as the row describes, accessed as it says. */
struct mm_struct *forklab_build_parent(struct kunit *test,
				       const struct fork_case *row, u8 *buf)
{
	/* The file first: its pages must outlive the mm that maps them. */
	struct file *file = forklab_row_file(test, row);
	struct mm_struct *mm = forklab_new_mm(test);

	forklab_map_row(test, mm, row, file, FORK_ADDR, buf);
	return mm;
}

MODULE_DESCRIPTION("Helpers of forklab's KUnit tests of fork()");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
