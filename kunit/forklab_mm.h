/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What forklab's fork suites share (forklab_mm.c): a parent mm built the
 * way a process's is, one vma per row of struct fork_case, forked with
 * dup_mm(); the pte walks and the byte patterns every suite checks a
 * child with.
 *
 * The test thread is the "process": it runs on the parent's mm to write or
 * read, switches to the child's mm to read or write there (kthread_use_mm),
 * and its min_flt counts the faults either takes.
 *
 * Each row maps one vma of FORK_PAGES pages at FORK_ADDR, aligned to the
 * default fault-around window, so that the default figure is one fault for
 * a vma whose pages are all in the page cache:
 *
 *   FORK_ADDR (64 KiB aligned)
 *   |<-- FORK_PAGES pages: the row's vma -->|<-- rest of the window -->|
 */
#ifndef FORKLAB_MM_H
#define FORKLAB_MM_H

#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/mman.h>

#include "forklab_compat.h"

#define FORK_ADDR	0x10000000UL
#define FORK_PAGES	4
#define FORK_SIZE	(FORK_PAGES * PAGE_SIZE)

enum fork_mapping {
	PRIVATE_ANON,		/* MAP_PRIVATE | MAP_ANONYMOUS */
	SHARED_ANON,		/* MAP_SHARED | MAP_ANONYMOUS: shmem */
	SHARED_FILE,		/* MAP_SHARED of a tmpfs file opened O_RDWR */
	SHARED_FILE_RDONLY,	/* MAP_SHARED of it opened O_RDONLY */
	PRIVATE_FILE,		/* MAP_PRIVATE of a tmpfs file */
	PFNMAP_DEVICE,		/* a driver's mmap(): remap_pfn_range() */
	MIXEDMAP_DEVICE,	/* a driver's mmap(): vm_insert_page() */
	PRIVATE_MIXEDMAP_DEVICE,	/* the same, MAP_PRIVATE: a COW mapping */
	RESERVED_MIXEDMAP_DEVICE,	/* vm_insert_page() of PageReserved pages */
};

/*
 * POKES: the parent's bytes arrive by a FOLL_FORCE write, the path
 * PTRACE_POKEDATA and /proc/PID/mem take (access_remote_vm()).
 */
enum parent_access { NO_ACCESS, READS, WRITES, WRITES_HALF, POKES };
enum fork_outcome { COPIED, SKIPPED, ABSENT };
enum child_view {
	PARENT_BYTES, FILE_BYTES, ZEROES,
	PARENT_THEN_ZEROES,	/* the first half the parent's, the rest zeros */
};

struct fork_case {
	const char *desc;
	enum fork_mapping mapping;
	unsigned long prot;
	enum parent_access access;	/* what the parent did before fork */
	int advice;			/* madvise() before fork, or 0 */
	enum fork_outcome outcome;
	enum child_view child_reads;
	unsigned int default_faults;	/* reading the vma, default fault-around */
	bool pin;			/* FOLL_PIN the first page before fork */
	bool remap_reversed;		/* remap_file_pages(): page i = file page N-1-i */
};

#define RW	(PROT_READ | PROT_WRITE)

/*
 * forklab_fork's rows (fork_test.c), which forklab_fork_fault_injection
 * maps all at once. remap_file_pages() takes a direct call of its
 * syscall, which only some arches give a test (forklab_mm.c).
 */
#if !defined(CONFIG_ARCH_HAS_SYSCALL_WRAPPER) || defined(CONFIG_X86_64)
#define FORK_REMAP_FILE_PAGES	1
#else
#define FORK_REMAP_FILE_PAGES	0
#endif
/* checked against the table where it is defined */
#define NR_FORK_CASES	(17 + FORK_REMAP_FILE_PAGES)

extern const struct fork_case forklab_fork_cases[];

/* Distinct bytes for each writer, so that a mix-up names its source. */
enum pattern { FILE_PATTERN = 0x11, PARENT_PATTERN = 0x5a,
	       CHILD_PATTERN = 0xc3, PARENT_PATTERN_2 = 0x3c };

/*
 * What the page tables of one row's vma, [addr, +FORK_SIZE), hold: the
 * present ptes, how many carry each bit fork may change, and their pages.
 * soft_dirty stays 0 without CONFIG_MEM_SOFT_DIRTY (UML has none).
 */
struct pte_census {
	unsigned int present;
	unsigned int writable;
	unsigned int dirty, young, soft_dirty;
	unsigned int anon_exclusive;	/* anon pages with PageAnonExclusive */
	struct page *pages[FORK_PAGES];	/* NULL: none, or the zero page */
};

/* The cleanup action of every mm a suite makes: kunit_release_action() */
void forklab_mmput_action(void *mm);

void forklab_fill(u8 *buf, u8 seed);
void forklab_use_mm(struct mm_struct *mm);
struct mm_struct *forklab_new_mm(struct kunit *test);
struct mm_struct *forklab_fork_mm(struct kunit *test, struct mm_struct *parent);
void forklab_require_migration_ad(struct kunit *test);
void forklab_register_uffd_wp(struct kunit *test, struct mm_struct *mm, unsigned long addr);

pmd_t *forklab_find_pmd(struct mm_struct *mm, unsigned long addr);
pte_t *forklab_lock_pte(struct mm_struct *mm,
			unsigned long addr, spinlock_t **ptl);
bool forklab_read_pte(struct mm_struct *mm, unsigned long addr, pte_t *entry);
bool forklab_swap_pte(struct mm_struct *mm, unsigned long addr, pte_t entry,
		      pte_t *old);
struct pte_census forklab_take_census(struct mm_struct *mm, unsigned long addr);
void forklab_expect_rss_counters(struct kunit *test, struct mm_struct *mm);
void forklab_expect_torn_down(struct kunit *test, struct mm_struct *parent,
			      struct mm_struct *child, unsigned long pagetables);

unsigned long forklab_read_vma_at(struct kunit *test, struct mm_struct *mm,
				  unsigned long addr, u8 *buf);
void forklab_write_at(struct kunit *test, struct mm_struct *mm,
		      unsigned long addr, size_t len, u8 seed, u8 *buf);
void forklab_write_vma_at(struct kunit *test, struct mm_struct *mm,
			  unsigned long addr, u8 seed, u8 *buf);

struct file *forklab_row_file(struct kunit *test, const struct fork_case *row);
void forklab_map_row(struct kunit *test, struct mm_struct *mm,
		     const struct fork_case *row, struct file *file,
		     unsigned long addr, u8 *buf);
struct mm_struct *forklab_build_parent(struct kunit *test,
				       const struct fork_case *row, u8 *buf);

static inline bool forklab_is_device(const struct fork_case *row)
{
	return row->mapping == PFNMAP_DEVICE || row->mapping == MIXEDMAP_DEVICE ||
	       row->mapping == PRIVATE_MIXEDMAP_DEVICE ||
	       row->mapping == RESERVED_MIXEDMAP_DEVICE;
}

/* Writes of either side show to the other. */
static inline bool forklab_is_shared(const struct fork_case *row)
{
	return row->mapping != PRIVATE_ANON && row->mapping != PRIVATE_FILE &&
	       row->mapping != PRIVATE_MIXEDMAP_DEVICE;
}

#endif /* FORKLAB_MM_H */
