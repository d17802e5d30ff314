// SPDX-License-Identifier: GPL-2.0
/*
 * fork_settings: the settings that change what fork does with the
 * memory it copies. dup_mmap() charges every VM_ACCOUNT vma (private
 * writable, not MAP_NORESERVE outside overcommit 2) to the child through
 * security_vm_enough_memory_mm(), which applies vm.overcommit_memory:
 *
 *   0 (heuristic)  a vma larger than RAM + swap fails, each on its own
 *   1 (always)     nothing fails
 *   2 (never)      the charge must fit under CommitLimit
 *                  (overcommit_kbytes + swap here)
 *
 * What is charged is decided at mmap(): VM_ACCOUNT, which MAP_NORESERVE
 * leaves off except under overcommit 2.
 *
 * A fork that fails does so with ENOMEM and leaves Committed_AS as it
 * was: what dup_mmap() charged for the vmas it copied before the one
 * that failed is returned by exit_mmap() of the half-built child, up to
 * the XA_ZERO_ENTRY that marks where the copy stopped. And
 * vm.max_map_count limits new mappings, not fork: the child inherits the
 * parent's map_count even above it (dup_mmap() copies map_count without
 * a check), and its next mmap() fails.
 *
 *   row                                   what a wrong kernel looks like
 *   1 overcommit 2, over CommitLimit      fork succeeds (the check skipped),
 *                                         or fails but Committed_AS keeps
 *                                         the copied vmas' charge (a leak
 *                                         on the error path)
 *   2 overcommit 2, under CommitLimit     fork fails, or the child's vmas
 *                                         are not charged while it lives,
 *                                         or stay charged after it exits
 *   3 overcommit 2, vmas without          fork fails, or charges the child:
 *     VM_ACCOUNT (MAP_NORESERVE under 1)  VM_NORESERVE vmas charged
 *   4 overcommit 0, vma > RAM + swap      fork succeeds
 *   5 overcommit 0, RAM < vma < RAM+swap  fork fails: swap not counted
 *   6 overcommit 0, vmas each < RAM+swap  fork fails: the heuristic summed
 *   7 overcommit 0, MAP_NORESERVE > RAM   fork fails: a NORESERVE vma
 *                                         charged
 *   8 overcommit 1, vma > RAM + swap      fork fails
 *   9 map count over max_map_count        fork fails, or its next mmap()
 *                                         in the child succeeds (the
 *                                         child's /proc/self/maps lines,
 *                                         compared too, are a walk of its
 *                                         vmas, not its map_count)
 *
 * Committed_AS in /proc/meminfo is the percpu counter's exact sum; the
 * check of overcommit 2 reads it without the per-CPU deltas (synced when
 * the mode changes). What moves it besides these rows (the guest's
 * other processes) is small: every comparison allows a quarter of a
 * segment.
 */
#include <sys/mman.h>

#include "forklab.h"

#define MIB		(1024LL * 1024)
/* Each mode 2 row's vmas: two of SEGMENT bytes. */
#define SEGMENT		(64 * MIB)
#define SLACK		(SEGMENT / 4)

static long long committed_bytes(void)
{
	return proc_value("/proc/meminfo", "Committed_AS") * 1024;
}

/* RAM + swap, as the heuristic of overcommit 0 counts them. */
static long long ram_and_swap_bytes(void)
{
	return (proc_value("/proc/meminfo", "MemTotal") +
		proc_value("/proc/meminfo", "SwapTotal")) * 1024;
}

