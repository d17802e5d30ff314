// SPDX-License-Identifier: GPL-2.0
/*
 * fork_khugepaged: the child of a process khugepaged scans is scanned
 * too, and only that child (the x86_64 target: UML has no THP).
 *
 * khugepaged only visits the mms on its list. A process gets there when
 * one of its vmas may have THPs (a fault in a MADV_HUGEPAGE range, THP
 * "always" at mmap; madvise() itself enters only a vma that has an
 * anon_vma); its child gets there at fork only: dup_mmap() calls
 * khugepaged_fork(), which enters the child when the parent is entered
 * (MMF_VM_HUGEPAGE), whatever THP's mode then. A child that makes no new
 * vma is never entered otherwise.
 *
 * Each row runs in a process P of its own (main() is never entered; a
 * process T of its own, entered, keeps khugepaged's full scans going):
 *
 *   P:  region (2 MiB, aligned): 512 pages written, THP "madvise": ptes
 *       marker: MADV_HUGEPAGE, one byte written: P is entered (rows 1, 2)
 *       THP "never" (row 1): no entry at fork may depend on the mode
 *       fork ---------------------------------------------> C
 *       munmap(region): C's pages are its own (mapcount 1)
 *                                                           C writes page 0
 *                                                           (a writable pte:
 *                                                           khugepaged wants
 *                                                           one)
 *       THP "always": C's region, no VM_HUGEPAGE, may be a THP now;
 *       khugepaged every 10 ms. C's region one PMD THP (pages 0 and
 *       511 of one 2 MiB folio, P reading C's pagemap and kpageflags: C
 *       opens no file, which could enter it by a new vma) within
 *       WAIT_SECONDS, or (rows that want none) not after FULL_SCANS
 *       full scans (full_scans, the clock)
 *
 *   row                                 a wrong kernel
 *   1 P entered: C's region collapsed   khugepaged_fork() left out, or
 *                                       made per vma or on THP's mode at
 *                                       fork: C is never scanned, its
 *                                       region stays 512 ptes
 *   2 P's THP disabled (prctl) after    C collapsed: it lost the parent's
 *     it was entered: C's region not    PR_SET_THP_DISABLE (THP_enabled
 *     collapsed; once C clears the      in its status); C not entered when
 *     flag, collapsed                   the parent's THP is disabled: the
 *                                       second half stays 512 ptes
 *   3 P not entered: C not collapsed    khugepaged_fork() enters every
 *                                       child
 */
#include <glob.h>
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
	bool entered;		/* P enters itself before fork */
	bool never_at_fork;	/* THP "never" while P forks */
	bool thp_disabled;	/* P's prctl(PR_SET_THP_DISABLE), after it entered */
	bool want_thp;		/* C's region a THP (else: not, after the scans) */
};

static const struct khugepaged_case khugepaged_cases[] = {
	{ .desc = "khugepaged scans the child of a process it scans: its pte range collapsed",
	  .entered = true, .never_at_fork = true, .want_thp = true },
	{ .desc = "a THP-disabled parent's child: khugepaged collapses nothing of it until it clears the flag",
	  .entered = true, .thp_disabled = true },
	{ .desc = "the child of a process khugepaged does not scan: not scanned either" },
};

/*
 * The knobs the rows set, as they were: THP's mode, each mTHP size's
 * (the 2 MiB one inherits, the others never: the region's pages stay
 * small ones), khugepaged's pace and limits.
 */
struct knob {
	char path[160];
	char value[160];
};

static struct knob knobs[32];
static int nr_knobs;

static void knob_value(const char *path, char *buf, size_t size)
{
	char line[160], *open_br, *close_br;
	FILE *f = fopen(path, "r");

	if (!f || !fgets(line, sizeof(line), f))
		ksft_exit_fail_msg("read %s: %s\n", path, strerror(errno));
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	/* "always [madvise] never": the bracketed word */
	open_br = strchr(line, '[');
	close_br = open_br ? strchr(open_br, ']') : NULL;
	if (close_br)
		snprintf(buf, size, "%.*s", (int)(close_br - open_br - 1), open_br + 1);
	else
		snprintf(buf, size, "%s", line);
}

