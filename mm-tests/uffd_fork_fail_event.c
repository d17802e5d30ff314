// SPDX-License-Identifier: GPL-2.0
/*
 * uffd_fork_fail_event: does a fork() that failed still announce its child
 * to the parent's userfaultfd monitor? A test, and museum exhibit 06's
 * reproducer: f64e67e5d3a4 ("fork: do
 * not invoke uffd on fork if error occurs") and 985da552a98e ("fork: only
 * invoke khugepaged, ksm hooks if no error"), 2024.
 *
 * dup_mmap() calls dup_userfaultfd() for each registered vma it copies
 * and, at its end, dup_userfaultfd_complete(), which sends
 * UFFD_EVENT_FORK to the parent's uffd and waits until a monitor reads
 * it: the read() makes a userfaultfd of the child's mm and installs it in
 * the monitor's file table. Before the fix it did so even when dup_mmap()
 * had failed part way, for a child mm that was about to be torn down and
 * whose tree ends at an XA_ZERO_ENTRY marker: the monitor got a handle on
 * a half-built mm (and its close() walks that mm's vmas). The same
 * commits' series moved ksm_fork() and khugepaged_fork() behind success
 * too, for the same reason; their effect needs ksmd or khugepaged to race
 * with the teardown, which this program does not try.
 *
 * The fix's reports came from syzkaller's fault injection; this follows
 * that recipe with forklab's (mm-tests/fork_fail_nth.c): a registered
 * range with UFFD_FEATURE_EVENT_FORK, a monitor thread that reads every
 * event and closes the uffd each fork event brings, and fork() with
 * /proc/thread-self/fail-nth at N = 1, 2, ... (failslab and
 * fail_page_alloc made to see fork's allocations) until a fork ends with
 * the countdown unspent. A fork that succeeds must bring one fork event;
 * one that failed in dup_mmap(), none. Where each injection failed is read
 * from /sys/kernel/debug/fail_nth_site (forklab's patches/0009): a fork
 * that fails after dup_mmap() succeeded (alloc_pid(), say) has sent its
 * event, rightly, before the failure.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "forklab.h"

#define PAGES		4
#define MAX_NTH		2000
#define EVENT_WAIT	2000	/* ms: a successful fork's event */
#define NO_EVENT_WAIT	200	/* ms: after a failed fork */
#define NTH_SITE_PATH	"/sys/kernel/debug/fail_nth_site"

struct knob {
	const char *path, *value;
	char saved[32];
};

