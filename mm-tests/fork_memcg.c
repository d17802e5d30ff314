// SPDX-License-Identifier: GPL-2.0
/*
 * fork_memcg: fork inside a memory cgroup (cgroup v2, CONFIG_MEMCG).
 *
 * Fork itself charges little: the child's pages are the parent's until
 * one side writes, and the child's faults charge the child's memcg
 * then. What fork does charge are the copies it must make at once: a
 * page pinned for DMA (an io_uring registered buffer here) cannot be
 * shared, and copy_pte_range() allocates the child's copy with
 * folio_prealloc(src_mm, ...), which charges it to the *parent's* mm's
 * memcg: the child is not in any group yet while copy_mm() runs
 * (cgroup_fork() gave it init_css_set; cgroup_post_fork() moves it), so
 * charging the child's mm would charge the root. The charge is
 * GFP_KERNEL, outside the page table locks (copy_present_page() asks
 * for the preallocation with -EAGAIN), so that at memory.max it can
 * reclaim; when nothing can be reclaimed and the OOM killer finds no one
 * to kill, fork fails with ENOMEM, and the half-built child's copies are
 * uncharged as its mm goes.
 *
 * Swap entries fork shares (swap_duplicate(): the child maps the
 * parent's entries) were charged once, to the memcg that swapped them
 * out (memory.swap.current); neither fork nor the child's exit changes
 * that charge; the last unmap returns it.
 *
 *   row                                   what a wrong kernel looks like
 *   1 unpinned pages                      fork charges copies: the anon of
 *                                         the group grows at fork
 *   2 pinned pages                        the early-COW copies not charged,
 *                                         or charged to the child's mm
 *                                         (the root group then): the
 *                                         group's anon does not grow by
 *                                         them while the child lives, or
 *                                         stays grown after it exits; or
 *                                         kept off the LRU (its anon LRU
 *                                         lists do not grow)
 *   3 at memory.max, swap.max 0           fork passes the limit, or fails
 *                                         but leaves the copies it made
 *                                         before the failure (HEADROOM's
 *                                         worth) charged, or leaves the
 *                                         group unable to fork once the
 *                                         limit is lifted
 *   4 at memory.max, swap to reclaim to   fork fails: its copy cannot
 *                                         reclaim (charged without
 *                                         __GFP_DIRECT_RECLAIM)
 *   5 swap entries the child shares       fork or the child's exit moves
 *                                         memory.swap.current, or the last
 *                                         unmap (once writeback is done and
 *                                         no swap cache holds a slot) does
 *                                         not return it
 *
 * Each row runs in a group of its own under /sys/fs/cgroup, which the
 * guests' init mounts; rows 3 and 4 with oom_score_adj -1000, so that
 * the memcg OOM killer (which a charge at memory.max calls after
 * reclaim fails) has no one to kill and the charge fails instead: the
 * console shows its report ("Out of memory and no killable processes").
 * memory.stat is flushed lazily (the guests have one CPU: two batches
 * of 64 pages at most may be missing) and the LRU adds pages in
 * batches: every comparison allows SLACK; each signal is PINNED, or
 * HEADROOM for what a failed fork made before it failed.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include "forklab.h"

#define MIB		(1024LL * 1024)
/* The pages each row pins or pages out. */
#define PINNED		(8 * MIB)
#define SLACK		(512 * 1024)
/*
 * Rows 3 and 4: memory.max this far above memory.current at fork; the
 * copies need PINNED, more than HEADROOM and the group's page cache.
 */
#define HEADROOM	(4 * MIB)
/* Row 4: reclaimable (unpinned) anon beside the pinned pages. */
#define RECLAIMABLE	(16 * MIB)

static uint8_t *map_written(long long len, int byte)
{
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap of %lld MiB: %s\n", len / MIB, strerror(errno));
	memset(p, byte, len);
	return p;
}

static int pin_or_exit(uint8_t *p, long long len)
{
	int ring = io_uring_pin(p, len);

	if (ring < 0)
		ksft_exit_fail_msg("io_uring: %s: no pinning path (CONFIG_IO_URING)\n",
				   strerror(errno));
	return ring;
}

static void unpin(int ring)
{
	syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0);
	close(ring);
}

/*
 * Fork a child that waits for the parent's word, reads its copy of @p
 * (@byte in each of @len bytes, else it exits 1) and exits 0. Its pid,
 * or -errno with nothing forked.
 */
