// SPDX-License-Identifier: GPL-2.0
/*
 * fork_fail_nth: fail each allocation fork() makes, one at a time, and
 * check that nothing leaks and the parent is untouched.
 *
 * The parent holds every mapping kind of mappings.h. For N = 1, 2, ...
 * it writes N to /proc/thread-self/fail-nth and forks: the N-th
 * allocation that failslab or fail_page_alloc sees fails. fork() must
 * then fail with ENOMEM, or succeed if the kernel can do without that
 * allocation (a "tolerated" injection: the child must still be right).
 * When fail-nth is still counting down after a fork, that fork made
 * fewer than N allocations: N - 1 is the number of injection points.
 *
 * By default failslab and fail_page_alloc ignore exactly the allocations
 * fork makes (they may sleep; order 0), so this test makes those
 * eligible, quiet, and puts each knob back at the end.
 *
 * After all attempts, everything fork allocates must be back where it
 * was: nr_page_table_pages, the vm_area_struct, anon_vma and
 * anon_vma_chain slab objects (exact when the kernel boots with
 * slub_debug on those caches, which then keep no per-cpu slabs, and
 * slab_nomerge, see mm-tests/run.list), the
 * parent's RssAnon, RssFile and RssShmem, and MemFree within
 * MEMFREE_SLACK_KB (per-cpu page lists hold freed pages out of MemFree).
 * A dup_mmap() error path that forgets a vma shows up here.
 */
#include "mappings.h"

#define MAX_ATTEMPTS	100000
#define MEMFREE_SLACK_KB 2048

struct knob {
	const char *path;
	const char *value;
	char saved[32];
};

