// SPDX-License-Identifier: GPL-2.0
/*
 * fork_huge: fork over huge mappings, THP and hugetlb (the x86_64 target:
 * UML has neither).
 *
 * fork copies a PMD-mapped THP as one pmd (copy_huge_pmd()) and hugetlb
 * as huge ptes (copy_hugetlb_page_range()); both write-protect the
 * parent's entry too, so that either side's first write breaks COW, and
 * both must not share a pinned page: the child gets its own copy at fork
 * (70e806e4e645 for THP, split and copied by ptes; 4eae4efa2c29 for
 * hugetlb, which with no free huge page fails the fork with -ENOMEM
 * rather than share). Shared hugetlb and shmem THP vmas are skipped like
 * any shared vma since bcd51a3c679d (6.0); private hugetlb with pages has
 * an anon_vma and is copied.
 *
 * Each row maps MAP_SIZE bytes at a PMD-aligned address, writes a pattern,
 * forks, and has the child report what it sees before it touches anything
 * (the pfn of the first page, how many pages are present, whether the
 * range is still one huge mapping) and then what it reads after the parent
 * wrote (private rows) or what the parent reads after the child wrote
 * (shared rows).
 *
 * The uffd-wp rows (hugetlb_wp_cases) check the one bit fork copies or
 * drops by the child's vma: a private hugetlb page or THP write-protected
 * for uffd, forked with and without UFFD_FEATURE_EVENT_FORK, pinned and
 * not (hugetlb).
 *
 *   0          2M         4M
 *   |----------|----------|    MAP_SIZE: two PMDs (two 2 MiB hugetlb
 *   ^ aligned                  pages, or two THPs)
 */
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>

#include "forklab.h"

#define PMD_SIZE	(2UL << 20)
#define MAP_SIZE	(2 * PMD_SIZE)
#define PATTERN		0x5a
#define PARENT_WRITE	0xa5
#define CHILD_WRITE	0xc3
#define SHMEM_ENABLED	"/sys/kernel/mm/transparent_hugepage/shmem_enabled"

enum kind { THP, THP_PTE_MAPPED, THP_ZERO, SHMEM_THP, HUGETLB_SHARED,
	    HUGETLB_PRIVATE };

struct child_report {
	unsigned long pfn;	/* of the first page, before any access */
	size_t present;		/* pages present right after fork */
	long long hugetlb_kb;	/* HugetlbPages, right after fork */
	bool huge;		/* each PMD still one huge mapping */
	long bad_page;		/* first page not as expected, -1: none */
};

/*
 * What the parent saw: its pfn of the first page before fork and after its
 * write, and, for shared rows, whether it reads the child's write.
 */
struct parent_view {
	unsigned long pfn_before, pfn_after;
	long bad_page;
};

struct huge_case {
	const char *desc;
	enum kind kind;
	bool pin;		/* io_uring pins the range before fork */
	bool read_only;		/* the parent only reads it before fork */
	bool child_first;	/* the child writes first, the parent reads */
};