static void set_knob(const char *path, const char *value)
{
	int i;

	for (i = 0; i < nr_knobs && strcmp(knobs[i].path, path); i++)
		;
	if (i == nr_knobs) {
		if (nr_knobs == ARRAY_SIZE(knobs))
			ksft_exit_fail_msg("too many knobs\n");
		snprintf(knobs[i].path, sizeof(knobs[i].path), "%s", path);
		knob_value(path, knobs[i].value, sizeof(knobs[i].value));
		nr_knobs++;
	}
	write_file(path, value);
}

static void restore_knobs(void)
{
	while (nr_knobs--)
		write_file(knobs[nr_knobs].path, knobs[nr_knobs].value);
	nr_knobs = 0;
}

/* khugepaged as fast as it goes, on every range of 512 present pages. */
static void set_pace(void)
{
	glob_t sizes;
	size_t i;

	set_knob(KHUGEPAGED "pages_to_scan", "4096");
	set_knob(KHUGEPAGED "alloc_sleep_millisecs", "10");
	set_knob(KHUGEPAGED "scan_sleep_millisecs", "10");
	set_knob(KHUGEPAGED "defrag", "1");
	set_knob(KHUGEPAGED "max_ptes_none", "511");
	/* mTHP sizes (6.8): none but the PMD size, which follows "enabled" */
	if (!glob(THP_KNOBS "hugepages-*kB/enabled", 0, NULL, &sizes)) {
		for (i = 0; i < sizes.gl_pathc; i++)
			set_knob(sizes.gl_pathv[i],
				 strstr(sizes.gl_pathv[i], "-2048kB/") ? "inherit" : "never");
		globfree(&sizes);
	}
}

static uint64_t page_flags_of(unsigned long pfn)
{
	uint64_t flags = 0;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0 || pread(fd, &flags, sizeof(flags), pfn * sizeof(flags)) != sizeof(flags))
		ksft_exit_fail_msg("/proc/kpageflags: %s\n", strerror(errno));
	close(fd);
	return flags;
}

/*
 * Is @pid's 2 MiB at @addr one PMD-size THP: its first and last pages
 * of one folio, pfns 512 apart from a 2 MiB-aligned head?
 */