static struct knob knobs[] = {
	{ "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
	{ "/sys/kernel/debug/failslab/verbose", "0" },
	{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N" },
	{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N" },
	{ "/sys/kernel/debug/fail_page_alloc/min-order", "0" },
	{ "/sys/kernel/debug/fail_page_alloc/verbose", "0" },
};

#define NR_KNOBS	(sizeof(knobs) / sizeof(knobs[0]))

static void write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		ksft_exit_fail_msg("write %s to %s: %s\n", value, path,
				   strerror(errno));
	close(fd);
}

static bool set_knobs(void)
{
	size_t i;

	for (i = 0; i < NR_KNOBS; i++) {
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

	for (i = 0; i < NR_KNOBS; i++)
		write_file(knobs[i].path, knobs[i].saved);
}

/* Active objects of a slab cache, from /proc/slabinfo. */
static long long slab_objects(const char *cache)
{
	char line[512], name[64];
	long long active = -1, n;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		ksft_exit_fail_msg("open /proc/slabinfo: %s\n", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", name, &n) == 2 &&
		    !strcmp(name, cache))
			active = n;
	fclose(f);
	if (active < 0)
		ksft_exit_fail_msg("no slab cache %s in /proc/slabinfo\n", cache);
	return active;
}

enum counter {
	PAGE_TABLES, VMAS, ANON_VMAS, ANON_VMA_CHAINS, RSS_ANON, RSS_FILE,
	RSS_SHMEM, MEM_FREE, NR_COUNTERS
};

static const char * const counter_names[NR_COUNTERS] = {
	"nr_page_table_pages", "vm_area_struct objects", "anon_vma objects",
	"anon_vma_chain objects", "RssAnon (kB)", "RssFile (kB)",
	"RssShmem (kB)", "MemFree (kB)",
};

static void read_counters(long long *c)
{
	c[PAGE_TABLES] = vmstat("nr_page_table_pages");
	c[VMAS] = slab_objects("vm_area_struct");
	c[ANON_VMAS] = slab_objects("anon_vma");
	c[ANON_VMA_CHAINS] = slab_objects("anon_vma_chain");
	c[RSS_ANON] = proc_value("/proc/self/status", "RssAnon");
	c[RSS_FILE] = proc_value("/proc/self/status", "RssFile");
	c[RSS_SHMEM] = proc_value("/proc/self/status", "RssShmem");
	c[MEM_FREE] = proc_value("/proc/meminfo", "MemFree");
}

static struct mapping maps[NR_MAPPINGS];

/* The child of a successful fork: every mapping as fork_mappings wants. */
static void child_checks_all(void)
{
	const char *wrong;
	long faults;
	size_t i;

	for (i = 0; i < NR_MAPPINGS; i++) {
		wrong = child_check(&maps[i], &faults);
		if (wrong) {
			ksft_print_msg("child: %s: %s\n", maps[i].desc, wrong);
			_exit(1);
		}
	}
	_exit(0);
}

static bool parent_all_intact(void)
{
	size_t i;

	for (i = 0; i < NR_MAPPINGS; i++)
		if (!parent_intact(&maps[i])) {
			ksft_print_msg("parent: %s changed\n", maps[i].desc);
			return false;
		}
	return true;
}

/* Fork with fail-nth at @nth (0: no injection); did the countdown end? */
static pid_t fork_failing(int fail_nth_fd, int nth, bool *injected)
{
	char buf[32];
	pid_t pid;
	int err;
	ssize_t len;

	snprintf(buf, sizeof(buf), "%d", nth);
	if (pwrite(fail_nth_fd, buf, strlen(buf), 0) < 0)
		ksft_exit_fail_msg("write fail-nth: %s\n", strerror(errno));
	pid = fork();
	err = errno;
	if (pid == 0)
		child_checks_all();
	len = pread(fail_nth_fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		ksft_exit_fail_msg("read fail-nth: %s\n", strerror(errno));
	buf[len] = '\0';
	*injected = nth && atoi(buf) == 0;
	if (pwrite(fail_nth_fd, "0", 1, 0) < 0)
		ksft_exit_fail_msg("reset fail-nth: %s\n", strerror(errno));
	errno = err;
	return pid;
}

int main(void)
{
	int points = -1, failed = 0, tolerated = 0, wrong_errno = 0;
	int bad_children = 0, broken_parent = 0, leaks = 0, nth, fd;
	long long before[NR_COUNTERS], after[NR_COUNTERS];
	bool injected;
	size_t i;
	pid_t pid;

	ksft_print_header();
	ksft_set_plan(4 + NR_COUNTERS);

	fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (fd < 0 || !set_knobs())
		ksft_exit_skip("no fail-nth or fault-injection debugfs (CONFIG_FAULT_INJECTION_DEBUG_FS, FAILSLAB, FAIL_PAGE_ALLOC)\n");

	for (i = 0; i < NR_MAPPINGS; i++) {
		maps[i] = mapping_table[i];
		map_one(&maps[i]);
	}
	fflush(stdout);

	/* One fork without injection first, so that lazily made caches exist. */
	pid = fork_failing(fd, 0, &injected);
	if (pid < 0 || wait_child(pid))
		ksft_exit_fail_msg("fork without injection failed\n");
	/* Reading the untouched mapping maps the zero page: do it once now. */
	if (!parent_all_intact())
		ksft_exit_fail_msg("the parent's memory changed without injection\n");
	read_counters(before);

	for (nth = 1; nth <= MAX_ATTEMPTS; nth++) {
		pid = fork_failing(fd, nth, &injected);
		if (pid < 0) {
			failed++;
			if (errno != ENOMEM) {
				ksft_print_msg("injection %d: fork failed with %s, want ENOMEM\n",
					       nth, strerror(errno));
				wrong_errno++;
			}
		} else {
			if (wait_child(pid)) {
				ksft_print_msg("injection %d: the child of a successful fork was wrong\n",
					       nth);
				bad_children++;
			}
			if (injected)
				tolerated++;
		}
		if (!parent_all_intact()) {
			ksft_print_msg("injection %d: the parent's memory changed\n", nth);
			broken_parent++;
		}
		if (pid >= 0 && !injected) {
			points = nth - 1;
			break;
		}
	}
	restore_knobs();
	read_counters(after);

	ksft_test_result(points > 0, "fork() ends its injections (%d points)\n",
			 points);
	ksft_test_result(!wrong_errno, "every failed fork() returned ENOMEM (%d failed)\n",
			 failed);
	ksft_test_result(!broken_parent, "the parent's memory is intact after each\n");
	ksft_test_result(!bad_children, "children of tolerated injections are right (%d)\n",
			 tolerated);
	for (i = 0; i < NR_COUNTERS; i++) {
		long long d = after[i] - before[i];
		bool ok = i == MEM_FREE ? d >= -MEMFREE_SLACK_KB : d == 0;

		if (!ok)
			leaks++;
		ksft_test_result(ok, "no leak: %s %lld -> %lld\n", counter_names[i],
				 before[i], after[i]);
	}
	ksft_print_msg("fork(): %d injection points, %d failed with ENOMEM, %d tolerated; %d leaks\n",
		       points, failed - wrong_errno, tolerated, leaks);
	ksft_finished();
}
