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
 *   2. one slot shared by NR_SHARERS + 1 mms: the count (62 at most in
 *      the swap map, SWAP_MAP_MAX) goes on in a continuation page from
 *      the 63rd reference. swap_duplicate() allocates that page with
 *      GFP_ATOMIC under the page-table lock; if that fails,
 *      copy_nonpresent_pte() returns -EIO and copy_pte_range() drops
 *      the locks, allocates it with GFP_KERNEL and copies the entry
 *      again. The fork of the 62nd child makes that first try fail
 *      (fail-nth, its knobs' stack filter on
 *      add_swap_count_continuation() alone), so that the retry path
 *      runs; the fork must go on. Every child reads the parent's bytes and
 *      exits; then the parent reads its own and unmaps them, and every
 *      count must be back at zero: swapoff, which frees a slot only when
 *      no pte and no count holds it, must succeed within
 *      SWAPOFF_TIMEOUT s. A fork that dropped the reference it could not
 *      count (ignoring swap_duplicate()'s failure) leaves the count
 *      wrapped below zero, held up by the swap cache: swapoff loops on
 *      a slot no pte maps. SwapFree is no witness: freed slots wait in
 *      per-CPU caches before it moves.
 *   3. COW after swap-in, the parent first: fork_mappings' paged-out row
 *      has the child write first; here the parent writes every page
 *      after fork, then the child must read the parent's old bytes. A
 *      fork that left the entries exclusive (mutant 23) lets the
 *      parent's swap-in map the swap-cache page writable and write it
 *      in place, under the child's entries (DEBUG_VM's BUG in
 *      do_swap_page() says so first here).
 */
#include <signal.h>
#include <sys/swap.h>

#include "mappings.h"

#define PAGES		8
#define NR_SHARERS	80	/* children: past SWAP_MAP_MAX (62) references */
/* The disk init swapped to: a ubd device on UML, virtio on x86_64. */
#define SWAP_DEVICE	(on_uml() ? "/dev/ubda" : "/dev/vda")
#define SWAPOFF_TIMEOUT	20
/* the child whose fork takes the 63rd reference of each slot */
#define CONTINUING_CHILD	(62 - 1)

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

/*
 * Does @p hold @side's bytes? Reading swaps it in: a swap-in the kernel
 * retries for ever (an entry whose slot a wrong count freed) fails the
 * row at the wait's limit.
 */
static bool holds(const uint8_t *p, unsigned int side)
{
	size_t ps = page_size(), i;
	bool right = true;

	wait_limit(WAIT_LIMIT_S, "the swap-in of its pages");
	for (i = 0; i < PAGES * ps && right; i++)
		right = p[i] == page_byte(side, test_id, i / ps, i % ps);
	wait_done();
	return right;
}

static void on_alarm(int sig)
{
}

/*
 * swapoff() within SWAPOFF_TIMEOUT s, then swapon() again: 0, or the
 * errno (EINTR: still looping at the timeout) after saying why.
 */
static int swapoff_and_back(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	int err;

	/* no SA_RESTART: the alarm makes swapoff() return EINTR */
	sigaction(SIGALRM, &sa, NULL);
	alarm(SWAPOFF_TIMEOUT);
	err = swapoff(SWAP_DEVICE) ? errno : 0;
	alarm(0);
	if (err == EINTR)
		ksft_print_msg("swapoff: still looping after %d s: a slot in use that no pte it found maps\n",
			       SWAPOFF_TIMEOUT);
	else if (err)
		ksft_print_msg("swapoff: %s\n", strerror(err));
	if (!err && swapon(SWAP_DEVICE, 0))
		ksft_exit_fail_msg("swapon %s again: %s\n", SWAP_DEVICE,
				   strerror(errno));
	return err;
}

#define FAIL_PAGE_ALLOC	"/sys/kernel/debug/fail_page_alloc/"
#define FAILSLAB	"/sys/kernel/debug/failslab/"