static bool pmd_thp_at(pid_t pid, const uint8_t *addr)
{
	size_t last = PMD_SIZE - page_size();
	unsigned long first_pfn, last_pfn;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		ksft_exit_fail_msg("open %s: %s\n", path, strerror(errno));
	first_pfn = pagemap_get_pfn(fd, (char *)addr);
	last_pfn = pagemap_get_pfn(fd, (char *)addr + last);
	close(fd);
	if (first_pfn == -1UL || last_pfn == -1UL)
		ksft_exit_fail_msg("%s: the region is not all present\n", path);
	return first_pfn % (PMD_SIZE / page_size()) == 0 &&
	       last_pfn == first_pfn + last / page_size() &&
	       (page_flags_of(first_pfn) & (1ULL << KPF_THP)) &&
	       (page_flags_of(first_pfn) & (1ULL << KPF_COMPOUND_HEAD));
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

/* A MADV_HUGEPAGE range, one byte written: this process is entered. */
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

/*
 * Until @pid's region is a THP (@want) or for FULL_SCANS full scans
 * (!@want), WAIT_SECONDS at most: whether it is one then. @scans: the
 * full scans seen.
 */
static bool watch_region(pid_t pid, const uint8_t *region, bool want, long long *scans)
{
	long long start = read_number(KHUGEPAGED "full_scans");
	double deadline = now() + WAIT_SECONDS;
	bool thp;

	do {
		thp = pmd_thp_at(pid, region);
		*scans = read_number(KHUGEPAGED "full_scans") - start;
		if (want ? thp : *scans >= FULL_SCANS)
			return thp;
		usleep(20 * 1000);
	} while (now() < deadline);
	return pmd_thp_at(pid, region);
}

/* THP_enabled: in @pid's status (0: its THP disabled). */
static long long thp_enabled(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return proc_value(path, "THP_enabled");
}

/* Row @row as process P: exit status 0 if it holds, 1 if not. */
static void run_row_as_p(const struct khugepaged_case *row)
{
	struct lockstep ls;
	long long scans;
	uint8_t *region;
	bool ok = true;
	pid_t pid;

	set_knob(THP_KNOBS "enabled", "madvise");
	region = aligned_range();
	memset(region, 0x5a, PMD_SIZE);
	if (pmd_thp_at(getpid(), region))
		ksft_exit_fail_msg("%s: the region is a THP before fork\n", row->desc);
	if (row->entered)
		enter_khugepaged();
	if (row->thp_disabled && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		ksft_exit_fail_msg("prctl(PR_SET_THP_DISABLE): %s\n", strerror(errno));
	if (row->never_at_fork)
		set_knob(THP_KNOBS "enabled", "never");
	lockstep_init(&ls);
	pid = fork_or_fail();
	if (pid == 0) {
		/* Nothing here may make a vma (malloc, stdio): see above. */
		hear(ls.to_child[0]);
		region[0] = 0xa5;
		say(ls.to_parent[1]);
		hear(ls.to_child[0]);
		if (row->thp_disabled && prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0))
			_exit(2);
		say(ls.to_parent[1]);
		hear(ls.to_child[0]);
		_exit(0);
	}
	if (munmap(region, PMD_SIZE))
		ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
	say(ls.to_child[1]);
	hear(ls.to_parent[0]);
	set_knob(THP_KNOBS "enabled", "always");
	set_pace();
	if (row->thp_disabled && thp_enabled(pid) != 0) {
		ksft_print_msg("%s: the child's THP_enabled is %lld, want 0\n",
			       row->desc, thp_enabled(pid));
		ok = false;
	}
	if (watch_region(pid, region, row->want_thp, &scans) != row->want_thp) {
		ksft_print_msg("%s: after %lld full scans (%d s at most) the child's region is %s\n",
			       row->desc, scans, WAIT_SECONDS,
			       row->want_thp ? "512 ptes still" : "a THP");
		ok = false;
	}
	say(ls.to_child[1]);
	hear(ls.to_parent[0]);
	if (row->thp_disabled && !watch_region(pid, region, true, &scans)) {
		/* The flag cleared: an entered child is scanned now. */
		ksft_print_msg("%s: %lld full scans after the child cleared PR_SET_THP_DISABLE its region is 512 ptes still: never entered\n",
			       row->desc, scans);
		ok = false;
	}
	say(ls.to_child[1]);
	if (wait_child(pid))
		ksft_exit_fail_msg("%s: the child failed\n", row->desc);
	lockstep_close(&ls);
	restore_knobs();
	fflush(stdout);
	_exit(ok ? 0 : 1);
}

int main(void)
{
	struct lockstep ticker;
	pid_t ticker_pid;
	size_t i;

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(khugepaged_cases));
	if (access(KHUGEPAGED "full_scans", R_OK))
		ksft_exit_skip("no khugepaged (CONFIG_TRANSPARENT_HUGEPAGE): %s\n",
			       strerror(errno));
	/* T: an entered process, so that khugepaged's full scans go on. */
	set_knob(THP_KNOBS "enabled", "madvise");
	lockstep_init(&ticker);
	ticker_pid = fork_or_fail();
	if (ticker_pid == 0) {
		enter_khugepaged();
		say(ticker.to_parent[1]);
		hear(ticker.to_child[0]);
		_exit(0);
	}
	hear(ticker.to_parent[0]);
	for (i = 0; i < ARRAY_SIZE(khugepaged_cases); i++) {
		const struct khugepaged_case *row = &khugepaged_cases[i];
		pid_t pid;

		row_begin("%s", row->desc);
		pid = fork_or_fail();
		if (pid == 0)
			run_row_as_p(row);
		/* P watches for WAIT_SECONDS twice at most */
		row_result(!wait_child_within(pid, 2 * WAIT_SECONDS + 10));
	}
	say(ticker.to_child[1]);
	wait_child(ticker_pid);
	lockstep_close(&ticker);
	restore_knobs();
	ksft_finished();
}
