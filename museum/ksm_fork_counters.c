// SPDX-License-Identifier: GPL-2.0
/*
 * ksm_fork_counters: does the child of a process with KSM-merged pages
 * start with KSM figures of its own? Exhibit 03, 4d6fc29f3634 ("mm/ksm:
 * fix incorrect KSM counter handling in mm_struct during fork").
 *
 * dup_mm() copies the parent's mm_struct whole, its KSM counters with
 * it: ksm_merging_pages and ksm_rmap_items count the parent's rmap_items,
 * which the child does not have (ksmd scans it anew), and ksm_zero_pages
 * counts zero-page ptes that fork did copy, but the global
 * /sys/kernel/mm/ksm/ksm_zero_pages was not raised by them. ksm_fork()
 * must reset the first two and add the third to the global count.
 *
 * The steps follow the fix's description (merge, stop ksmd, fork, read
 * the child's counters), as the forklab notes' row 33 ran it on 6.1
 * (../shared/notes/fork-bug-history.md), written here from that text:
 *
 *   1. 64 equal pages, MADV_MERGEABLE; ksmd (run=1, pages_to_scan
 *      high, sleep_millisecs 0) until they are merged, then run=0;
 *      fork: the child's ksm_merging_pages and ksm_rmap_items are 0
 *      (without the fix: the parent's 64 and its rmap_items).
 *   2. with use_zero_pages=1, 64 written pages of zeros merged into the
 *      zero page; fork: the global ksm_zero_pages grows by the child's
 *      ksm_zero_pages (without the fix: it stays, and each exit of a
 *      child takes the child's count off it again).
 */
#include <sys/mman.h>

#include "forklab.h"

#define PAGES		64
#define MERGE_WAIT	1000	/* tries of 10 ms */

struct child_figures {
	long long merging_pages, rmap_items, zero_pages, global_zero_pages;
};

static void set_knob(const char *name, const char *value)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", name);
	write_file(path, value);
}

/* A file that holds one number. */
/* The global count; -1 where the kernel has none (6.1). */
static long long global_zero_pages(void)
{
	if (access("/sys/kernel/mm/ksm/ksm_zero_pages", R_OK))
		return -1;
	return read_number("/sys/kernel/mm/ksm/ksm_zero_pages");
}

/* ksmd at full speed until this process's @stat reaches PAGES; then stop it. */
static long long merge(const char *stat)
{
	long long n = -1;
	int tries;

	set_knob("pages_to_scan", "10000");
	set_knob("sleep_millisecs", "0");
	set_knob("run", "1");
	for (tries = 0; tries < MERGE_WAIT; tries++) {
		/* 6.1's ksm_stat has rmap_items only; this file is older. */
		if (!strcmp(stat, "ksm_merging_pages"))
			n = read_number("/proc/self/ksm_merging_pages");
		else
			n = proc_value("/proc/self/ksm_stat", stat);
		if (n >= PAGES)
			break;
		usleep(10000);
	}
	set_knob("run", "0");
	return n;
}

static uint8_t *mergeable(int byte)
{
	size_t size = PAGES * page_size();
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(p, byte, size);
	if (madvise(p, size, MADV_MERGEABLE))
		ksft_exit_fail_msg("MADV_MERGEABLE: %s\n", strerror(errno));
	return p;
}

/* Fork; the child reports its figures, read before it does anything else. */
static struct child_figures fork_and_read(void)
{
	struct child_figures c;
	int fds[2], status;
	pid_t pid;

	if (pipe(fds))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork_or_fail();
	if (pid == 0) {
		c.merging_pages = read_number("/proc/self/ksm_merging_pages");
		c.rmap_items = proc_value("/proc/self/ksm_stat", "ksm_rmap_items");
		c.zero_pages = proc_value("/proc/self/ksm_stat", "ksm_zero_pages");
		c.global_zero_pages = global_zero_pages();
		_exit(write(fds[1], &c, sizeof(c)) != sizeof(c));
	}
	close(fds[1]);
	if (read(fds[0], &c, sizeof(c)) != sizeof(c))
		ksft_exit_fail_msg("the child sent no figures\n");
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || status)
		ksft_exit_fail_msg("child: status %#x\n", status);
	return c;
}

static void merged_pages(void)
{
	uint8_t *p = mergeable(0x5a);
	struct child_figures c;
	long long merged = merge("ksm_merging_pages");

	if (merged < PAGES)
		ksft_exit_fail_msg("ksmd merged %lld of %d pages\n", merged, PAGES);
	ksft_print_msg("parent: ksm_merging_pages %lld, ksm_rmap_items %lld\n",
		       merged, proc_value("/proc/self/ksm_stat", "ksm_rmap_items"));
	c = fork_and_read();
	ksft_test_result(c.merging_pages == 0,
			 "the child's ksm_merging_pages after fork: %lld\n",
			 c.merging_pages);
	ksft_test_result(c.rmap_items == 0,
			 "the child's ksm_rmap_items after fork: %lld\n",
			 c.rmap_items);
	munmap(p, PAGES * page_size());
}

static void zero_pages(void)
{
	uint8_t *p;
	struct child_figures c;
	long long merged, before;

	/* Per-process ksm_zero_pages came after 6.1: nothing to count there. */
	if (global_zero_pages() < 0) {
		ksft_test_result_skip("the global ksm_zero_pages after fork: this kernel has no ksm_zero_pages\n");
		ksft_test_result_skip("the global ksm_zero_pages after the child's exit: this kernel has no ksm_zero_pages\n");
		return;
	}
	set_knob("use_zero_pages", "1");
	p = mergeable(0);
	merged = merge("ksm_zero_pages");
	if (merged < PAGES)
		ksft_exit_fail_msg("ksmd mapped the zero page at %lld of %d pages\n",
				   merged, PAGES);
	before = global_zero_pages();
	ksft_print_msg("parent: ksm_zero_pages %lld, global %lld\n", merged, before);
	c = fork_and_read();
	ksft_print_msg("child: ksm_zero_pages %lld\n", c.zero_pages);
	ksft_test_result(c.global_zero_pages == before + c.zero_pages,
			 "the global ksm_zero_pages after fork: %lld (want %lld)\n",
			 c.global_zero_pages, before + c.zero_pages);
	ksft_test_result(global_zero_pages() == before,
			 "the global ksm_zero_pages after the child's exit: %lld (want %lld)\n",
			 global_zero_pages(), before);
	munmap(p, PAGES * page_size());
	set_knob("use_zero_pages", "0");
}

int main(void)
{
	ksft_print_header();
	if (access("/sys/kernel/mm/ksm/run", W_OK))
		ksft_exit_skip("no writable /sys/kernel/mm/ksm (CONFIG_KSM? root?)\n");
	ksft_set_plan(4);
	merged_pages();
	zero_pages();
	ksft_finished();
}