static struct text_range continuation_text = {
	.names = { "add_swap_count_continuation" } };

/* The knobs that point fail-nth at add_swap_count_continuation() alone. */
static struct {
	const char *path, *value;
	char saved[32];
} knobs[] = {
	{ FAILSLAB "stacktrace-depth", "32" },
	{ FAILSLAB "require-end", continuation_text.end },
	{ FAILSLAB "require-start", continuation_text.start },
	{ FAIL_PAGE_ALLOC "ignore-gfp-highmem", "N" },
	{ FAIL_PAGE_ALLOC "min-order", "0" },
	{ FAIL_PAGE_ALLOC "verbose", "0" },
	{ FAIL_PAGE_ALLOC "stacktrace-depth", "32" },
	{ FAIL_PAGE_ALLOC "require-end", continuation_text.end },
	{ FAIL_PAGE_ALLOC "require-start", continuation_text.start },
};

static void set_knobs(bool restore)
{
	ssize_t len;
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		if (restore) {
			write_file(knobs[i].path, knobs[i].saved);
			continue;
		}
		fd = open(knobs[i].path, O_RDONLY);
		len = fd < 0 ? -1 : read(fd, knobs[i].saved, sizeof(knobs[i].saved) - 1);
		if (len <= 0)
			ksft_exit_fail_msg("read %s: %s (CONFIG_FAULT_INJECTION_DEBUG_FS?)\n",
					   knobs[i].path, strerror(errno));
		close(fd);
		knobs[i].saved[len] = '\0';
		write_file(knobs[i].path, knobs[i].value);
	}
}

/*
 * fork() with fail-nth at 1 under the knobs above: the first page that
 * add_swap_count_continuation() asks for fails. *@injected: it did.
 */
static pid_t fork_failing_continuation(bool *injected)
{
	char buf[16] = "";
	pid_t pid;
	int fd = open("/proc/thread-self/fail-nth", O_RDWR);

	if (fd < 0)
		ksft_exit_fail_msg("open fail-nth: %s\n", strerror(errno));
	set_knobs(false);
	if (write(fd, "1", 1) != 1)
		ksft_exit_fail_msg("write fail-nth: %s\n", strerror(errno));
	pid = fork_flushed();
	if (pid == 0)
		return 0;
	*injected = pread(fd, buf, sizeof(buf) - 1, 0) > 0 && atoi(buf) == 0;
	if (pwrite(fd, "0", 1, 0) != 1)
		ksft_exit_fail_msg("reset fail-nth: %s\n", strerror(errno));
	close(fd);
	set_knobs(true);
	if (pid < 0)
		ksft_exit_fail_msg("fork after an injected continuation failure: %s\n",
				   strerror(errno));
	return pid;
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
	int go[2], err, rc;
	bool ok = true;
	uint8_t *p;
	pid_t pid;

	row_begin("swapoff after fork finds the child's entries (fork_copy=%s)",
		  fork_copy_policy_name());
	p = paged_out_pages("swapoff after fork");
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

	/* the child waits: its entries are what swapoff must find */
	err = swapoff_and_back();
	close(go[1]);
	rc = wait_child(pid);
	if (rc) {
		ksft_print_msg("the child failed (%d)\n", rc);
		ok = false;
	}
	if (err)
		ok = false;
	else if (swapped_pages(p, PAGES * page_size())) {
		ksft_print_msg("parent: swap entries left after swapoff\n");
		ok = false;
	}
	if (!holds(p, PARENT_SIDE)) {
		ksft_print_msg("parent: wrong bytes after swapoff and the child's writes\n");
		ok = false;
	}
	munmap(p, PAGES * page_size());
	row_result(ok);
}