static pid_t fork_waiting_child(struct lockstep *ls, const uint8_t *p,
				long long len, int byte)
{
	pid_t pid;

	lockstep_init(ls);
	pid = fork_flushed();
	if (pid == 0) {
		long long i;

		hear(ls->to_child[0]);
		for (i = 0; i < len; i++)
			if (p[i] != byte)
				_exit(1);
		_exit(0);
	}
	return pid < 0 ? -errno : pid;
}

static int let_child_finish(struct lockstep *ls, pid_t pid)
{
	int rc = 0;

	if (pid > 0) {
		say(ls->to_child[1]);
		rc = wait_child(pid);
	}
	close(ls->to_parent[0]);
	close(ls->to_parent[1]);
	close(ls->to_child[0]);
	close(ls->to_child[1]);
	return rc;
}

static bool near(long long value, long long want)
{
	return llabs(value - want) <= SLACK;
}

/* 1, 2: what fork charges for the child's pages. */
/* The group's anon pages on its LRU lists, in bytes. */
static long long anon_lru(void)
{
	return memcg_value("memory.stat", "active_anon") +
	       memcg_value("memory.stat", "inactive_anon");
}

static void charge_row(const char *name, bool pinned)
{
	long long before, during, after, lru_before, lru_during, want;
	bool ok;
	struct lockstep ls;
	int ring = -1, rc;
	uint8_t *p;
	pid_t pid;

	row_begin("%s", name);
	memcg_enter(pinned ? "pinned" : "unpinned");
	p = map_written(PINNED, 0x5a);
	if (pinned)
		ring = pin_or_exit(p, PINNED);
	before = memcg_value("memory.stat", "anon");
	lru_before = anon_lru();
	pid = fork_waiting_child(&ls, p, PINNED, 0x5a);
	during = memcg_value("memory.stat", "anon");
	lru_during = anon_lru();
	rc = let_child_finish(&ls, pid);
	after = memcg_value("memory.stat", "anon");
	if (pinned)
		unpin(ring);
	munmap(p, PINNED);
	memcg_leave();

	want = pinned ? PINNED : 0;
	ok = pid > 0 && !rc && near(during, before + want) && near(after, before) &&
	     near(lru_during, lru_before + want);
	if (!ok)
		ksft_print_msg("%s: fork %s (child exit %d); the group's anon %lld -> %lld (child alive) -> %lld KiB, on its LRU %lld -> %lld KiB\n",
			       name, pid > 0 ? "passed" : strerror(-pid), rc,
			       before / 1024, during / 1024, after / 1024,
			       lru_before / 1024, lru_during / 1024);
	ksft_test_result(ok, "%s\n", name);
}

/*
 * 3, 4: PINNED bytes pinned, RECLAIMABLE more unpinned, memory.max
 * HEADROOM above memory.current: the early-COW copies do not fit unless
 * reclaim swaps the unpinned pages out, which memory.swap.max allows
 * (@swap_max "max") or forbids ("0").
 */
static void limit_row(const char *name, const char *swap_max, bool fork_fails)
{
	long long anon_before, anon_after, oom_before, oom_after, kills, swapped;
	struct lockstep ls;
	pid_t pid, again = 0;
	uint8_t *p, *other;
	int ring, rc, rc_again = 0;
	bool ok;

	row_begin("%s", name);
	memcg_enter(fork_fails ? "limit-noswap" : "limit-swap");
	write_file("/proc/self/oom_score_adj", "-1000");
	memcg_write("memory.swap.max", swap_max);
	other = map_written(RECLAIMABLE, 0x3c);
	p = map_written(PINNED, 0x5a);
	ring = pin_or_exit(p, PINNED);
	anon_before = memcg_value("memory.stat", "anon");
	oom_before = memcg_value("memory.events", "oom");
	memcg_write_bytes("memory.max", memcg_number("memory.current") + HEADROOM);
	pid = fork_waiting_child(&ls, p, PINNED, 0x5a);
	rc = let_child_finish(&ls, pid);
	memcg_write("memory.max", "max");
	anon_after = memcg_value("memory.stat", "anon");
	oom_after = memcg_value("memory.events", "oom");
	kills = memcg_value("memory.events", "oom_kill");
	swapped = swapped_pages(other, RECLAIMABLE) * page_size();
	if (fork_fails) {
		/* Nothing of the failed fork stays: the next one passes. */
		again = fork_waiting_child(&ls, p, PINNED, 0x5a);
		rc_again = let_child_finish(&ls, again);
	}
	unpin(ring);
	munmap(p, PINNED);
	munmap(other, RECLAIMABLE);
	write_file("/proc/self/oom_score_adj", "0");
	memcg_leave();

	if (fork_fails) {
		ok = pid == -ENOMEM && near(anon_after, anon_before) &&
		     oom_after > oom_before && !kills && again > 0 && !rc_again;
		if (!ok)
			ksft_print_msg("%s: fork %s, want ENOMEM; anon %lld -> %lld KiB; oom events %lld -> %lld, kills %lld; fork without the limit %s (exit %d)\n",
				       name, pid > 0 ? "passed" : strerror(-pid),
				       anon_before / 1024, anon_after / 1024,
				       oom_before, oom_after, kills,
				       again > 0 ? "passed" : strerror(-again), rc_again);
	} else {
		/* What had to leave for the copies went to swap. */
		ok = pid > 0 && !rc && !kills && swapped >= PINNED - HEADROOM - SLACK;
		if (!ok)
			ksft_print_msg("%s: fork %s (child exit %d); %lld KiB of the unpinned pages swapped; oom kills %lld\n",
				       name, pid > 0 ? "passed" : strerror(-pid), rc,
				       swapped / 1024, kills);
	}
	ksft_test_result(ok, "%s\n", name);
}

