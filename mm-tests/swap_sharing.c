// SPDX-License-Identifier: GPL-2.0
/*
 * swap_sharing: the swap entries fork hands the child, seen from the swap
 * device's side. copy_nonpresent_pte() does three things with one: it
 * takes a reference on the slot (swap_duplicate()), or, past
 * SWAP_MAP_MAX (62) of them, has add_swap_count_continuation() make room
 * for more; it puts the child's mm on the mmlist that swapoff walks; and
 * it makes the entry shared (no longer exclusive).
 *
 * The parent writes PAGES pages (bytes unique to the test, page and
 * writer: page_byte() of mappings.h) and pages them out:
 *
 *   parent  [ swap entry | swap entry | ... ]  --fork-->  children: the
 *                 \______________________________________ same entries
 *                  one slot each, count = parent + children
 *
 * Rows, and the kernel each catches:
 *
 *   1. swapoff after fork: swapoff must find every pte of the slots it
 *      empties, the child's too, through mmlist. A fork that did not put
 *      the child's mm there leaves swapoff looping over slots it cannot
 *      account for (it gives up only when signalled): here it is given
 *      SWAPOFF_TIMEOUT s. Both sides then hold the pages, not entries,
 *      and read their bytes; the child writes its own without the
 *      parent seeing them.
 *   2. one slot shared by NR_SHARERS mms: the count overflows into
 *      continuation pages at the 62nd reference. A fork that dropped a
 *      reference there (or failed the fork) would free the slot while
 *      mms still map it: the swap space in use would drop before the
 *      last mm let go, and the parent would read whatever the slot held
 *      next. The swap in use must be the same before the forks, with
 *      every child alive, and after every child has read its copy and
 *      gone.
 */
#include <signal.h>
#include <sys/swap.h>

#include "mappings.h"

#define PAGES		8
#define NR_SHARERS	80	/* > SWAP_MAP_MAX (0x3e) + one continuation */
#define SWAP_DEVICE	"/dev/ubda"
#define SWAPOFF_TIMEOUT	20

static uint32_t test_id;

