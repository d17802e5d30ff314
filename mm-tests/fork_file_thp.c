// SPDX-License-Identifier: GPL-2.0
/*
 * fork_file_thp: a file's THP in a private vma that fork copies (the
 * x86_64 target: UML has no THP).
 *
 * A MAP_PRIVATE vma of a file is copied at fork once one of its pages was
 * written (the COW gave it an anon_vma: vma_needs_copy()). Its file pages
 * are then copied by the level that maps them:
 *
 *   - a pmd mapping a file THP is not copied: copy_huge_pmd() leaves the
 *     pmd of a vma that is not anonymous to the child's fault ("Skip if
 *     can be re-fill on fault"), which maps the same folio again;
 *   - ptes mapping a file THP are, in batches of the folio
 *     (folio_pte_batch(), 6.9; one pte at a time before): the folio's
 *     reference and each page's mapcount taken once per pte
 *     (folio_dup_file_rmap_ptes()), the child's RssShmem counted.
 *
 * The file: FILE_SIZE bytes on a tmpfs of its own mounted huge=always,
 * written with write(2), so that its page cache is two PMD THPs before
 * anything maps it. Each row maps all of it privately, reads the first
 * THP's range and writes the file's last page (the COW that gives the
 * vma its anon_vma; row 2's fault-around maps the start of THP 1 too).
 *
 *   file:     0          2M         4M
 *             |--THP 0---|--THP 1--W|      W: the page written, an anon copy
 *   row 1:    ^ vma PMD-aligned: THP 0 mapped by one pmd
 *   row 2:    vma one page off: no pmd fits, THP 0 mapped by 512 ptes
 *
 *   row                               a wrong kernel
 *   1 file THP mapped by a pmd        the child finds the pmd copied
 *                                     (present after fork; copied as an
 *                                     anon THP's, the guest hangs), or
 *                                     cannot fault the THP back as one
 *                                     pmd, or reads other bytes
 *   2 file THP mapped by ptes         a batch that takes the mapcount of
 *                                     its first page only, or counts one
 *                                     page: a page the child maps counted
 *                                     once, RssShmem short; the parent's
 *                                     counts not back after the child
 */
#include <limits.h>
#include <sys/mman.h>
#include <sys/mount.h>

#include "forklab.h"

#define PMD_SIZE	(2UL << 20)
#define FILE_SIZE	(2 * PMD_SIZE)
#define THP_PAGES	(PMD_SIZE / page_size())
#define FILE_PAGES	(FILE_SIZE / page_size())
#define REGION		7	/* fill_words() id of the file's bytes */

struct file_thp_case {
	const char *desc;
	bool by_ptes;	/* mapped one page off PMD alignment */
};

static const struct file_thp_case file_thp_cases[] = {
	{ .desc = "shmem THP mapped by a pmd, private vma copied: the pmd left to the child's fault" },
	{ .desc = "shmem THP mapped by ptes, private vma copied: each page mapped by both, RssShmem",
	  .by_ptes = true },
};

/* What the child saw right after fork, and after it read THP 0. */
struct child_view {
	size_t thp_present;		/* pages of THP 0 present after fork */
	size_t written_present;		/* the written page */
	long long rss_shmem_kb;		/* RssShmem after fork */
	long long mapcount_min, mapcount_max;	/* of THP 0's pages (by ptes) */
	bool pmd_again;			/* THP 0 one pmd after its read */
	long bad_page;			/* first page read wrong, -1: none */
};

static char mount_dir[64];

/* A tmpfs that gives its files THPs; false: this kernel has none. */
static bool mount_huge_tmpfs(void)
{
	snprintf(mount_dir, sizeof(mount_dir), "/tmp/forklab-thp-XXXXXX");
	if (!mkdtemp(mount_dir))
		ksft_exit_fail_msg("mkdtemp: %s\n", strerror(errno));
	if (!mount("tmpfs", mount_dir, "tmpfs", 0, "huge=always,size=8m"))
		return true;
	rmdir(mount_dir);
	return false;
}

static void unmount_huge_tmpfs(void)
{
	if (umount(mount_dir) || rmdir(mount_dir))
		ksft_exit_fail_msg("umount %s: %s\n", mount_dir, strerror(errno));
}