/* 5: swap entries the child shares stay charged once. */
static void swap_row(const char *name)
{
	long long empty, paged, during, exited, unmapped;
	size_t pages = PINNED / page_size();
	struct lockstep ls;
	int tries, rc;
	uint8_t *p;
	pid_t pid;

	row_begin("%s", name);
	memcg_enter("swap");
	empty = memcg_number("memory.swap.current");
	p = map_written(PINNED, 0x5a);
	/* A page still under writeback from an earlier pageout is skipped. */
	for (tries = 0; tries < 50 && swapped_pages(p, PINNED) < pages; tries++) {
		if (madvise(p, PINNED, MADV_PAGEOUT))
			ksft_exit_fail_msg("madvise(MADV_PAGEOUT): %s\n", strerror(errno));
		usleep(20000);
	}
	if (swapped_pages(p, PINNED) < pages) {
		munmap(p, PINNED);
		memcg_leave();
		skip_named(name, "MADV_PAGEOUT left pages in memory: no swap?");
		return;
	}
	/*
	 * Written back: a folio still under writeback at the munmap() would
	 * keep its slot, charged, after the row (up to 20 s: a loaded host's
	 * swap device is slow).
	 */
	for (tries = 0; tries < 1000 && proc_value("/proc/meminfo", "Writeback"); tries++)
		usleep(20000);
	if (proc_value("/proc/meminfo", "Writeback"))
		ksft_print_msg("%s: writeback not done after 20 s\n", name);
	paged = memcg_number("memory.swap.current");
	pid = fork_waiting_child(&ls, p, 0, 0);
	during = memcg_number("memory.swap.current");
	rc = let_child_finish(&ls, pid);
	exited = memcg_number("memory.swap.current");
	munmap(p, PINNED);
	unmapped = memcg_number("memory.swap.current");
	memcg_leave();

	if (pid < 0 || rc || !near(paged, empty + PINNED) || !near(during, paged) ||
	    !near(exited, paged) || !near(unmapped, empty))
		ksft_print_msg("%s: fork %s (child exit %d); memory.swap.current %lld, paged out %lld, child alive %lld, exited %lld, unmapped %lld KiB\n",
			       name, pid > 0 ? "passed" : strerror(-pid), rc, empty / 1024,
			       paged / 1024, during / 1024, exited / 1024, unmapped / 1024);
	ksft_test_result(pid > 0 && !rc && near(paged, empty + PINNED) && near(during, paged) &&
			 near(exited, paged) && near(unmapped, empty), "%s\n", name);
}

static const char *const names[] = {
	"charge: fork of unpinned pages charges the group nothing",
	"charge: the early-COW copies of pinned pages go to the parent's group",
	"memory.max, no swap: fork fails with ENOMEM, nothing stays charged, the next passes",
	"memory.max, swap allowed: fork's copies reclaim the parent's unpinned pages to swap",
	"memory.swap.current: shared swap entries unmoved by fork and the child's exit",
};

int main(void)
{
	const char *missing;
	size_t i;

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(names));
	if (getuid())
		ksft_exit_skip("not root: cannot make cgroups\n");
	missing = memcg_missing();
	if (missing) {
		for (i = 0; i < ARRAY_SIZE(names); i++)
			skip_named(names[i], missing);
		ksft_finished();
	}
	charge_row(names[0], false);
	charge_row(names[1], true);
	limit_row(names[2], "0", true);
	limit_row(names[3], "max", false);
	swap_row(names[4]);
	ksft_finished();
}