static void *map_private(long long len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Fork a child that waits for the parent's word (lockstep, forklab.h),
 * then exits 0. Return its pid, or -errno with nothing forked.
 */
static pid_t fork_waiting_child(struct lockstep *ls)
{
	pid_t pid;

	lockstep_init(ls);
	pid = fork_flushed();
	if (pid == 0) {
		hear(ls->to_child[0]);
		_exit(0);
	}
	return pid < 0 ? -errno : pid;
}

struct overcommit_case {
	const char *name;
	int mode;		/* vm.overcommit_memory at fork */
	/* Mapped under overcommit 1 (else, mode 2's rows: under mode 2). */
	bool mapped_in_mode_1;
	/* Mode 2: CommitLimit above Committed_AS, in half segments. */
	int limit_segments_x2;
	/* Mode 2, fork passes: what the child is charged while it lives. */
	int child_segments;
	int map_flags;		/* MAP_NORESERVE, or 0 */
	/*
	 * Modes 0, 1: the vmas' size in (RAM + swap) / 10, or RAM and half
	 * the swap; two vmas of it when @two_vmas.
	 */
	int ram_tenths;
	bool ram_and_half_swap;
	bool two_vmas;
	bool fork_fails;
};

static const struct overcommit_case overcommit_cases[] = {
	/*
	 * Two segments charged to the parent, room for one more: the
	 * first vma's copy is charged, the second's fails; if the charge
	 * of the first stayed, Committed_AS leaks a segment.
	 */
	{ "overcommit 2: fork over CommitLimit fails with ENOMEM, nothing stays charged",
	  .mode = 2, .limit_segments_x2 = 3, .fork_fails = true },
	{ "overcommit 2: fork under CommitLimit charges the child while it lives",
	  .mode = 2, .limit_segments_x2 = 5, .child_segments = 2, .fork_fails = false },
	/*
	 * What decides is the vma's VM_ACCOUNT, set at mmap(): vmas mapped
	 * MAP_NORESERVE under overcommit 1 have none, and fork charges
	 * nothing for them under overcommit 2 either (room for one segment,
	 * two not charged).
	 */
	{ "overcommit 2: vmas mapped MAP_NORESERVE under overcommit 1 are not charged",
	  .mode = 2, .mapped_in_mode_1 = true, .map_flags = MAP_NORESERVE,
	  .limit_segments_x2 = 3, .child_segments = 0, .fork_fails = false },
	{ "overcommit 0: fork of a vma larger than RAM + swap fails with ENOMEM",
	  .mode = 0, .ram_tenths = 12, .fork_fails = true },
	/* The heuristic counts swap: a vma larger than RAM alone passes. */
	{ "overcommit 0: fork of a vma larger than RAM, under RAM + swap, passes",
	  .mode = 0, .ram_and_half_swap = true, .fork_fails = false },
	/* The heuristic looks at one vma at a time, not at their sum. */
	{ "overcommit 0: fork of two vmas, each under RAM + swap, passes",
	  .mode = 0, .ram_tenths = 7, .two_vmas = true, .fork_fails = false },
	{ "overcommit 0: a MAP_NORESERVE vma larger than RAM + swap is not charged",
	  .mode = 0, .ram_tenths = 12, .map_flags = MAP_NORESERVE, .fork_fails = false },
	{ "overcommit 1: fork of a vma larger than RAM + swap passes",
	  .mode = 1, .ram_tenths = 12, .fork_fails = false },
};

static void overcommit_row(const struct overcommit_case *c)
{
	long long len, before, during = 0, after;
	void *a, *b = NULL;
	struct lockstep ls;
	int rc = 0;
	pid_t pid;
	bool ok;

	row_begin("%s", c->name);
	if (c->mode == 2) {
		len = SEGMENT;
	} else if (c->ram_and_half_swap) {
		len = (proc_value("/proc/meminfo", "MemTotal") +
		       proc_value("/proc/meminfo", "SwapTotal") / 2) * 1024;
	} else {
		len = ram_and_swap_bytes() / 10 * c->ram_tenths;
	}
	if (c->mode == 2 && !c->mapped_in_mode_1)
		/* The parent's own mappings must fit first. */
		set_commit_limit(committed_bytes() + 4 * SEGMENT);
	else
		/* Mappings larger than RAM + swap need overcommit 1. */
		set_vm("overcommit_memory", 1);
	a = map_private(len, c->map_flags);
	if (c->mode == 2 || c->two_vmas)
		b = map_private(len, c->map_flags);
	if (!a || ((c->mode == 2 || c->two_vmas) && !b))
		ksft_exit_fail_msg("%s: mmap of %lld MiB: %s\n", c->name,
				   len / MIB, strerror(errno));
	/*
	 * Two vmas, not one: mmap() merges neighbours with the same flags,
	 * MADV_RANDOM's VM_RAND_READ splits them again.
	 */
	if (b && madvise(b, len, MADV_RANDOM))
		ksft_exit_fail_msg("madvise: %s\n", strerror(errno));
	/* Written, so that the child's copy is a real one. */
	memset(a, 1, c->mode == 2 ? len : page_size());
	if (b)
		memset(b, 2, c->mode == 2 ? len : page_size());

	before = committed_bytes();
	if (c->mode == 2)
		set_commit_limit(before + c->limit_segments_x2 * SEGMENT / 2);
	else
		set_vm("overcommit_memory", c->mode);
	pid = fork_waiting_child(&ls);
	if (pid > 0) {
		during = committed_bytes();
		say(ls.to_child[1]);
		rc = wait_child(pid);
	}
	close(ls.to_parent[0]);
	close(ls.to_parent[1]);
	close(ls.to_child[0]);
	close(ls.to_child[1]);
	after = committed_bytes();
	reset_overcommit();

	if (c->fork_fails) {
		ok = pid == -ENOMEM && llabs(after - before) <= SLACK;
		if (!ok)
			ksft_print_msg("%s: fork %s, want ENOMEM; Committed_AS %lld -> %lld MiB\n",
				       c->name, pid > 0 ? "succeeded" : strerror(-pid),
				       before / MIB, after / MIB);
	} else {
		/* Mode 2's child is charged its segments while it lives. */
		ok = pid > 0 && !rc && llabs(after - before) <= SLACK &&
		     (c->mode != 2 || llabs(during - before - c->child_segments * len) <= SLACK);
		if (!ok)
			ksft_print_msg("%s: fork %s (child exit %d); Committed_AS %lld -> %lld (child alive) -> %lld MiB\n",
				       c->name, pid > 0 ? "succeeded" : strerror(-pid), rc,
				       before / MIB, during / MIB, after / MIB);
	}
	munmap(a, len);
	if (b)
		munmap(b, len);
	ksft_test_result(ok, "%s\n", c->name);
}

/*
 * Lines of /proc/self/maps: this mm's map_count. read() into the stack:
 * the child above max_map_count could not grow its heap for stdio.
 */
static int map_count(void)
{
	int fd = open("/proc/self/maps", O_RDONLY), n = 0;
	char buf[4096];
	ssize_t len, i;

	if (fd < 0)
		return -1;
	while ((len = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < len; i++)
			n += buf[i] == '\n';
	close(fd);
	return len < 0 ? -1 : n;
}

/*
 * 9: 64 more vmas (pages with a hole between each, so none merge), then
 * max_map_count below the count: fork must pass, the child's map count
 * be the parent's, its next mmap() fail with ENOMEM.
 */
static void max_map_count_row(void)
{
	const char *name = "max_map_count below the parent's map count: fork passes, the child's next mmap fails";
	size_t page = page_size();
	int fds[2], parent_count, child_count = -1, rc;
	char *area;
	pid_t pid;
	int i;

	row_begin("%s", name);
	area = mmap(NULL, 128 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	for (i = 0; i < 128; i += 2)
		if (mprotect(area + i * page, page, PROT_READ))
			ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	if (pipe(fds))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	parent_count = map_count();
	set_vm("max_map_count", parent_count - 16);
	pid = fork_flushed();
	if (pid == 0) {
		void *p = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		child_count = map_count();
		if (write(fds[1], &child_count, sizeof(child_count)) != sizeof(child_count))
			_exit(3);
		_exit(p == MAP_FAILED && errno == ENOMEM ? 0 : 1);
	}
	if (pid < 0) {
		set_vm("max_map_count", 65530);
		ksft_print_msg("%s: fork: %s\n", name, strerror(errno));
		ksft_test_result_fail("%s\n", name);
		return;
	}
	close(fds[1]);
	if (!read_report(fds[0], &child_count, sizeof(child_count)))
		child_count = -1;
	close(fds[0]);
	rc = wait_child(pid);
	/* The default, once the child's mmap() has met the limit. */
	set_vm("max_map_count", 65530);
	if (rc || child_count != parent_count)
		ksft_print_msg("%s: the child's map count %d, the parent's %d; its mmap %s\n",
			       name, child_count, parent_count,
			       rc == 1 ? "succeeded" : rc ? "did not report" : "failed with ENOMEM");
	munmap(area, 128 * page);
	ksft_test_result(!rc && child_count == parent_count, "%s\n", name);
}

int main(void)
{
	size_t i;

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(overcommit_cases) + 1);
	if (getuid())
		ksft_exit_skip("not root: cannot set vm.overcommit_memory\n");
	for (i = 0; i < ARRAY_SIZE(overcommit_cases); i++)
		overcommit_row(&overcommit_cases[i]);
	max_map_count_row();
	ksft_finished();
}