static const struct huge_case huge_cases[] = {
	/*
	 * A PMD-mapped THP: copied as one pmd, the page shared and the pmd
	 * write-protected in both. If copy_huge_pmd() forgot the parent's
	 * write-protect, the parent's write after fork would land in the
	 * page the child maps, and the child would read PARENT_WRITE.
	 */
	{ .desc = "THP: one pmd copied, COW after fork", .kind = THP },
	/*
	 * The same, the child writing first: if copy_huge_pmd() left the
	 * child's pmd writable, its write would land in the page the parent
	 * maps, and the parent would read CHILD_WRITE.
	 */
	{ .desc = "THP: child writes first, parent keeps its bytes",
	  .kind = THP, .child_first = true },
	/*
	 * A pinned THP: folio_try_dup_anon_rmap_pmd() refuses, the pmd is
	 * split and the ptes are copied, the pinned pages early (each a new
	 * page for the child). Shared instead, the parent's write would COW
	 * the parent away from the page I/O still writes into.
	 */
	{ .desc = "THP pinned: child gets a copy, parent keeps the pinned page",
	  .kind = THP, .pin = true },
	/*
	 * A THP mapped by ptes (an mprotect() of one page split the pmd, the
	 * folio stays large): copy_present_ptes() copies runs of it in one
	 * batch (folio_pte_batch()), write-protecting the whole run in the
	 * parent too; a batch that forgot part of the run would leave the
	 * parent's write visible to the child there.
	 */
	{ .desc = "THP mapped by ptes: batch-copied, COW after fork",
	  .kind = THP_PTE_MAPPED },
	/*
	 * Read only: the huge zero page, copied as a pmd with a reference
	 * (mm_get_huge_zero_folio()); the child reads zeros.
	 */
	{ .desc = "THP huge zero page: copied as a pmd", .kind = THP_ZERO,
	  .read_only = true },
	/*
	 * shmem THP, MAP_SHARED: skipped (the child faults it back in), and
	 * the child's write is the parent's.
	 */
	{ .desc = "shmem THP MAP_SHARED: skipped, writes shared",
	  .kind = SHMEM_THP },
	/*
	 * hugetlb MAP_SHARED: skipped since bcd51a3c679d; a copy that missed
	 * the shared page (a private one in the child) would hide the
	 * child's write from the parent.
	 */
	{ .desc = "hugetlb MAP_SHARED: skipped, writes shared",
	  .kind = HUGETLB_SHARED },
	/*
	 * hugetlb MAP_PRIVATE, written: copied, write-protected in both
	 * (copy_hugetlb_page_range()). Without the parent's write-protect the
	 * child would read the parent's later write.
	 */
	{ .desc = "hugetlb MAP_PRIVATE written: copied, COW after fork",
	  .kind = HUGETLB_PRIVATE },
	/*
	 * The child writing first: without the child's write-protect
	 * (huge_pte_wrprotect() of the copied entry) the child's write goes
	 * into the parent's page.
	 */
	{ .desc = "hugetlb MAP_PRIVATE: child writes first, parent keeps its bytes",
	  .kind = HUGETLB_PRIVATE, .child_first = true },
	/*
	 * hugetlb MAP_PRIVATE, pinned: the child gets its own huge page at
	 * fork (copy_hugetlb_page_range()'s early COW).
	 */
	{ .desc = "hugetlb MAP_PRIVATE pinned: child gets a copy at fork",
	  .kind = HUGETLB_PRIVATE, .pin = true },
};

static bool is_shared(const struct huge_case *row)
{
	return row->kind == SHMEM_THP || row->kind == HUGETLB_SHARED;
}

static bool is_hugetlb(const struct huge_case *row)
{
	return row->kind == HUGETLB_SHARED || row->kind == HUGETLB_PRIVATE;
}

/* Each PMD of @p (MAP_SIZE) is one huge mapping, in this process. */
static bool is_huge(const struct huge_case *row, void *p)
{
	switch (row->kind) {
	case THP:
	case THP_PTE_MAPPED:
		/* AnonHugePages counts PMD mappings only, of the whole vma. */
		return check_huge_anon(p, MAP_SIZE / PMD_SIZE, PMD_SIZE);
	case THP_ZERO:
		/*
		 * The huge zero page is not AnonHugePages: pagemap tells, by
		 * consecutive pfns (4 KiB zero-page ptes all map one pfn).
		 */
		return present_pages(p, MAP_SIZE) == MAP_SIZE / page_size() &&
		       page_pfn(p + page_size()) == page_pfn(p) + 1;
	case SHMEM_THP:
		return check_huge_shmem(p, MAP_SIZE / PMD_SIZE, PMD_SIZE);
	default:
		return true;
	}
}

