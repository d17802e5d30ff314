// SPDX-License-Identifier: GPL-2.0
/*
 * fork_khugepaged: the child of a process khugepaged scans is scanned
 * too (the x86_64 target: UML has no THP).
 *
 * khugepaged only visits the mms on its list. A process gets there when
 * one of its vmas may have THPs (MADV_HUGEPAGE, THP "always" at mmap);
 * its child gets there at fork only: dup_mmap() calls khugepaged_fork(),
 * which enters the child when the parent is entered (MMF_VM_HUGEPAGE).
 * A child that makes no new vma is never entered otherwise.
 *
 * Each row runs in a process P of its own:
 *
 *   P:  region (2 MiB, aligned): 512 pages written, THP "madvise": ptes
 *       marker: MADV_HUGEPAGE, one byte written: P is entered
 *       fork ---------------------------------------------> C
 *       munmap(region): C's pages are its own (mapcount 1)
 *                                                           C writes page 0
 *                                                           (a writable pte:
 *                                                           khugepaged wants
 *                                                           one)
 *       THP "always": C's region, no VM_HUGEPAGE, may be a THP now;
 *       khugepaged's scans every 10 ms; 3 full scans (full_scans, the
 *       clock; the limit WAIT_SECONDS)
 *       C's page at the region: a THP or not (P reads C's pagemap and
 *       kpageflags; C's copies of the markers are THPs already). C
 *       reads no file and allocates nothing, which could enter it by
 *       another way
 *
 *   row                                 a wrong kernel
 *   1 P entered: C's region collapsed   khugepaged_fork() left out: C is
 *                                       never scanned, its region stays
 *                                       512 ptes
 *   2 P's THP disabled (prctl): C's     the child loses the parent's
 *     region not collapsed              PR_SET_THP_DISABLE for khugepaged
 *                                       (or khugepaged ignores it)
 *
 * main() enters itself first (a marker of its own), so that khugepaged
 * has an mm to scan and full_scans moves in row 2 too.
 */
#include <linux/kernel-page-flags.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

#include "forklab.h"

#define PMD_SIZE	(2UL << 20)
#define THP_KNOBS	"/sys/kernel/mm/transparent_hugepage/"
#define KHUGEPAGED	THP_KNOBS "khugepaged/"
#define FULL_SCANS	3
#define WAIT_SECONDS	20

struct khugepaged_case {
	const char *desc;
	bool thp_disabled;	/* P's prctl(PR_SET_THP_DISABLE) */
	bool want_thp;		/* C's region a THP after the scans */
};

static const struct khugepaged_case khugepaged_cases[] = {
	{ .desc = "khugepaged scans the child of a process it scans: its pte range collapsed",
	  .want_thp = true },
	{ .desc = "a THP-disabled parent's child: khugepaged collapses nothing of it",
	  .thp_disabled = true },
};

/* The knobs a row sets, as they were. */
static char saved_enabled[32];
static long long saved_scan_ms, saved_alloc_ms, saved_pages_to_scan;

static void read_enabled(char *buf, size_t size)
{
	FILE *f = fopen(THP_KNOBS "enabled", "r");
	char line[128], *open_br, *close_br;

	if (!f || !fgets(line, sizeof(line), f))
		ksft_exit_fail_msg("read " THP_KNOBS "enabled: %s\n", strerror(errno));
	fclose(f);
	open_br = strchr(line, '[');
	close_br = open_br ? strchr(open_br, ']') : NULL;
	if (!close_br || (size_t)(close_br - open_br) > size)
		ksft_exit_fail_msg(THP_KNOBS "enabled: %s", line);
	snprintf(buf, size, "%.*s", (int)(close_br - open_br - 1), open_br + 1);
}

static void write_number(const char *path, long long n)
{
	char text[32];

	snprintf(text, sizeof(text), "%lld", n);
	write_file(path, text);
}

static void save_knobs(void)
{
	read_enabled(saved_enabled, sizeof(saved_enabled));
	saved_scan_ms = read_number(KHUGEPAGED "scan_sleep_millisecs");
	saved_alloc_ms = read_number(KHUGEPAGED "alloc_sleep_millisecs");
	saved_pages_to_scan = read_number(KHUGEPAGED "pages_to_scan");
}

static void restore_knobs(void)
{
	write_file(THP_KNOBS "enabled", saved_enabled);
	write_number(KHUGEPAGED "scan_sleep_millisecs", saved_scan_ms);
	write_number(KHUGEPAGED "alloc_sleep_millisecs", saved_alloc_ms);
	write_number(KHUGEPAGED "pages_to_scan", saved_pages_to_scan);
}

