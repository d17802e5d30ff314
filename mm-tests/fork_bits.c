// SPDX-License-Identifier: GPL-2.0
/*
 * fork_bits: the bits of each entry fork copies, per entry kind and per
 * side, where user space can read them. __copy_present_ptes() ages the
 * child's copy of every present pte (pte_mkold) and leaves the parent's
 * as it was; the soft-dirty bit goes with a pte or a swap entry into the
 * child (copy_nonpresent_pte() copies the swap pte as it is); and a page
 * the child's pte shares is mapped by neither side alone until the child
 * is gone. The write bit is every COW row's (fork_mappings, forktest,
 * forklab_fork), uffd-wp uffd_wp_fork's and fork_huge's; the dirty bit of
 * a shared mapping's copy (pte_mkclean), which no interface shows apart
 * from the folio's, KUnit's forklab_fork reads in the ptes, with each
 * side's young, soft-dirty and PageAnonExclusive (docs/fork-bits.md).
 *
 *   row                               read in          a wrong kernel
 *   1 young, present anon             smaps Referenced the child's copies young
 *                                                      (pte_mkold dropped), or
 *                                                      the parent's aged
 *   2 soft-dirty, present anon        pagemap bit 55   the child's copies lose
 *                                                      (or all gain) the bit
 *   3 soft-dirty, swap entry          pagemap bit 55   the child's swap entries
 *                                                      lose it
 *   4 exclusive, present anon         pagemap bit 56   a side still mapping the
 *                                                      page alone (mapcount 1)
 *                                                      while both map it, or the
 *                                                      parent not alone again
 *                                                      after the child exits
 *   5 soft-dirty, the ptes of one     pagemap bit 55   the batch copy
 *     large folio (x86_64: a THP                       (folio_pte_batch()) spans
 *     mapped by ptes)                                  ptes whose bits differ
 *                                                      and gives every copy the
 *                                                      first one's
 *
 * Pagemap's exclusive bit is the page's mapcount (mapped by one process),
 * not PageAnonExclusive, which fork clears on the parent's page: that one
 * the COW rows see (fork_mappings, cow.c), and KUnit's fork_entries for
 * swap and migration entries.
 *
 * Each row: PAGES pages written by the parent; for soft-dirty the bits
 * cleared (clear_refs 4) and pages 0-3 and 8-11 written again, so that a
 * copy that kept none, or set all, reads wrong. The child reads its own
 * view before it touches the pages and sends it to the parent.
 * Soft-dirty needs CONFIG_MEM_SOFT_DIRTY: x86_64 has it, UML cannot
 * (no HAVE_ARCH_SOFT_DIRTY); those rows skip there.
 */
#include <sys/mman.h>

#include "forklab.h"

#define PAGES		16

/* What one side reads of the region. */
struct view {
	long long referenced_kb;	/* smaps Referenced */
	uint64_t soft_dirty;		/* a bit per page: pagemap bit 55 */
	uint64_t present, swapped, exclusive;
};

static uint64_t pagemap_bits(const char *p, uint64_t bit)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t bits = 0;
	int i;

	if (fd < 0)
		ksft_exit_fail_msg("open /proc/self/pagemap: %s\n", strerror(errno));
	for (i = 0; i < PAGES; i++)
		if (pagemap_get_entry(fd, (char *)p + i * page_size()) & bit)
			bits |= 1ULL << i;
	close(fd);
	return bits;
}