/* MAP_SIZE bytes at a PMD-aligned address, of @row's kind; NULL: skip. */
static uint8_t *map_row(const struct huge_case *row, const char **why)
{
	int flags = is_shared(row) ? MAP_SHARED : MAP_PRIVATE;
	uint8_t *area, *p;

	flags |= MAP_ANONYMOUS;
	if (is_hugetlb(row)) {
		p = mmap(NULL, MAP_SIZE, PROT_READ | PROT_WRITE,
			 flags | MAP_HUGETLB, -1, 0);
		*why = "no free 2 MiB hugetlb pages (hugepages= at boot)";
		return p == MAP_FAILED ? NULL : p;
	}
	/* Align by hand: map one PMD more and trim. */
	area = mmap(NULL, MAP_SIZE + PMD_SIZE, PROT_READ | PROT_WRITE,
		    flags, -1, 0);
	if (area == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	p = (uint8_t *)(((uintptr_t)area + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
	if (p > area)
		munmap(area, p - area);
	munmap(p + MAP_SIZE, area + PMD_SIZE - p);
	if (madvise(p, MAP_SIZE, MADV_HUGEPAGE)) {
		/* A kernel without THP (Debian's PREEMPT_RT flavour). */
		if (errno != EINVAL)
			ksft_exit_fail_msg("MADV_HUGEPAGE: %s\n", strerror(errno));
		munmap(p, MAP_SIZE);
		*why = "no THP in this kernel (MADV_HUGEPAGE: EINVAL)";
		return NULL;
	}
	*why = "no THP for this mapping (transparent_hugepage settings)";
	return p;
}

/*
 * Map the THPs of a row's MAP_SIZE at @p by ptes: split each pmd, not
 * the folio, by a page read-only and back. khugepaged, woken by
 * MADV_HUGEPAGE, must not collapse the ptes into a new THP before fork:
 * no THP for the vma first.
 */
static void map_thps_by_ptes(uint8_t *p, const char *desc)
{
	size_t off;

	if (madvise(p, MAP_SIZE, MADV_NOHUGEPAGE))
		ksft_exit_fail_msg("MADV_NOHUGEPAGE: %s\n", strerror(errno));
	for (off = PMD_SIZE / 2; off < MAP_SIZE; off += PMD_SIZE)
		if (mprotect(p + off, page_size(), PROT_READ) ||
		    mprotect(p + off, page_size(), PROT_READ | PROT_WRITE))
			ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	if (!check_huge_anon(p, 0, PMD_SIZE))
		ksft_exit_fail_msg("%s: the pmds did not split\n", desc);
}

static long first_other_page(const uint8_t *p, uint8_t value)
{
	size_t i;

	for (i = 0; i < MAP_SIZE; i++)
		if (p[i] != value)
			return i / page_size();
	return -1;
}

/*
 * The child: report, let the parent write (private) or write (shared),
 * then check what it reads.
 */
static void child(const struct huge_case *row, uint8_t *p, uint8_t seed,
		  struct lockstep *ls, int report)
{
	struct child_report r = {
		.pfn = page_pfn(p),
		.present = present_pages(p, MAP_SIZE),
		.hugetlb_kb = proc_value("/proc/self/status", "HugetlbPages"),
	};

	r.huge = is_huge(row, p);
	if (row->child_first)
		memset(p, CHILD_WRITE, MAP_SIZE);
	say(ls->to_parent[1]);
	hear(ls->to_child[0]);
	if (row->child_first) {
		r.bad_page = first_other_page(p, CHILD_WRITE);
	} else if (is_shared(row)) {
		r.bad_page = first_other_page(p, seed);
		memset(p, CHILD_WRITE, MAP_SIZE);
	} else {
		/* The parent wrote PARENT_WRITE: the child must not see it. */
		r.bad_page = first_other_page(p, seed);
	}
	_exit(write(report, &r, sizeof(r)) != sizeof(r));
}

static void run_row(const struct huge_case *row)
{
	size_t pages = MAP_SIZE / page_size();
	uint8_t seed = row->read_only ? 0 : PATTERN;
	struct parent_view v = { .bad_page = -1 };
	struct child_report r;
	struct lockstep ls;
	const char *why;
	int fds[2], ring = -1, i;
	size_t off;
	bool skipped, ok = true;
	uint8_t *p;
	pid_t pid;

	row_begin("%s", row->desc);
	p = map_row(row, &why);
	if (!p) {
		ksft_test_result_skip("%s: %s\n", row->desc, why);
		return;
	}
	if (row->read_only) {
		volatile uint8_t sum = 0;

		for (off = 0; off < MAP_SIZE; off += page_size())
			sum += p[off];
		(void)sum;
	} else {
		memset(p, PATTERN, MAP_SIZE);
	}
	if (!is_huge(row, p)) {
		ksft_test_result_skip("%s: %s\n", row->desc, why);
		munmap(p, MAP_SIZE);
		return;
	}
	if (row->kind == THP_PTE_MAPPED)
		map_thps_by_ptes(p, row->desc);
	if (row->pin) {
		ring = io_uring_pin(p, MAP_SIZE);
		if (ring < 0)
			ksft_exit_fail_msg("io_uring pin: %s\n", strerror(errno));
	}
	v.pfn_before = page_pfn(p);
	if (!v.pfn_before)
		ksft_exit_skip("pagemap shows no pfns: not root\n");

	lockstep_init(&ls);
	if (pipe(fds))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork_or_fail();
	if (pid == 0) {
		close(fds[0]);
		child(row, p, seed, &ls, fds[1]);
	}
	close(fds[1]);
	hear(ls.to_parent[0]);
	if (row->child_first)
		v.bad_page = first_other_page(p, PATTERN);
	else if (!is_shared(row) && !row->read_only)
		memset(p, PARENT_WRITE, MAP_SIZE);
	v.pfn_after = page_pfn(p);
	say(ls.to_child[1]);
	if (!read_report(fds[0], &r, sizeof(r)) || wait_child(pid))
		ksft_exit_fail_msg("%s: no report from the child\n", row->desc);
	close(fds[0]);
	if (is_shared(row))
		v.bad_page = first_other_page(p, CHILD_WRITE);

	/*
	 * A shared vma is skipped, unless the fork_copy= policy copies it;
	 * even then copy_huge_pmd() leaves a shmem THP's pmd to the fault
	 * ("Skip if can be re-fill on fault").
	 */
	skipped = is_shared(row) &&
		  (!policy_copies_skipped(true) || row->kind == SHMEM_THP);
	if (r.present != (skipped ? 0 : pages)) {
		ksft_print_msg("%s: child has %zu of %zu pages present after fork, want %zu (%s)\n",
			       row->desc, r.present, pages, skipped ? 0 : pages,
			       skipped ? "skipped" : "copied");
		ok = false;
	}
	if (r.bad_page >= 0) {
		ksft_print_msg("%s: child reads page %ld wrong%s\n", row->desc,
			       r.bad_page, is_shared(row) ? "" :
			       ": the parent's write reached it (no COW)");
		ok = false;
	}
	if (v.bad_page >= 0) {
		ksft_print_msg(row->child_first ?
			       "%s: parent reads the child's write at page %ld (no COW)\n" :
			       "%s: parent does not read the child's write at page %ld\n",
			       row->desc, v.bad_page);
		ok = false;
	}
	/* The child's hugetlb rss is what fork mapped for it, no more, no less. */
	if (is_hugetlb(row) && r.hugetlb_kb != (long long)(r.present * page_size() / 1024)) {
		ksft_print_msg("%s: child's HugetlbPages %lld kB, %zu pages present\n",
			       row->desc, r.hugetlb_kb, r.present);
		ok = false;
	}
	if (!skipped) {
		/* A pinned page is the parent's alone; any other is shared. */
		bool want_same = !row->pin;

		if ((r.pfn == v.pfn_before) != want_same) {
			ksft_print_msg("%s: child's first page is %s the parent's (pfn %#lx, parent %#lx)\n",
				       row->desc, want_same ? "not" : "still",
				       r.pfn, v.pfn_before);
			ok = false;
		}
	}
	if (row->pin && v.pfn_after != v.pfn_before) {
		ksft_print_msg("%s: the parent's write moved it off the pinned page\n",
			       row->desc);
		ok = false;
	}
	/* The THP copy keeps the pmd; a pinned THP is split and copied. */
	if ((row->kind == THP || row->kind == THP_ZERO) && r.huge == row->pin) {
		ksft_print_msg("%s: child's range is %s\n", row->desc,
			       r.huge ? "still one pmd" : "not one pmd");
		ok = false;
	}
	if (ring >= 0)
		close(ring);
	for (i = 0; i < 2; i++) {
		close(ls.to_parent[i]);
		close(ls.to_child[i]);
	}
	munmap(p, MAP_SIZE);
	ksft_test_result(ok, "%s\n", row->desc);
}

static long hugetlb_free(void)
{
	return proc_value("/proc/meminfo", "HugePages_Free");
}

static long hugetlb_total(void)
{
	return proc_value("/proc/meminfo", "HugePages_Total");
}

/*
 * One private hugetlb page of PATTERN, pinned by the io_uring ring in
 * @ring; NULL (the row skipped) when no huge page is free.
 */
static uint8_t *map_pinned_hugetlb(const char *desc, int *ring)
{
	uint8_t *p;

	p = mmap(NULL, PMD_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED) {
		ksft_test_result_skip("%s: no free hugetlb page\n", desc);
		return NULL;
	}
	memset(p, PATTERN, PMD_SIZE);
	*ring = io_uring_pin(p, PMD_SIZE);
	if (*ring < 0)
		ksft_exit_fail_msg("io_uring pin: %s\n", strerror(errno));
	return p;
}

static long hugetlb_reserved(void)
{
	return proc_value("/proc/meminfo", "HugePages_Rsvd");
}

/*
 * A pinned private hugetlb page needs a new huge page at fork; with none
 * free the fork fails with ENOMEM (copy_hugetlb_page_range()) instead of
 * sharing the pinned page, and takes nothing from the pool: no huge page,
 * no reservation, and it drops the reference it took on the pinned page,
 * which the pool gets back once unpinned and unmapped. With the pool
 * back, the same fork succeeds.
 */
static void pinned_hugetlb_pool_empty(void)
{
	const char *desc = "hugetlb pinned, no free huge page: fork fails with ENOMEM";
	long spare, reserved, free_after = -1, reserved_after = -1;
	size_t hps = PMD_SIZE;
	uint8_t *p, *filler = NULL;
	int ring, err, tries;
	bool ok = false;
	pid_t pid;

	row_begin("%s", desc);
	p = map_pinned_hugetlb(desc, &ring);
	if (!p)
		return;
	/*
	 * The rows before pinned pages with io_uring rings, which release
	 * them from a workqueue after close(): wait until only @p is in use.
	 */
	for (tries = 0; hugetlb_free() != hugetlb_total() - 1; tries++) {
		if (tries == 2000)
			ksft_exit_fail_msg("%s: earlier rows' huge pages not back after 20 s\n",
					   desc);
		usleep(10000);
	}
	spare = hugetlb_free();
	if (spare > 0) {
		filler = mmap(NULL, spare * hps, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (filler == MAP_FAILED)
			ksft_exit_fail_msg("mmap %ld huge pages: %s\n", spare,
					   strerror(errno));
		memset(filler, 1, spare * hps);
	}
	if (hugetlb_free() != 0)
		ksft_exit_fail_msg("%s: %lld huge pages still free\n", desc,
				   (long long)hugetlb_free());
	reserved = hugetlb_reserved();
	pid = fork_flushed();
	err = errno;
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		wait_child(pid);
	else
		free_after = hugetlb_free(), reserved_after = hugetlb_reserved();
	if (filler)
		munmap(filler, spare * hps);
	if (pid >= 0 || err != ENOMEM) {
		ksft_print_msg("%s: fork %s\n", desc, pid >= 0 ? "succeeded" :
			       strerror(err));
	} else if (free_after || reserved_after != reserved) {
		ksft_print_msg("%s: after the failed fork %ld huge pages free (want 0), %ld reserved (want %ld)\n",
			       desc, free_after, reserved_after, reserved);
	} else {
		/* The child has its own copy of the pinned page. */
		unsigned long pfn = page_pfn(p);

		pid = fork_or_fail();
		if (pid == 0)
			_exit(page_pfn(p) != pfn && p[0] == PATTERN ? 0 : 1);
		ok = wait_child(pid) == 0;
	}
	close(ring);
	munmap(p, hps);
	/*
	 * Unpinned from a workqueue: the pinned page's huge page comes back
	 * (within 20 s: a TCG guest on a loaded host is slow, a leaked pin
	 * never ends).
	 */
	for (tries = 0; ok && hugetlb_free() != hugetlb_total(); tries++) {
		if (tries == 2000) {
			ksft_print_msg("%s: %ld of %ld huge pages free 20 s after the last unmap\n",
				       desc, hugetlb_free(), hugetlb_total());
			ok = false;
		}
		usleep(10000);
	}
	ksft_test_result(ok, "%s\n", desc);
}

/*
 * The early COW copy of a pinned private hugetlb page takes the vma's
 * protection: after mprotect(PROT_READ) the child's copy is read-only.
 * hugetlb_install_folio() used to map it writable whatever the vma
 * allowed (4eae4efa2c29, fixed by d8fd84dd4ce7, not in 6.12.y: forklab's
 * patches/0011): the child's write into its PROT_READ mapping then
 * succeeds instead of raising SIGSEGV.
 */
static void pinned_hugetlb_read_only(void)
{
	const char *desc = "hugetlb pinned, PROT_READ: the child's copy is read-only";
	size_t hps = PMD_SIZE;
	volatile uint8_t *v;
	uint8_t *p;
	int ring, status;
	pid_t pid;

	row_begin("%s", desc);
	p = map_pinned_hugetlb(desc, &ring);
	if (!p)
		return;
	if (mprotect(p, hps, PROT_READ))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	pid = fork_or_fail();
	if (pid == 0) {
		v = p;
		v[0] = CHILD_WRITE;
		_exit(0);
	}
	status = wait_child(pid);
	if (status != 128 + SIGSEGV)
		ksft_print_msg("%s: the child's write %s\n", desc, status == 0 ?
			       "succeeded" : "ended otherwise");
	ksft_test_result(status == 128 + SIGSEGV, "%s\n", desc);
	close(ring);
	munmap(p, hps);
}

/*
 * uffd-wp on a private hugetlb page or THP at fork: the child's entry
 * carries the uffd-wp bit only if the child's vma is registered for it,
 * i.e. with UFFD_FEATURE_EVENT_FORK (pagemap shows the bit, PM_UFFD_WP),
 * and only if the parent's page was write-protected; where it carries
 * it, the child's first write must raise a uffd-wp fault on the child's
 * uffd.
 */
struct hugetlb_wp_case {
	const char *desc;
	bool thp;		/* a THP (one pmd), not a hugetlb page */
	bool thp_ptes;		/* THPs mapped by ptes, runs of pages protected */
	bool event_fork;
	bool pin;		/* early COW: the child gets a new page */
	bool unprotected;	/* registered for uffd-wp, not protected */
};

static const struct hugetlb_wp_case hugetlb_wp_cases[] = {
	/*
	 * Without EVENT_FORK the child's vma is not registered: a uffd-wp
	 * bit copied with the pte would be stale there, and a later
	 * UFFDIO_REGISTER of the child's would find the page already
	 * write-protected. copy_hugetlb_page_range() cleared it on swap and
	 * migration entries but not on present ptes until 5a2f8d22ace4;
	 * 6.1.192 still copies it (forklab's patches/6.1/0017).
	 */
	{ .desc = "hugetlb uffd-wp, child without EVENT_FORK: no uffd-wp in its pte" },
	/*
	 * With EVENT_FORK the child's vma is registered: the bit stays, and
	 * the child's write faults to its monitor. A copy that kept the bit
	 * but made the pte writable would let the write through unseen.
	 */
	{ .desc = "hugetlb uffd-wp, child with EVENT_FORK: keeps uffd-wp",
	  .event_fork = true },
	/*
	 * Pinned, the child gets its copy at fork (hugetlb_install_folio());
	 * with EVENT_FORK the copy must be write-protected for uffd as the
	 * original was, or the child's monitor misses the child's first
	 * write. The copy carries the bit since 5a2f8d22ace4; 6.1.192's
	 * hugetlb_install_page() drops it, and 6.1's pte_mkuffd_wp() alone
	 * does not write-protect (f1eb1bacfba9 came in 6.5).
	 */
	{ .desc = "hugetlb uffd-wp pinned, child with EVENT_FORK: its copy keeps uffd-wp",
	  .event_fork = true, .pin = true },
	/* Pinned, without EVENT_FORK: a fresh pte, no bit. */
	{ .desc = "hugetlb uffd-wp pinned, child without EVENT_FORK: no uffd-wp in its copy",
	  .pin = true },
	/*
	 * Registered for uffd-wp but never protected: nothing to carry. A
	 * fork that set the bit because the vma is registered, not because
	 * the pte had it, would write-protect pages no one asked for.
	 */
	{ .desc = "hugetlb registered, not protected, child with EVENT_FORK: no uffd-wp",
	  .event_fork = true, .unprotected = true },
	/*
	 * The same for a THP, whose pmd copy_huge_pmd() copies: without
	 * EVENT_FORK the child's pmd loses the bit (pmd_clear_uffd_wp()),
	 * with it keeps it, and the child's first write faults on its uffd.
	 */
	{ .desc = "THP uffd-wp, child without EVENT_FORK: no uffd-wp in its pmd",
	  .thp = true },
	{ .desc = "THP uffd-wp, child with EVENT_FORK: keeps uffd-wp",
	  .thp = true, .event_fork = true },
	{ .desc = "hugetlb registered, not protected, pinned, child with EVENT_FORK: no uffd-wp",
	  .event_fork = true, .pin = true, .unprotected = true },
	/*
	 * A THP mapped by ptes, runs of four pages protected (0-3, 8-11)
	 * between runs of four not: fork copies the folio's ptes in batches
	 * (folio_pte_batch()), one set_ptes() of the first pte for all, and
	 * a batch must end where uffd-wp changes (the batch never ignores
	 * it) and give each pte of a run the run's bit. One that ran across
	 * would give the first page's bit to every child pte: with
	 * EVENT_FORK the pages the parent left writable would fault on the
	 * child's monitor, or the protected ones not. Without EVENT_FORK none may keep it. The
	 * parent's bits stay as they were (__copy_present_ptes() only
	 * write-protects them, for batches and single ptes alike).
	 */
	{ .desc = "THP mapped by ptes, runs of four pages uffd-wp, child without EVENT_FORK: no uffd-wp",
	  .thp_ptes = true },
	{ .desc = "THP mapped by ptes, runs of four pages uffd-wp, child with EVENT_FORK: the same pages keep it",
	  .thp_ptes = true, .event_fork = true },
};

/* What the child of a uffd-wp row saw, as its exit status. */
enum { WP_CHILD_OK = 0, WP_CHILD_BIT = 10, WP_CHILD_PAGE = 11 };

/*
 * The monitor of a row with EVENT_FORK: fork() waits until someone reads
 * its UFFD_EVENT_FORK; then the child's uffd, on which the child's write
 * to a protected page faults (served: the page unprotected). The child's
 * uffd is kept open until the child has exited (closing it unregisters
 * the child's vma); @done says the child has.
 */
struct fork_event {
	int uffd, child_uffd, done;
	int wp_faults;
};

static void *monitor_fork(void *arg)
{
	struct fork_event *ev = arg;
	struct pollfd fds[3] = { { .fd = ev->uffd, .events = POLLIN },
				 { .fd = ev->done, .events = POLLIN },
				 { .fd = -1, .events = POLLIN } };
	struct uffdio_writeprotect unprotect = { .mode = 0 };
	struct uffd_msg msg;

	while (poll(fds, 3, -1) > 0 && !(fds[1].revents & (POLLIN | POLLHUP))) {
		if ((fds[0].revents & POLLIN) &&
		    read(ev->uffd, &msg, sizeof(msg)) == sizeof(msg) &&
		    msg.event == UFFD_EVENT_FORK && ev->child_uffd < 0)
			fds[2].fd = ev->child_uffd = msg.arg.fork.ufd;
		if ((fds[2].revents & POLLIN) &&
		    read(ev->child_uffd, &msg, sizeof(msg)) == sizeof(msg) &&
		    msg.event == UFFD_EVENT_PAGEFAULT &&
		    (msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP)) {
			ev->wp_faults++;
			unprotect.range.start = msg.arg.pagefault.address & ~(PMD_SIZE - 1);
			unprotect.range.len = PMD_SIZE;
			if (ioctl(ev->child_uffd, UFFDIO_WRITEPROTECT, &unprotect))
				break;	/* the child stays blocked: the run times out */
		}
	}
	return NULL;
}

/* The pages whose uffd-wp bits the rows read: the first WP_PAGES. */
#define WP_PAGES	16
#define WP_ALL		((1U << WP_PAGES) - 1)
#define WP_RUNS		(0x0f0f0f0fU & WP_ALL)

/* The uffd-wp bits (PM_UFFD_WP) of the first WP_PAGES pages at @p. */
static unsigned int uffd_wp_bits(const uint8_t *p)
{
	unsigned int bits = 0;
	int i;

	for (i = 0; i < WP_PAGES; i++)
		if (pagemap_count(p + i * page_size(), page_size(), PM_UFFD_WP))
			bits |= 1U << i;
	return bits;
}

/* Write-protect the row's pages: all, or the runs WP_RUNS names. */
static int protect_row(int uffd, const struct hugetlb_wp_case *row,
		       uint8_t *p, size_t len)
{
	struct uffdio_writeprotect wp = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	int i;

	if (!row->thp_ptes) {
		wp.range.start = (uintptr_t)p;
		wp.range.len = len;
		return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
	}
	for (i = 0; i < WP_PAGES; i++) {
		if (!(WP_RUNS & (1U << i)))
			continue;
		wp.range.start = (uintptr_t)p + i * page_size();
		wp.range.len = page_size();
		if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp))
			return -1;
	}
	return 0;
}

static void run_hugetlb_wp_row(const struct hugetlb_wp_case *row)
{
	struct fork_event ev = { .child_uffd = -1 };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	static const struct huge_case thp_row = { .kind = THP };
	bool thp = row->thp || row->thp_ptes;
	uint64_t features = thp ? 0 : UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
	bool want_bit = row->event_fork && !row->unprotected;
	/* the parent's bits, before fork and after; the child's */
	unsigned int parent_bits = row->unprotected ? 0 : row->thp_ptes ? WP_RUNS : WP_ALL;
	unsigned int child_bits = row->event_fork ? parent_bits : 0;
	size_t len = thp ? MAP_SIZE : PMD_SIZE;
	int ring = -1, child, done[2];
	const char *why;
	unsigned long pfn;
	pthread_t thread;
	uint8_t *p;
	pid_t pid;

	row_begin("%s", row->desc);
	if (row->event_fork)
		features |= UFFD_FEATURE_EVENT_FORK;
	ev.uffd = open_uffd(features);
	if (ev.uffd < 0) {
		ksft_test_result_skip("%s: userfaultfd: %s\n", row->desc,
				      strerror(errno));
		return;
	}
	if (thp) {
		p = map_row(&thp_row, &why);
		if (!p) {
			ksft_test_result_skip("%s: %s\n", row->desc, why);
			close(ev.uffd);
			return;
		}
	} else {
		p = mmap(NULL, PMD_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	}
	if (p == MAP_FAILED) {
		ksft_test_result_skip("%s: no free hugetlb page\n", row->desc);
		close(ev.uffd);
		return;
	}
	memset(p, PATTERN, len);
	if (thp && !is_huge(&thp_row, p)) {
		ksft_test_result_skip("%s: %s\n", row->desc, why);
		munmap(p, len);
		close(ev.uffd);
		return;
	}
	if (row->thp_ptes)
		map_thps_by_ptes(p, row->desc);
	if (row->pin) {
		ring = io_uring_pin(p, len);
		if (ring < 0)
			ksft_exit_fail_msg("io_uring pin: %s\n", strerror(errno));
	}
	reg.range.start = (uintptr_t)p;
	reg.range.len = len;
	if (ioctl(ev.uffd, UFFDIO_REGISTER, &reg) ||
	    (!row->unprotected && protect_row(ev.uffd, row, p, len)))
		ksft_exit_fail_msg("%s: uffd-wp the page: %s\n", row->desc,
				   strerror(errno));
	if (uffd_wp_bits(p) != parent_bits)
		ksft_exit_fail_msg("%s: the parent's pagemap shows uffd-wp %#x, want %#x\n",
				   row->desc, uffd_wp_bits(p), parent_bits);
	pfn = page_pfn(p);
	if (pipe(done))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	ev.done = done[0];
	if (row->event_fork &&
	    pthread_create(&thread, NULL, monitor_fork, &ev))
		ksft_exit_fail_msg("pthread_create failed\n");
	pid = fork_or_fail();
	if (pid == 0) {
		volatile uint8_t *v = p;

		/* Before anything else touches the page. */
		if (uffd_wp_bits(p) != child_bits)
			_exit(WP_CHILD_BIT);
		if ((page_pfn(p) != pfn) != row->pin || p[0] != PATTERN)
			_exit(WP_CHILD_PAGE);
		/* Protected: this write waits for the monitor's unprotect. */
		v[0] = CHILD_WRITE;
		_exit(WP_CHILD_OK);
	}
	child = wait_child(pid);
	close(done[1]);
	if (row->event_fork)
		pthread_join(thread, NULL);
	close(done[0]);
	if (child == WP_CHILD_BIT)
		ksft_print_msg("%s: the child's ptes' uffd-wp are not %#x\n", row->desc,
			       child_bits);
	else if (child == WP_CHILD_PAGE)
		ksft_print_msg("%s: the child did not map the page it should (%s)\n",
			       row->desc, row->pin ? "shared the pinned page" : "a copy");
	else if (child)
		ksft_print_msg("%s: the child ended with status %d\n", row->desc, child);
	if (row->event_fork && ev.child_uffd < 0)
		ksft_print_msg("%s: no UFFD_EVENT_FORK\n", row->desc);
	if (ev.wp_faults != want_bit)
		ksft_print_msg("%s: the child's write raised %d uffd-wp faults, want %d\n",
			       row->desc, ev.wp_faults, want_bit);
	if (uffd_wp_bits(p) != parent_bits)
		ksft_print_msg("%s: the parent's uffd-wp changed at fork: %#x, want %#x\n",
			       row->desc, uffd_wp_bits(p), parent_bits);
	ksft_test_result(!child && uffd_wp_bits(p) == parent_bits &&
			 ev.wp_faults == want_bit &&
			 (!row->event_fork || ev.child_uffd >= 0), "%s\n", row->desc);
	if (ev.child_uffd >= 0)
		close(ev.child_uffd);
	if (ring >= 0)
		close(ring);
	munmap(p, len);
	close(ev.uffd);
}

int main(void)
{
	size_t i;

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(huge_cases) + 2 + ARRAY_SIZE(hugetlb_wp_cases));
	ksft_print_msg("fork_copy=%s\n", fork_copy_policy_name());
	/* shmem THP only where asked for (the default is never). */
	if (access(SHMEM_ENABLED, W_OK) == 0)
		write_file(SHMEM_ENABLED, "advise");
	for (i = 0; i < ARRAY_SIZE(huge_cases); i++)
		run_row(&huge_cases[i]);
	pinned_hugetlb_pool_empty();
	pinned_hugetlb_read_only();
	for (i = 0; i < ARRAY_SIZE(hugetlb_wp_cases); i++)
		run_hugetlb_wp_row(&hugetlb_wp_cases[i]);
	ksft_finished();
}