/* The knobs fork_fail_nth sets (kunit/fail_nth_sites.h: fail_nth_knobs). */
static struct knob knobs[] = {
	{ "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
	{ "/sys/kernel/debug/failslab/verbose", "0" },
	{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N" },
	{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N" },
	{ "/sys/kernel/debug/fail_page_alloc/min-order", "0" },
	{ "/sys/kernel/debug/fail_page_alloc/verbose", "0" },
};

static atomic_int fork_events;
static atomic_bool stop;

static bool set_knobs(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		int fd = open(knobs[i].path, O_RDONLY);
		ssize_t len;

		if (fd < 0)
			return false;
		len = read(fd, knobs[i].saved, sizeof(knobs[i].saved) - 1);
		close(fd);
		if (len <= 0)
			return false;
		knobs[i].saved[len] = '\0';
		write_file(knobs[i].path, knobs[i].value);
	}
	return true;
}

static void restore_knobs(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		write_file(knobs[i].path, knobs[i].saved);
}

/*
 * Read every event of the parent's uffd; count the fork events and close
 * the uffd each brings. No malloc() or stdio: fork() holds their locks
 * while it waits for this thread.
 */
static void *monitor(void *arg)
{
	struct pollfd pfd = { .fd = *(int *)arg, .events = POLLIN };
	struct uffd_msg msg;

	while (!atomic_load(&stop)) {
		if (poll(&pfd, 1, 100) <= 0 ||
		    read(pfd.fd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		/*
		 * Counted before the close(), which walks the child's mm: the
		 * fork returns once read() took its event, and the count is
		 * what the forking thread waits for.
		 */
		if (msg.event == UFFD_EVENT_FORK) {
			atomic_fetch_add(&fork_events, 1);
			close(msg.arg.fork.ufd);
		}
	}
	return NULL;
}

/* Wait up to @ms for fork_events to pass @before; the events that came. */
static int events_since(int before, int ms)
{
	while (atomic_load(&fork_events) == before && ms > 0) {
		usleep(10000);
		ms -= 10;
	}
	return atomic_load(&fork_events) - before;
}

/*
 * Was the last injection's stack (fail_nth_site) inside dup_mm()? That is
 * dup_mmap() or before it: dup_mm() allocates nothing after dup_mmap(),
 * which the compiler may inline into it.
 */
static bool injected_in_dup_mmap(void)
{
	char line[256];
	bool found = false;
	FILE *f = fopen(NTH_SITE_PATH, "r");

	if (!f)
		ksft_exit_fail_msg("open %s: %s\n", NTH_SITE_PATH, strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "dup_mm+", 7) || !strncmp(line, "dup_mm.", 7) ||
			!strncmp(line, "dup_mmap+", 9) || !strncmp(line, "dup_mmap.", 9);
	fclose(f);
	return found;
}

/* fork() with fail-nth at @nth; did the countdown end (an injection)? */
static pid_t fork_failing(int fail_nth_fd, int nth, bool *injected, int *err)
{
	char buf[32];
	ssize_t len;
	pid_t pid;

	snprintf(buf, sizeof(buf), "%d", nth);
	if (pwrite(fail_nth_fd, buf, strlen(buf), 0) < 0)
		ksft_exit_fail_msg("write fail-nth: %s\n", strerror(errno));
	pid = fork();
	*err = errno;
	if (pid == 0)
		_exit(0);	/* the registered range is never touched */
	len = pread(fail_nth_fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		ksft_exit_fail_msg("read fail-nth: %s\n", strerror(errno));
	buf[len] = '\0';
	*injected = atoi(buf) == 0;
	if (pwrite(fail_nth_fd, "0", 1, 0) < 0)
		ksft_exit_fail_msg("reset fail-nth: %s\n", strerror(errno));
	return pid;
}

int main(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_EVENT_FORK };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	int uffd, fd, nth, err, events, failed = 0, leaked = 0, missed = 0;
	int first_leak = 0, in_dup_mmap = 0, later_events = 0;
	bool injected = true;
	pthread_t thread;
	uint8_t *p;
	pid_t pid;

	ksft_print_header();
	ksft_set_plan(3);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		ksft_exit_skip("userfaultfd with UFFD_FEATURE_EVENT_FORK: %s\n",
			       strerror(errno));
	p = mmap(NULL, PAGES * page_size(), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	reg.range.start = (uintptr_t)p;
	reg.range.len = PAGES * page_size();
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		ksft_exit_fail_msg("UFFDIO_REGISTER: %s\n", strerror(errno));
	fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (fd < 0 || access(NTH_SITE_PATH, R_OK) || !set_knobs())
		ksft_exit_skip("no fail-nth, fault-injection debugfs or %s\n",
			       NTH_SITE_PATH);
	if (pthread_create(&thread, NULL, monitor, &uffd))
		ksft_exit_fail_msg("pthread_create failed\n");
	fflush(stdout);

	/* one walk for every row: its waits are the first's */
	row_begin("fork() ends its injections");
	for (nth = 1; nth <= MAX_NTH && injected; nth++) {
		events = atomic_load(&fork_events);
		pid = fork_failing(fd, nth, &injected, &err);
		if (pid < 0) {
			failed++;
			events = events_since(events, NO_EVENT_WAIT);
			if (!injected_in_dup_mmap()) {
				later_events += events;
				continue;
			}
			in_dup_mmap++;
			if (events) {
				leaked++;
				if (!first_leak)
					first_leak = nth;
			}
			continue;
		}
		if (events_since(events, EVENT_WAIT) != 1)
			missed++;
		if (wait_child(pid))
			ksft_exit_fail_msg("the child of injection %d failed\n", nth);
	}
	atomic_store(&stop, true);
	pthread_join(thread, NULL);
	restore_knobs();

	ksft_print_msg("%d injections, %d forks failed (ENOMEM), %d fork events\n",
		       nth - 1, failed, atomic_load(&fork_events));
	ksft_print_msg("%d failed in dup_mmap(); %d fork events from %d that failed after it\n",
		       in_dup_mmap, later_events, failed - in_dup_mmap);
	ksft_test_result(!injected && failed,
			 "fork() ends its injections (%d points)\n", nth - 2);
	if (leaked)
		ksft_print_msg("the first at injection %d\n", first_leak);
	/*
	 * Before 6.12 (f64e67e5d3a4) a failed fork's event was the design:
	 * "the monitor will keep discarding orphaned mm coming from failed
	 * forks in userland" ("userfaultfd: use RCU to free the task struct
	 * when fork fails", 2019). 6.1 writes no XA_ZERO_ENTRY marker for
	 * the monitor's close() to walk into.
	 */
	if (kernel_older_than(6, 12))
		skip_named("a fork() failed in dup_mmap() sends no UFFD_EVENT_FORK",
			   "before 6.12 it may, by design");
	else
		ksft_test_result(in_dup_mmap && !leaked,
				 "a fork() failed in dup_mmap() sends no UFFD_EVENT_FORK (%d of %d did)\n",
				 leaked, in_dup_mmap);
	ksft_test_result(!missed,
			 "each successful fork() sends one UFFD_EVENT_FORK (%d did not)\n",
			 missed);
	ksft_finished();
}