/* Is the page @pid maps at @addr part of a THP (root: its pfn, KPF_THP)? */
static bool thp_in(pid_t pid, const void *addr)
{
	char path[64];
	uint64_t flags = 0;
	unsigned long pfn;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		ksft_exit_fail_msg("open %s: %s\n", path, strerror(errno));
	pfn = pagemap_get_pfn(fd, (char *)addr);
	close(fd);
	if (pfn == -1UL)
		ksft_exit_fail_msg("%s: %p not present\n", path, addr);
	fd = open("/proc/kpageflags", O_RDONLY);
	if (fd < 0 || pread(fd, &flags, sizeof(flags), pfn * sizeof(flags)) != sizeof(flags))
		ksft_exit_fail_msg("/proc/kpageflags: %s\n", strerror(errno));
	close(fd);
	return flags & (1ULL << KPF_THP);
}

/* A 2 MiB range at a 2 MiB boundary, in a larger anonymous mapping. */
static uint8_t *aligned_range(void)
{
	uint8_t *area = mmap(NULL, 2 * PMD_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (area == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	return (uint8_t *)(((uintptr_t)area + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
}

/*
 * A MADV_HUGEPAGE range, its first byte written: this process is
 * entered (by the fault; madvise() enters only a vma that has an
 * anon_vma already).
 */
static void enter_khugepaged(void)
{
	uint8_t *marker = aligned_range();

	if (madvise(marker, PMD_SIZE, MADV_HUGEPAGE))
		ksft_exit_fail_msg("madvise(MADV_HUGEPAGE): %s\n", strerror(errno));
	marker[0] = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait for FULL_SCANS full scans of khugepaged; false at the limit. */
static bool wait_full_scans(long long *scans)
{
	long long start = read_number(KHUGEPAGED "full_scans");
	double deadline = now() + WAIT_SECONDS;

	do {
		*scans = read_number(KHUGEPAGED "full_scans") - start;
		if (*scans >= FULL_SCANS)
			return true;
		usleep(20 * 1000);
	} while (now() < deadline);
	return false;
}

/* Row @row as process P: exit status 0 if it holds, 1 if not. */
static void run_row_as_p(const struct khugepaged_case *row)
{
	struct lockstep ls;
	long long scans;
	uint8_t *region;
	bool ok = true;
	pid_t pid;

	if (row->thp_disabled && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		ksft_exit_fail_msg("prctl(PR_SET_THP_DISABLE): %s\n", strerror(errno));
	write_file(THP_KNOBS "enabled", "madvise");
	region = aligned_range();
	memset(region, 0x5a, PMD_SIZE);
	if (check_huge_anon(region, 1, PMD_SIZE))
		ksft_exit_fail_msg("the region is a THP before fork\n");
	enter_khugepaged();
	lockstep_init(&ls);
	pid = fork_or_fail();
	if (pid == 0) {
		/* Nothing here may make a vma (malloc, stdio): see above. */
		hear(ls.to_child[0]);
		region[0] = 0xa5;
		say(ls.to_parent[1]);
		hear(ls.to_child[0]);
		_exit(0);
	}
	if (munmap(region, PMD_SIZE))
		ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
	say(ls.to_child[1]);
	hear(ls.to_parent[0]);
	write_file(THP_KNOBS "enabled", "always");
	write_number(KHUGEPAGED "pages_to_scan", 4096);
	write_number(KHUGEPAGED "alloc_sleep_millisecs", 10);
	write_number(KHUGEPAGED "scan_sleep_millisecs", 10);
	if (!wait_full_scans(&scans)) {
		ksft_print_msg("%s: khugepaged made %lld of %d full scans in %d s\n",
			       row->desc, scans, FULL_SCANS, WAIT_SECONDS);
		ok = false;
	}
	if (thp_in(pid, region) != row->want_thp) {
		ksft_print_msg("%s: after %lld full scans the child's region is %s\n",
			       row->desc, scans, row->want_thp ? "512 ptes still" : "a THP");
		ok = false;
	}
	say(ls.to_child[1]);
	if (wait_child(pid))
		ksft_exit_fail_msg("%s: the child failed\n", row->desc);
	lockstep_close(&ls);
	fflush(stdout);
	_exit(ok ? 0 : 1);
}

int main(void)
{
	size_t i;

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(khugepaged_cases));
	if (access(KHUGEPAGED "full_scans", R_OK))
		ksft_exit_skip("no khugepaged (CONFIG_TRANSPARENT_HUGEPAGE): %s\n",
			       strerror(errno));
	save_knobs();
	write_file(THP_KNOBS "enabled", "madvise");
	enter_khugepaged();
	for (i = 0; i < ARRAY_SIZE(khugepaged_cases); i++) {
		const struct khugepaged_case *row = &khugepaged_cases[i];
		pid_t pid = fork_or_fail();

		if (pid == 0)
			run_row_as_p(row);
		ksft_test_result(!wait_child(pid), "%s\n", row->desc);
		restore_knobs();
	}
	ksft_finished();
}