/* The smaps field @name (kB) of the vma holding @p, in this process. */
static long long smaps_kb(const char *p, const char *name)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long start, end;
	bool inside = false;
	long long kb = -1;
	char line[256];

	if (!f)
		ksft_exit_fail_msg("open /proc/self/smaps: %s\n", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			inside = (unsigned long)p >= start && (unsigned long)p < end;
			continue;
		}
		if (inside && !strncmp(line, name, strlen(name)) && line[strlen(name)] == ':') {
			kb = strtoll(line + strlen(name) + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

static struct view read_view(const char *p)
{
	struct view v = {
		.referenced_kb = smaps_kb(p, "Referenced"),
		.soft_dirty = pagemap_bits(p, PM_SOFT_DIRTY),
		.present = pagemap_bits(p, PM_PRESENT),
		.swapped = pagemap_bits(p, PM_SWAP),
		.exclusive = pagemap_bits(p, PM_MMAP_EXCLUSIVE),
	};

	return v;
}

/*
 * Fork; the child reads its view of @p at once and sends it, then waits
 * for a word to exit. The parent gets the child's view in @child, its
 * own (read while the child lives) in @parent, and, once the child is
 * gone, its own again in @after.
 */
static void fork_and_read(const char *p, struct view *parent, struct view *child,
			  struct view *after)
{
	struct lockstep ls;
	pid_t pid;

	lockstep_init(&ls);
	pid = fork_or_fail();
	if (pid == 0) {
		struct view v = read_view(p);

		if (write(ls.to_parent[1], &v, sizeof(v)) != sizeof(v))
			_exit(3);
		hear(ls.to_child[0]);
		_exit(0);
	}
	if (!read_report(ls.to_parent[0], child, sizeof(*child)))
		ksft_exit_fail_msg("the child sent no view\n");
	*parent = read_view(p);
	say(ls.to_child[1]);
	if (wait_child(pid))
		ksft_exit_fail_msg("the child failed\n");
	*after = read_view(p);
}

static char *map_written(void)
{
	char *p = mmap(NULL, PAGES * page_size(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i;

	/* A vma of its own: smaps' Referenced is per vma. */
	if (p == MAP_FAILED || madvise(p, PAGES * page_size(), MADV_RANDOM))
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	for (i = 0; i < PAGES; i++)
		p[i * page_size()] = i + 1;
	return p;
}

#define ALL_PAGES	((1ULL << PAGES) - 1)
/*
 * The pages written after clear_refs: runs of four, so that fork copies
 * runs of ptes with one bit together where it batches (a large folio),
 * and a bit that changes ends a run.
 */
#define REWRITTEN_PAGES	(0x0f0f0f0f0f0f0f0fULL & ALL_PAGES)

/*
 * Clear the soft-dirty bits (clear_refs 4) and write REWRITTEN_PAGES
 * again. True when exactly those pages read soft-dirty; otherwise the
 * row ends here: skipped where the kernel keeps no soft-dirty bits
 * (none reads set), failed where they read wrong before any fork.
 */
static bool soft_dirty_even(const char *name, char *p)
{
	uint64_t bits;
	int i;

	write_file("/proc/self/clear_refs", "4");
	for (i = 0; i < PAGES; i++)
		if (REWRITTEN_PAGES & (1ULL << i))
			p[i * page_size()] = i + 2;
	bits = pagemap_bits(p, PM_SOFT_DIRTY);
	if (bits == REWRITTEN_PAGES)
		return true;
	if (!bits) {
		skip_named(name, "no soft-dirty bits (CONFIG_MEM_SOFT_DIRTY): UML has none");
		return false;
	}
	ksft_print_msg("%s: soft-dirty %#llx before fork, want %#llx\n", name,
		       (unsigned long long)bits, REWRITTEN_PAGES);
	ksft_test_result_fail("%s\n", name);
	return false;
}

/* 1: the child's copies are old, the parent's ptes stay young. */
static bool young_as_copied(const char *name, const char *what, int prot)
{
	long long size_kb = PAGES * page_size() / 1024;
	struct view parent, child, after;
	char *p = map_written();
	bool ok;

	if (mprotect(p, PAGES * page_size(), prot))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	fork_and_read(p, &parent, &child, &after);
	ok = child.present == ALL_PAGES && child.referenced_kb == 0 &&
	     parent.referenced_kb == size_kb;
	if (!ok)
		ksft_print_msg("%s: %s: child %#llx present, Referenced %lld kB; parent %lld kB, want 0 and %lld\n",
			       name, what, (unsigned long long)child.present,
			       child.referenced_kb, parent.referenced_kb, size_kb);
	munmap(p, PAGES * page_size());
	return ok;
}

/*
 * 1: writable ptes (write-protected on both sides at fork) and read-only
 * ones: pte_mkold() is for every copy, not only the COW one.
 */
static void young_present(void)
{
	const char *name = "young: the child's copied ptes are old, the parent's stay young";
	bool writable, read_only;

	row_begin("%s", name);
	writable = young_as_copied(name, "writable", PROT_READ | PROT_WRITE);
	read_only = young_as_copied(name, "read-only", PROT_READ);
	ksft_test_result(writable && read_only, "%s\n", name);
}

/*
 * Fork; the pages REWRITTEN_PAGES names must be soft-dirty in the
 * child as in the parent.
 */
static void fork_and_check_soft_dirty(const char *name, const char *p)
{
	struct view parent, child, after;

	fork_and_read(p, &parent, &child, &after);
	if (child.present != ALL_PAGES || child.soft_dirty != REWRITTEN_PAGES ||
	    parent.soft_dirty != REWRITTEN_PAGES)
		ksft_print_msg("%s: soft-dirty child %#llx, parent %#llx, want %#llx (child present %#llx)\n",
			       name, (unsigned long long)child.soft_dirty,
			       (unsigned long long)parent.soft_dirty, REWRITTEN_PAGES,
			       (unsigned long long)child.present);
	ksft_test_result(child.present == ALL_PAGES && child.soft_dirty == REWRITTEN_PAGES &&
			 parent.soft_dirty == REWRITTEN_PAGES, "%s\n", name);
}

/* 2: soft-dirty goes with each present pte into the child. */
static void soft_dirty_present(void)
{
	const char *name = "soft-dirty: present ptes keep their bit in the child and the parent";
	char *p = map_written();

	row_begin("%s", name);
	if (!soft_dirty_even(name, p)) {
		munmap(p, PAGES * page_size());
		return;
	}
	fork_and_check_soft_dirty(name, p);
	munmap(p, PAGES * page_size());
}

/* 3: soft-dirty goes with each swap entry into the child. */
static void soft_dirty_swap(void)
{
	const char *name = "soft-dirty: swap entries keep their bit in the child";
	struct view parent, child, after;
	char *p = map_written();
	uint64_t swapped;
	bool ok;

	row_begin("%s", name);
	if (!soft_dirty_even(name, p)) {
		munmap(p, PAGES * page_size());
		return;
	}
	if (madvise(p, PAGES * page_size(), MADV_PAGEOUT))
		ksft_exit_fail_msg("madvise(MADV_PAGEOUT): %s\n", strerror(errno));
	swapped = pagemap_bits(p, PM_SWAP);
	if (!swapped) {
		skip_named(name, "MADV_PAGEOUT swapped no page out");
		munmap(p, PAGES * page_size());
		return;
	}
	/*
	 * A swap entry with the bit and one without: else a copy that
	 * cleared or set every bit could read right.
	 */
	if (!(swapped & REWRITTEN_PAGES) || !(swapped & ~REWRITTEN_PAGES)) {
		skip_named(name, "MADV_PAGEOUT swapped out too few pages");
		munmap(p, PAGES * page_size());
		return;
	}
	fork_and_read(p, &parent, &child, &after);
	/*
	 * Each page swapped on both sides keeps the bit it had, in the
	 * child and in the parent (whose entry fork rewrites: it is no
	 * longer exclusive).
	 */
	swapped &= child.swapped & parent.swapped;
	ok = (swapped & REWRITTEN_PAGES) && (swapped & ~REWRITTEN_PAGES) &&
	     (child.soft_dirty & swapped) == (REWRITTEN_PAGES & swapped) &&
	     (parent.soft_dirty & swapped) == (REWRITTEN_PAGES & swapped);
	if (!ok)
		ksft_print_msg("%s: of swap entries %#llx soft-dirty: the child's %#llx, the parent's %#llx, want %#llx\n",
			       name, (unsigned long long)swapped,
			       (unsigned long long)(child.soft_dirty & swapped),
			       (unsigned long long)(parent.soft_dirty & swapped),
			       REWRITTEN_PAGES & swapped);
	ksft_test_result(ok, "%s\n", name);
	munmap(p, PAGES * page_size());
}

/*
 * 5: soft-dirty over the ptes of one large folio. A PMD-aligned THP
 * (MADV_HUGEPAGE), its pmd split to ptes by mprotect() of its last
 * page: fork copies the ptes of the folio in batches (folio_pte_batch(),
 * 6.9), one set_ptes() of the batch's first pte for all. With soft-dirty
 * tracked (clear_refs 4 took VM_SOFTDIRTY off the vma) a batch must end
 * where the bit changes (no FPB_IGNORE_SOFT_DIRTY); runs of four pages
 * rewritten, each child pte must have its own page's bit.
 */
static void soft_dirty_batch(void)
{
	const char *name = "soft-dirty: the ptes of one large folio keep their bit each";
	size_t ps = page_size(), huge = 0;
	char *area, *p;
	int i;

	row_begin("%s", name);
	/* 6.1's read_pmd_pagesize() fails the test where the file is not. */
	if (access("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", R_OK) == 0)
		huge = read_pmd_pagesize();
	if (!huge) {
		skip_named(name, "no THP (CONFIG_TRANSPARENT_HUGEPAGE): UML has none");
		return;
	}
	area = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	p = (char *)(((uintptr_t)area + huge - 1) & ~(huge - 1));
	if (madvise(p, huge, MADV_HUGEPAGE))
		ksft_exit_fail_msg("MADV_HUGEPAGE: %s\n", strerror(errno));
	p[0] = 1;
	if (!check_huge_anon(p, 1, huge)) {
		skip_named(name, "no THP at the fault (transparent_hugepage settings)");
		munmap(area, 2 * huge);
		return;
	}
	/*
	 * khugepaged first: MADV_HUGEPAGE woke it for this mm, and once the
	 * pmd is split it may collapse the range into a new THP mapped by a
	 * pmd (soft-dirty as a whole, one pmd to fork). Then split the pmd,
	 * not the folio: mprotect() of the last page maps the THP by ptes,
	 * every page still mapped. Zapping one instead (MADV_DONTNEED) would
	 * queue the folio as partially mapped, for the deferred split
	 * shrinker that any reclaim runs to split.
	 */
	if (madvise(p, huge, MADV_NOHUGEPAGE) ||
	    mprotect(p + huge - ps, ps, PROT_READ))
		ksft_exit_fail_msg("madvise/mprotect: %s\n", strerror(errno));
	for (i = 0; i < PAGES; i++)
		p[i * ps] = i + 1;
	if (!soft_dirty_even(name, p)) {
		munmap(area, 2 * huge);
		return;
	}
	/*
	 * Still one folio mapped by ptes: no pmd, its consecutive pages,
	 * each a THP's (a folio split would keep the pfns).
	 */
	if (smaps_kb(p, "AnonHugePages") > 0)
		ksft_exit_fail_msg("%s: the THP is mapped by a pmd again\n", name);
	for (i = 0; i < PAGES; i++)
		if (page_pfn(p + i * ps) != page_pfn(p) + i || !page_in_thp(p + i * ps))
			ksft_exit_fail_msg("%s: page %d is not the THP's\n", name, i);
	fork_and_check_soft_dirty(name, p);
	munmap(area, 2 * huge);
}

/* 4: pages both map are exclusive to neither; the parent's once alone. */
static void exclusive_present(void)
{
	const char *name = "exclusive: a page both sides map is exclusive to neither, the parent's again after";
	struct view parent, child, after;
	char *p = map_written();

	row_begin("%s", name);
	fork_and_read(p, &parent, &child, &after);
	if (child.present != ALL_PAGES || child.exclusive || parent.exclusive ||
	    after.exclusive != ALL_PAGES)
		ksft_print_msg("%s: exclusive child %#llx, parent %#llx, parent after %#llx\n",
			       name, (unsigned long long)child.exclusive,
			       (unsigned long long)parent.exclusive,
			       (unsigned long long)after.exclusive);
	ksft_test_result(child.present == ALL_PAGES && !child.exclusive && !parent.exclusive &&
			 after.exclusive == ALL_PAGES, "%s\n", name);
	munmap(p, PAGES * page_size());
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(5);
	young_present();
	soft_dirty_present();
	soft_dirty_swap();
	exclusive_present();
	soft_dirty_batch();
	ksft_finished();
}