static void one_slot_many_sharers(void)
{
	pid_t pids[NR_SHARERS];
	int go[2], i, bad = 0;
	bool ok = true, injected = false;
	uint8_t *p;

	/* 6.1: its stack-trace filter is !X86_64 only (configs/6.1.config) */
	if (access(FAILSLAB "stacktrace-depth", F_OK)) {
		skip_named("one swap slot shared by many mms",
			   "no fault-injection stack-trace filter");
		return;
	}
	row_begin("one swap slot shared by %d mms, a continuation's GFP_ATOMIC try failed (fork_copy=%s)",
		  NR_SHARERS + 1, fork_copy_policy_name());
	p = paged_out_pages("one slot, many sharers");
	find_text(&continuation_text);
	pipe_or_fail(go);
	for (i = 0; i < NR_SHARERS; i++) {
		pids[i] = i == CONTINUING_CHILD ?
			  fork_failing_continuation(&injected) : fork_or_fail();
		if (pids[i] == 0) {
			wait_for_go(go);
			_exit(holds(p, PARENT_SIDE) ? 0 : 1);
		}
	}
	close(go[0]);
	close(go[1]);
	for (i = 0; i < NR_SHARERS; i++)
		bad += wait_child(pids[i]) != 0;
	if (!injected) {
		ksft_print_msg("the fork of child %d made no continuation page to fail\n",
			       CONTINUING_CHILD + 1);
		ok = false;
	}
	if (bad) {
		ksft_print_msg("%d of %d children read wrong bytes\n", bad,
			       NR_SHARERS);
		ok = false;
	}
	if (swapped_pages(p, PAGES * page_size()) != PAGES ||
	    !holds(p, PARENT_SIDE)) {
		ksft_print_msg("parent: its pages are not its own swap entries any more\n");
		ok = false;
	}
	munmap(p, PAGES * page_size());
	/* no mm maps the slots now: every count must be back at zero */
	if (swapoff_and_back())
		ok = false;
	row_result(ok);
}

/* The parent's second bytes: written after fork, over its swap entries. */
#define PARENT_AGAIN	(CHILD_SIDE + 1)

/*
 * Row 3: COW after swap-in, both ways. Parent and child share the
 * entries; the parent writes every page first (each swapped in, read
 * only: the entry is no longer exclusive; then copied on write), the
 * child then reads the parent's old bytes, writes its own, and the
 * parent reads its new ones.
 */
static void cow_after_swap_in(void)
{
	struct lockstep ls;
	bool ok = true;
	uint8_t *p;
	int rc;
	pid_t pid;

	row_begin("COW after swap-in, the parent writing first (fork_copy=%s)",
		  fork_copy_policy_name());
	p = paged_out_pages("COW after swap-in, both ways");
	lockstep_init(&ls);
	pid = fork_or_fail();
	if (pid == 0) {
		hear(ls.to_child[0]);
		if (!holds(p, PARENT_SIDE)) {
			ksft_print_msg("child: the parent's write after fork reached it\n");
			_exit(1);
		}
		fill(p, CHILD_SIDE, test_id, 0, PAGES * page_size());
		_exit(holds(p, CHILD_SIDE) ? 0 : 1);
	}
	if (swapped_pages(p, PAGES * page_size()) != PAGES) {
		ksft_print_msg("parent: its pages are not swap entries at fork\n");
		ok = false;
	}
	wait_limit(WAIT_LIMIT_S, "the swap-in of its pages, written");
	fill(p, PARENT_AGAIN, test_id, 0, PAGES * page_size());
	wait_done();
	say(ls.to_child[1]);
	rc = wait_child(pid);
	if (rc) {
		ksft_print_msg("the child failed (%d)\n", rc);
		ok = false;
	}
	if (!holds(p, PARENT_AGAIN)) {
		ksft_print_msg("parent: the child's write reached it\n");
		ok = false;
	}
	munmap(p, PAGES * page_size());
	row_result(ok);
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(3);
	if (access(SWAP_DEVICE, F_OK))
		ksft_exit_skip("no %s to swap to\n", SWAP_DEVICE);
	swapoff_after_fork();
	one_slot_many_sharers();
	cow_after_swap_in();
	ksft_finished();
}
