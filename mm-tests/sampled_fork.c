// SPDX-License-Identifier: GPL-2.0
/*
 * sampled_fork.h's fork: forktest's, linked into forktest, forkbench and
 * forkcost (mm-tests/Makefile).
 */
#include <sys/ipc.h>
#include <sys/shm.h>
#include <time.h>

#include "sampled_fork.h"

/*
 * The segment's pages hold forklab.h's page_word() pattern, the parent's:
 * no two pages read alike (a pte that points at another page of it reads
 * wrong in nearly every word); the child compares whole pages, word by
 * word, which costs it little beside its faults.
 */
#define SEGMENT_ID	0x5e9

static void fill_page(uint8_t *seg, size_t page)
{
	fill_words(seg, PARENT_SIDE, SEGMENT_ID, page, 1);
}

static bool page_right(const volatile uint8_t *seg, size_t page)
{
	return first_wrong_page(seg, PARENT_SIDE, SEGMENT_ID, page, 1) < 0;
}

long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The pages of @seg that do not read as the parent wrote them: the
 * child's reading loop, a function of its own so that the child can run
 * all of it once before it counts (child_reads()).
 */
static noinline size_t wrong_pages(const volatile uint8_t *seg, size_t pages)
{
	size_t i, wrong = 0;

	for (i = 0; i < pages; i++)
		if (!page_right(seg, i))
			wrong++;
	return wrong;
}

/* The child: what fork gave it in @seg, sent to the parent on @fd. */
static void child_reads(int fd, const volatile uint8_t *seg, size_t pages)
{
	struct child_report rep = {};
	size_t ps = page_size();
	uint8_t *own;
	long before;

	if (seg)
		rep.present = present_pages((const void *)seg, pages * ps);
	/*
	 * The count must be the segment's faults only. The child's text is a
	 * private file mapping, which lazy fork leaves without ptes: code the
	 * child runs for the first time inside the count faults too. Whether
	 * it does depends on the kernel: 6.12's UML maps fault-around's
	 * neighbours into the host process, 6.1's only the page that faulted
	 * (forktest counted 257 faults for 256 pages there). So the reading
	 * loop runs once on a page of the child's own before the count, and
	 * minor_faults() twice: its first call may COW its stack.
	 */
	own = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (own == MAP_FAILED)
		_exit(3);
	fill_page(own, 0);
	if (wrong_pages(own, 1))
		_exit(3);
	before = minor_faults();
	before = minor_faults();
	rep.bad_pages = wrong_pages(seg, pages);
	rep.faults = minor_faults() - before;
	if (write(fd, &rep, sizeof(rep)) != sizeof(rep))
		_exit(2);
	_exit(0);
}

struct fork_sample fork_once(const uint8_t *seg, size_t pages)
{
	struct fork_sample s = {};
	struct fork_counts before;
	long long t0;
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	before = read_fork_counts();
	t0 = now_ns();
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		child_reads(fds[1], seg, pages);
	}
	s.ns = now_ns() - t0;
	close(fds[1]);
	if (!read_report(fds[0], &s.child, sizeof(s.child)))
		ksft_exit_fail_msg("no report from the child\n");
	close(fds[0]);
	if (wait_child(pid))
		ksft_exit_fail_msg("child failed\n");
	s.counts = fork_counts_delta(before, read_fork_counts());
	return s;
}

bool same_counts(struct fork_counts a, struct fork_counts b)
{
	return !memcmp(&a, &b, sizeof(a));
}

uint8_t *touched_segment(size_t pages)
{
	size_t i;
	void *seg;
	int id;

	id = shmget(IPC_PRIVATE, pages * page_size(), IPC_CREAT | 0600);
	if (id < 0)
		ksft_exit_fail_msg("shmget %zu pages: %s\n", pages, strerror(errno));
	seg = shmat(id, NULL, 0);
	if (seg == (void *)-1)
		ksft_exit_fail_msg("shmat: %s\n", strerror(errno));
	shmctl(id, IPC_RMID, NULL);	/* gone with the last detach */
	for (i = 0; i < pages; i++)
		fill_page(seg, i);
	return seg;
}