static uint8_t *paged_out_pages(const char *desc)
{
	uint8_t *p = mmap(NULL, PAGES * page_size(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int tries;

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	test_id = mapping_id(desc);
	fill(p, PARENT_SIDE, test_id, 0, PAGES * page_size());
	/* a page still under writeback from an earlier pageout is skipped */
	for (tries = 0; tries < 50; tries++) {
		if (madvise(p, PAGES * page_size(), MADV_PAGEOUT))
			ksft_exit_fail_msg("madvise(MADV_PAGEOUT): %s\n",
					   strerror(errno));
		if (swapped_pages(p, PAGES * page_size()) == PAGES)
			return p;
		usleep(20000);
	}
	ksft_exit_skip("MADV_PAGEOUT left pages in memory: no swap?\n");
}

/* Does @p hold @side's bytes? Reading swaps it in. */
static bool holds(const uint8_t *p, enum side side)
{
	size_t ps = page_size(), i;

	for (i = 0; i < PAGES * ps; i++)
		if (p[i] != page_byte(side, test_id, i / ps, i % ps))
			return false;
	return true;
}

/* Swap space in use, in kB (/proc/meminfo). */
static long long swap_used(void)
{
	return proc_value("/proc/meminfo", "SwapTotal") -
	       proc_value("/proc/meminfo", "SwapFree");
}

static void on_alarm(int sig)
{
}

static void pipe_or_fail(int fds[2])
{
	if (pipe(fds))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
}

/* In a child: block until the parent closes the other end of @fds. */
static void wait_for_go(int fds[2])
{
	char c;

	close(fds[1]);
	if (read(fds[0], &c, 1) != 0)
		_exit(2);
}

static void swapoff_after_fork(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	uint8_t *p = paged_out_pages("swapoff after fork");
	int go[2], err, rc;
	bool ok = true;
	pid_t pid;

	pipe_or_fail(go);
	pid = fork_or_fail();
	if (pid == 0) {
		wait_for_go(go);
		/* swapoff brought every page back: no entry left, all ptes */
		if (swapped_pages(p, PAGES * page_size()) ||
		    present_pages(p, PAGES * page_size()) != PAGES) {
			ksft_print_msg("child: %zu swap entries, %zu ptes after swapoff\n",
				       swapped_pages(p, PAGES * page_size()),
				       present_pages(p, PAGES * page_size()));
			_exit(1);
		}
		if (!holds(p, PARENT_SIDE)) {
			ksft_print_msg("child: wrong bytes after swapoff\n");
			_exit(1);
		}
		fill(p, CHILD_SIDE, test_id, 0, PAGES * page_size());
		_exit(0);
	}
	close(go[0]);

	/* no SA_RESTART: the alarm makes swapoff() return EINTR */
	sigaction(SIGALRM, &sa, NULL);
	alarm(SWAPOFF_TIMEOUT);
	err = swapoff(SWAP_DEVICE) ? errno : 0;
	alarm(0);
	if (err == EINTR) {
		ksft_print_msg("swapoff: still looping after %d s: a pte of the device it did not find (mmlist)\n",
			       SWAPOFF_TIMEOUT);
		ok = false;
	} else if (err) {
		ksft_print_msg("swapoff: %s\n", strerror(err));
		ok = false;
	}
	close(go[1]);
	rc = wait_child(pid);
	if (rc) {
		ksft_print_msg("the child failed (%d)\n", rc);
		ok = false;
	}
	if (!err && swapped_pages(p, PAGES * page_size())) {
		ksft_print_msg("parent: swap entries left after swapoff\n");
		ok = false;
	}
	if (!holds(p, PARENT_SIDE)) {
		ksft_print_msg("parent: wrong bytes after swapoff and the child's writes\n");
		ok = false;
	}
	if (!err && swapon(SWAP_DEVICE, 0))
		ksft_exit_fail_msg("swapon %s again: %s\n", SWAP_DEVICE,
				   strerror(errno));
	munmap(p, PAGES * page_size());
	ksft_test_result(ok, "swapoff after fork finds the child's entries (fork_copy=%s)\n",
			 fork_copy_policy_name());
}

static void one_slot_many_sharers(void)
{
	uint8_t *p = paged_out_pages("one slot, many sharers");
	long long before, alive, after;
	pid_t pids[NR_SHARERS];
	int go[2], i, bad = 0;
	bool ok = true;

	before = swap_used();
	pipe_or_fail(go);
	for (i = 0; i < NR_SHARERS; i++) {
		pids[i] = fork_or_fail();
		if (pids[i] == 0) {
			wait_for_go(go);
			_exit(holds(p, PARENT_SIDE) ? 0 : 1);
		}
	}
	close(go[0]);
	alive = swap_used();
	close(go[1]);
	for (i = 0; i < NR_SHARERS; i++)
		bad += wait_child(pids[i]) != 0;
	after = swap_used();
	if (bad) {
		ksft_print_msg("%d of %d children read wrong bytes\n", bad,
			       NR_SHARERS);
		ok = false;
	}
	if (alive != before || after != before) {
		ksft_print_msg("swap in use: %lld kB before the forks, %lld with %d children, %lld after them\n",
			       before, alive, NR_SHARERS, after);
		ok = false;
	}
	if (swapped_pages(p, PAGES * page_size()) != PAGES ||
	    !holds(p, PARENT_SIDE)) {
		ksft_print_msg("parent: its pages are not its own swap entries any more\n");
		ok = false;
	}
	munmap(p, PAGES * page_size());
	ksft_test_result(ok, "one swap slot shared by %d mms (count continuation) (fork_copy=%s)\n",
			 NR_SHARERS + 1, fork_copy_policy_name());
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(2);
	if (access(SWAP_DEVICE, F_OK))
		ksft_exit_skip("no %s to swap to\n", SWAP_DEVICE);
	one_slot_many_sharers();
	swapoff_after_fork();
	ksft_finished();
}