/* The file, written by write(2): its page cache THPs before any mapping. */
static int file_of_thps(void)
{
	char path[96];
	uint8_t *buf = malloc(FILE_SIZE);
	int fd;

	snprintf(path, sizeof(path), "%s/file", mount_dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (!buf || fd < 0)
		ksft_exit_fail_msg("create %s: %s\n", path, strerror(errno));
	fill_words(buf, FILE_SIDE, REGION, 0, FILE_PAGES);
	if (write(fd, buf, FILE_SIZE) != (ssize_t)FILE_SIZE)
		ksft_exit_fail_msg("write %s: %s\n", path, strerror(errno));
	free(buf);
	unlink(path);
	return fd;
}

/*
 * The file mapped privately at a PMD-aligned address, or one page past
 * one (@by_ptes).
 */
static uint8_t *map_file(int fd, bool by_ptes)
{
	uint8_t *area = mmap(NULL, FILE_SIZE + 2 * PMD_SIZE, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t at;
	uint8_t *p;

	if (area == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	at = ((uintptr_t)area + PMD_SIZE - 1) & ~(PMD_SIZE - 1);
	if (by_ptes)
		at += page_size();
	p = mmap((void *)at, FILE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap the file: %s\n", strerror(errno));
	return p;
}

/* Pages [0, THP_PAGES) at @p: the least and most mapped of them. */
static void mapcounts(const uint8_t *p, long long *min, long long *max)
{
	size_t i;

	*min = LLONG_MAX;
	*max = 0;
	for (i = 0; i < THP_PAGES; i++) {
		long long n = page_mapcount_at(p + i * page_size());

		*min = n < *min ? n : *min;
		*max = n > *max ? n : *max;
	}
}

static void child(const struct file_thp_case *row, uint8_t *p,
		  struct lockstep *ls, int report)
{
	struct child_view v = {
		.thp_present = present_pages(p, PMD_SIZE),
		.written_present = present_pages(p + FILE_SIZE - page_size(),
						 page_size()),
		.rss_shmem_kb = proc_value("/proc/self/status", "RssShmem"),
	};

	if (row->by_ptes)
		mapcounts(p, &v.mapcount_min, &v.mapcount_max);
	v.bad_page = first_wrong_page(p, FILE_SIDE, REGION, 0, THP_PAGES);
	if (v.bad_page < 0 && first_wrong_page(p, PARENT_SIDE, REGION,
					       FILE_PAGES - 1, 1) >= 0)
		v.bad_page = FILE_PAGES - 1;
	v.pmd_again = check_huge_shmem(p, 1, PMD_SIZE);
	if (write(report, &v, sizeof(v)) != sizeof(v))
		_exit(1);
	/* The parent reads its counts while this child still maps the THP. */
	say(ls->to_parent[1]);
	hear(ls->to_child[0]);
	_exit(0);
}

static void run_row(const struct file_thp_case *row)
{
	struct child_view v;
	struct lockstep ls;
	long long parent_rss_kb, min, max, after_min, after_max;
	int fd, report[2];
	bool ok = true;
	uint8_t *p;
	pid_t pid;

	row_begin("%s", row->desc);
	if (row->by_ptes && !rss_counters_exact()) {
		row_skip("SPLIT_RSS_COUNTING: the RSS counters lag");
		return;
	}
	fd = file_of_thps();
	p = map_file(fd, row->by_ptes);
	if (first_wrong_page(p, FILE_SIDE, REGION, 0, THP_PAGES) >= 0)
		ksft_exit_fail_msg("%s: the file reads wrong before fork\n", row->desc);
	if (!page_in_thp(p) ||
	    !check_huge_shmem(p, row->by_ptes ? 0 : 1, PMD_SIZE)) {
		ksft_test_result_skip("%s: the file's page cache is not a THP mapped as the row wants\n",
				      row->desc);
		goto out;
	}
	/* The COW that gives the vma its anon_vma, in THP 1. */
	fill_words(p, PARENT_SIDE, REGION, FILE_PAGES - 1, 1);
	parent_rss_kb = proc_value("/proc/self/status", "RssShmem");

	lockstep_init(&ls);
	if (pipe(report))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork_or_fail();
	if (pid == 0)
		child(row, p, &ls, report[1]);
	if (!read_report(report[0], &v, sizeof(v)))
		ksft_exit_fail_msg("%s: no report from the child\n", row->desc);
	hear(ls.to_parent[0]);
	mapcounts(p, &min, &max);
	say(ls.to_child[1]);
	if (wait_child(pid))
		ksft_exit_fail_msg("%s: the child failed\n", row->desc);
	mapcounts(p, &after_min, &after_max);

	if (v.written_present != 1) {
		ksft_print_msg("%s: the child's written page not copied\n", row->desc);
		ok = false;
	}
	if (v.bad_page >= 0) {
		ksft_print_msg("%s: the child reads page %ld wrong\n", row->desc,
			       v.bad_page);
		ok = false;
	}
	if (!row->by_ptes) {
		if (v.thp_present) {
			ksft_print_msg("%s: %zu pages of the THP present in the child after fork, want 0\n",
				       row->desc, v.thp_present);
			ok = false;
		}
		if (!v.pmd_again) {
			ksft_print_msg("%s: the child's read did not map the THP by a pmd\n",
				       row->desc);
			ok = false;
		}
		/* Both map the THP by a pmd: one mapping each, none by ptes. */
		if (min != 2 || max != 2 || after_min != 1 || after_max != 1) {
			ksft_print_msg("%s: mapcounts %lld..%lld with the child, %lld..%lld after, want 2 and 1\n",
				       row->desc, min, max, after_min, after_max);
			ok = false;
		}
	} else {
		if (v.thp_present != THP_PAGES) {
			ksft_print_msg("%s: %zu of %zu pages present in the child after fork\n",
				       row->desc, v.thp_present, THP_PAGES);
			ok = false;
		}
		if (v.mapcount_min != 2 || v.mapcount_max != 2 ||
		    after_min != 1 || after_max != 1) {
			ksft_print_msg("%s: mapcounts %lld..%lld after fork, %lld..%lld after the child, want 2 and 1\n",
				       row->desc, v.mapcount_min, v.mapcount_max,
				       after_min, after_max);
			ok = false;
		}
		if (v.rss_shmem_kb != parent_rss_kb) {
			ksft_print_msg("%s: the child's RssShmem %lld kB, the parent's %lld kB\n",
				       row->desc, v.rss_shmem_kb, parent_rss_kb);
			ok = false;
		}
	}
	close(report[0]);
	close(report[1]);
	lockstep_close(&ls);
	row_result(ok);
out:
	munmap(p, FILE_SIZE);
	close(fd);
}

int main(void)
{
	size_t i;

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(file_thp_cases));
	ksft_print_msg("fork_copy=%s\n", fork_copy_policy_name());
	if (!mount_huge_tmpfs())
		ksft_exit_skip("no tmpfs with huge=always (CONFIG_TRANSPARENT_HUGEPAGE): %s\n",
			       strerror(errno));
	for (i = 0; i < ARRAY_SIZE(file_thp_cases); i++)
		run_row(&file_thp_cases[i]);
	unmount_huge_tmpfs();
	ksft_finished();
}
