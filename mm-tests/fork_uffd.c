// SPDX-License-Identifier: GPL-2.0
/*
 * fork_uffd: what dup_userfaultfd() hands the child of a process with a
 * userfaultfd-registered range (MODE_MISSING: UML has no uffd-wp; the
 * uffd-wp rows are the x86_64 target's).
 *
 *   parent  [ PAGES pages, never touched, registered with uffd U ]
 *              |  fork()
 *   child   without UFFD_FEATURE_EVENT_FORK: an ordinary vma (no "um" in
 *           smaps' VmFlags); a read maps the zero page
 *           with it: registered with a new uffd U', which the parent's
 *           monitor gets in a UFFD_EVENT_FORK message and serves: the
 *           child reads what the monitor put there (UFFDIO_COPY)
 *
 * Rows, and the kernel each catches:
 *
 *   1. without EVENT_FORK: a fork that kept the parent's context would
 *      send the child's faults to U, which no one reads for it: the
 *      child blocks in handle_userfault() until its alarm kills it;
 *      one that kept VM_UFFD_MISSING without a context shows "um".
 *   2. with EVENT_FORK: a fork that reset the context (as if without
 *      the feature) gives the child zeros and no "um", and U no event;
 *      one that shared U itself sends the child's fault to U, where the
 *      monitor finds it against the wrong mm (it waits on U' only).
 *
 * The monitor is a thread: fork() waits in dup_userfaultfd_complete()
 * until someone reads the fork event, so the forking thread cannot. It
 * must not malloc() or print: glibc's fork() holds malloc's and stdio's
 * locks across the syscall, which waits for the monitor.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "mappings.h"

#define PAGES		4
#define CHILD_ALARM	10	/* s: a blocked fault ends the child */
#define MONITOR_WAIT	10000	/* ms */

static uint32_t test_id;

static int new_uffd(uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd < 0)
		ksft_exit_skip("userfaultfd: %s (CONFIG_USERFAULTFD?)\n",
			       strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		ksft_exit_fail_msg("UFFDIO_API: %s\n", strerror(errno));
	return uffd;
}

/* PAGES untouched private anon pages, registered with @uffd. */
static uint8_t *registered_range(int uffd)
{
	uint8_t *p = mmap(NULL, PAGES * page_size(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)p, .len = PAGES * page_size() },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		ksft_exit_fail_msg("UFFDIO_REGISTER: %s\n", strerror(errno));
	/* else the child's check of the flag could not fail */
	if (vma_has_flag(p, "um") != 1)
		ksft_exit_fail_msg("a registered vma without VM_UFFD_MISSING\n");
	return p;
}

/* Read one message from @uffd, waiting up to MONITOR_WAIT ms. */
static bool read_msg(int uffd, struct uffd_msg *msg)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };

	return poll(&pfd, 1, MONITOR_WAIT) == 1 &&
	       read(uffd, msg, sizeof(*msg)) == sizeof(*msg);
}

/*
 * In the child: is the range an ordinary vma (@registered false) or a
 * registered one, and does every page read as @side's (0: zeros)?
 */
static void child_reads(const uint8_t *p, bool registered, enum side side)
{
	size_t ps = page_size(), i;

	alarm(CHILD_ALARM);
	if (vma_has_flag(p, "um") != registered) {
		ksft_print_msg("child: VM_UFFD_MISSING %s\n",
			       registered ? "lost" : "kept without the feature");
		_exit(1);
	}
	for (i = 0; i < PAGES * ps; i++)
		if (p[i] != (side ? page_byte(side, test_id, i / ps, i % ps) : 0)) {
			ksft_print_msg("child: wrong byte at %zu\n", i);
			_exit(1);
		}
	_exit(0);
}

static void without_event_fork(void)
{
	int uffd = new_uffd(0), rc;
	uint8_t *p;
	pid_t pid;

	test_id = mapping_id("without EVENT_FORK");
	p = registered_range(uffd);
	pid = fork_or_fail();
	if (pid == 0)
		child_reads(p, false, 0);
	rc = wait_child(pid);
	if (rc == 128 + SIGALRM)
		ksft_print_msg("the child blocked in a fault on the parent's uffd\n");
	ksft_test_result(!rc && vma_has_flag(p, "um") == 1,
			 "without UFFD_FEATURE_EVENT_FORK the child's vma is not registered\n");
	munmap(p, PAGES * page_size());
	close(uffd);
}

struct monitor {
	int uffd;
	uint8_t *range;
	uint8_t *page;		/* what UFFDIO_COPY copies from */
	const char *wrong;	/* NULL: it served the child's range */
	int faults;
};

/* Take the fork event, then serve the child's faults on its new uffd. */
static void *monitor(void *arg)
{
	struct monitor *mon = arg;
	size_t ps = page_size();
	struct uffdio_copy copy;
	uint8_t *page = mon->page;
	struct uffd_msg msg;
	uintptr_t addr;
	int child_uffd;

	if (!read_msg(mon->uffd, &msg) || msg.event != UFFD_EVENT_FORK) {
		mon->wrong = "no UFFD_EVENT_FORK on the parent's uffd";
		return NULL;
	}
	child_uffd = msg.arg.fork.ufd;
	while (mon->faults < PAGES) {
		if (!read_msg(child_uffd, &msg))
			break;	/* the child is done, or its faults went elsewhere */
		if (msg.event != UFFD_EVENT_PAGEFAULT) {
			mon->wrong = "an event other than a fault on the child's uffd";
			break;
		}
		addr = msg.arg.pagefault.address & ~(uintptr_t)(ps - 1);
		fill(page, CHILD_SIDE, test_id, (addr - (uintptr_t)mon->range) / ps,
		     ps);
		copy = (struct uffdio_copy){ .dst = addr, .src = (uintptr_t)page,
					     .len = ps };
		if (ioctl(child_uffd, UFFDIO_COPY, &copy)) {
			mon->wrong = "UFFDIO_COPY into the child failed";
			break;
		}
		mon->faults++;
	}
	close(child_uffd);
	return NULL;
}

static void with_event_fork(void)
{
	struct monitor mon = { .uffd = new_uffd(UFFD_FEATURE_EVENT_FORK) };
	pthread_t thread;
	int rc;
	pid_t pid;

	test_id = mapping_id("with EVENT_FORK");
	mon.range = registered_range(mon.uffd);
	mon.page = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mon.page == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	if (pthread_create(&thread, NULL, monitor, &mon))
		ksft_exit_fail_msg("pthread_create failed\n");
	pid = fork_or_fail();
	if (pid == 0)
		child_reads(mon.range, true, CHILD_SIDE);
	rc = wait_child(pid);
	pthread_join(thread, NULL);
	if (mon.wrong)
		ksft_print_msg("monitor: %s\n", mon.wrong);
	if (rc == 128 + SIGALRM)
		ksft_print_msg("the child blocked in a fault no one served\n");
	ksft_test_result(!rc && !mon.wrong && mon.faults == PAGES,
			 "with UFFD_FEATURE_EVENT_FORK the child's faults reach its own uffd (%d of %d)\n",
			 mon.faults, PAGES);
	munmap(mon.range, PAGES * page_size());
	munmap(mon.page, page_size());
	close(mon.uffd);
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(2);
	without_event_fork();
	with_event_fork();
	ksft_finished();
}
