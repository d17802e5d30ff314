// SPDX-License-Identifier: GPL-2.0
/*
 * anon_vma_degree_reuse: may fork hand an anon_vma that a vma already
 * uses to a second vma of the same child? 2555283eb40d ("mm/rmap: Fix
 * anon_vma->degree ambiguity leading to double-reuse", Jann Horn, 2022,
 * CVE-2022-42703).
 *
 * anon_vma_fork() may give a child's vma an anon_vma of its parent vma's
 * chain instead of a new one, if no vma uses it and it has at most one
 * child anon_vma. Before the fix the test was "degree < 2", degree being
 * the number of child anon_vmas plus the number of vmas that use it: a
 * leaf that one vma uses (degree 1) passed as "no vma, one child". The
 * commit message: such leaves are left behind in a chain whenever a fork
 * reuses their parent; an anon_vma can then be reused while another vma
 * still uses it; vma_merge() takes two vmas with the same ->anon_vma to
 * have the same chain, so merging two that do not leaves pages whose
 * page->mapping is an anon_vma that the merged vma is not linked to; once
 * that anon_vma is freed, an rmap walk of such a page reads freed memory.
 * Jann Horn's report (https://bugs.chromium.org/p/project-zero/issues/
 * detail?id=2365) and Seth Jenkins' write-up ("Exploiting CVE-2022-42703 -
 * Bringing back the stack attack", Project Zero, December 2022,
 * https://googleprojectzero.blogspot.com/2022/12/exploiting-CVE-2022-42703-bringing-back-the-stack-attack.html)
 * describe the trigger; their text was not at hand here, so the steps
 * below follow the commit message, worked out against 6.12's mm/rmap.c
 * anon_vma_clone() and mm/vma.c vma_merge_existing_range(). Two pages,
 * a lower and an upper half; gen1..gen6 are processes, each forked by the
 * one before (gen3b by gen3); anon_vma A, B, ... as in the comment of
 * the KUnit suite forklab_fork_anon_vma:
 *
 *   1. gen1 writes both pages (anon_vma A); gen1 forks gen2 (B), gen2
 *      gen3 (C), gen3 gen3b (D, a child of C); gen2 exits.
 *   2. gen3 forks gen4, which reuses B (no vma, one child: right in both
 *      kernels); gen4's chain is A, B, C. gen4 makes its upper half
 *      read-only: two vmas, both B's, both chained to A, B, C.
 *   3. gen4 forks gen5. C has a vma (gen3's) and a child (D): neither
 *      kernel reuses it (degree 2); gen5's lower half gets a new L, its
 *      upper half a new H (L and H children of B). gen5 writes its upper
 *      page: a COW copy whose page->mapping is H.
 *   4. gen3b and gen3 exit: C has no vma and no child left, but stays in
 *      the chains of gen4's and gen5's vmas.
 *   5. gen5 forks gen6. Its lower half reuses C (right in both kernels).
 *      Now one vma uses C: the fixed kernel gives the upper half a new
 *      anon_vma (a child of H); without the fix, C's degree is 1 and the
 *      upper half reuses C as well: two vmas of gen6 have the same
 *      ->anon_vma, C, and different chains (A, B, C, L and A, B, C, H).
 *   6. gen6 makes its upper half writable again: without the fix the
 *      halves merge into one vma, which keeps the lower half's chain; H
 *      is no longer in it, though gen5's page in the upper half is H's.
 *      Test 1: gen6's halves must stay two vmas.
 *   7. gen5 exits: without the fix no vma is chained to H any more, so
 *      H is freed (with it, gen6's upper half, a child of H, keeps it). gen6,
 *      after an RCU grace period (CONFIG_SLUB_RCU_DEBUG: KASAN poisons
 *      objects of SLAB_TYPESAFE_BY_RCU caches only after one), asks for
 *      MADV_PAGEOUT of both halves: try_to_unmap() walks the rmap of the
 *      upper page from its page->mapping, H: KASAN reports a
 *      slab-use-after-free in the read of H->root (its rmap lock,
 *      folio_lock_anon_vma_read()), and the walk finds no vma to unmap
 *      the page from. Test 2: the
 *      page must be swapped out; test 3: it must read back what gen5
 *      wrote.
 *
 * Without the anon_vma held by gen3b in step 1, the old test would also
 * go wrong in step 3 (gen5 reusing C while gen3's vma uses it), and gen5
 * would differ from the fixed kernel's already; with it, every step but
 * the fork of step 5 makes the same anon_vmas in both kernels.
 *
 * Boot: --swap (uml-run's default) for MADV_PAGEOUT.
 */
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "forklab.h"

#define REGION		0x2555	/* page_word()'s region id */
#define ANSWER_MS	30000	/* a worker that takes longer is stuck */
#define RCU_WAIT_US	1000000	/* far beyond a grace period of an idle guest */

enum gen { GEN1, GEN2, GEN3, GEN3B, GEN4, GEN5, GEN6, GENS };

static const char * const gen_name[GENS] = {
	"gen1", "gen2", "gen3", "gen3b", "gen4", "gen5", "gen6",
};

/* What a worker does: an order, then one answer (none for fork's child, exit). */
enum op { OP_FORK, OP_WRITE, OP_PROTECT, OP_VMAS, OP_PAGEOUT, OP_CHECK, OP_EXIT };

struct order {
	int op;
	int arg;	/* fork: the child's gen; write, check: writer; protect: prot */
	int first;	/* write, check: pages [first, first + n) */
	int n;
};

static int cmd[GENS][2], answer[2];
static pid_t pid[GENS];
static int pidfd[GENS] = { -1, -1, -1, -1, -1, -1, -1 };
/* Two pages between two PROT_NONE guards: no neighbour merges with them. */
static uint8_t *base;

/* The vmas of this process that overlap the two pages. */
static long count_vmas(void)
{
	uintptr_t start = (uintptr_t)base, end = start + 2 * page_size();
	unsigned long from, to;
	char line[512];
	long n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &from, &to) == 2 && from < end && to > start)
			n++;
	fclose(f);
	return n;
}

static long obey(struct order *o)
{
	size_t ps = page_size();

	switch (o->op) {
	case OP_WRITE:
		fill_words(base, o->arg, REGION, o->first, o->n);
		return 0;
	case OP_PROTECT:
		return mprotect(base + ps, ps, o->arg) ? -errno : 0;
	case OP_VMAS:
		return count_vmas();
	case OP_PAGEOUT:
		if (madvise(base, 2 * ps, MADV_PAGEOUT))
			return -errno;
		return swapped_pages(base + ps, ps);
	case OP_CHECK:
		return first_wrong_page(base, o->arg, REGION, o->first, o->n);
	}
	return -EINVAL;
}

/* A process of the lineage: does what cmd[self] says, answers on answer[]. */
static void worker(int self)
{
	struct order o;
	long r;
	int g;

	/* Only the main process orders: a worker that loses it sees EOF. */
	for (g = 0; g < GENS; g++)
		close(cmd[g][1]);
	for (;;) {
		if (read(cmd[self][0], &o, sizeof(o)) != sizeof(o))
			_exit(3);
		if (o.op == OP_EXIT)
			_exit(0);
		if (o.op == OP_FORK) {
			r = fork();
			if (r == 0) {
				self = o.arg;
				continue;
			}
			if (r < 0)
				r = -errno;
		} else {
			r = obey(&o);
		}
		if (write(answer[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
	}
}

static void kill_workers(void)
{
	int g;

	for (g = 0; g < GENS; g++)
		if (pid[g] > 0)
			kill(pid[g], SIGKILL);
}

/* Wait for @g's answer, or its death. */
static long hear_from(int g)
{
	struct pollfd fds[2] = {
		{ .fd = answer[0], .events = POLLIN },
		{ .fd = pidfd[g], .events = POLLIN },
	};
	long r;

	if (poll(fds, 2, ANSWER_MS) <= 0)
		ksft_exit_fail_msg("%s did not answer\n", gen_name[g]);
	if (!(fds[0].revents & POLLIN))
		ksft_exit_fail_msg("%s died\n", gen_name[g]);
	if (read(answer[0], &r, sizeof(r)) != sizeof(r))
		ksft_exit_fail_msg("read %s's answer: %s\n", gen_name[g],
				   strerror(errno));
	return r;
}

static long tell(int g, int op, int arg, int first, int n)
{
	struct order o = { .op = op, .arg = arg, .first = first, .n = n };

	if (write(cmd[g][1], &o, sizeof(o)) != sizeof(o))
		ksft_exit_fail_msg("order to %s: %s\n", gen_name[g], strerror(errno));
	return hear_from(g);
}

static void watch(int g, pid_t p)
{
	pid[g] = p;
	pidfd[g] = syscall(__NR_pidfd_open, p, 0);
	if (pidfd[g] < 0)
		ksft_exit_fail_msg("pidfd_open %s: %s\n", gen_name[g], strerror(errno));
}

/* @parent forks @child. */
static void spawn(int parent, int child)
{
	long r = tell(parent, OP_FORK, child, 0, 0);

	if (r <= 0)
		ksft_exit_fail_msg("%s's fork: %s\n", gen_name[parent], strerror(-r));
	watch(child, r);
}

/* @g exits; back when its mm is gone (a pidfd polls readable after exit_mm()). */
static void retire(int g)
{
	struct order o = { .op = OP_EXIT };
	struct pollfd fd = { .fd = pidfd[g], .events = POLLIN };

	if (write(cmd[g][1], &o, sizeof(o)) != sizeof(o))
		ksft_exit_fail_msg("order to %s: %s\n", gen_name[g], strerror(errno));
	if (poll(&fd, 1, ANSWER_MS) != 1)
		ksft_exit_fail_msg("%s did not exit\n", gen_name[g]);
	close(pidfd[g]);
	pid[g] = 0;
}

static void protect(int g, int prot)
{
	long r = tell(g, OP_PROTECT, prot, 0, 0);

	if (r)
		ksft_exit_fail_msg("%s's mprotect: %s\n", gen_name[g], strerror(-r));
}

static void setup(void)
{
	size_t ps = page_size();
	cpu_set_t one;
	uint8_t *p;
	int g;

	/* One CPU for all: MADV_PAGEOUT drains only its own CPU's lru batches. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		ksft_exit_fail_msg("sched_setaffinity: %s\n", strerror(errno));
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		ksft_exit_fail_msg("PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
	for (g = 0; g < GENS; g++)
		if (pipe(cmd[g]))
			ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	if (pipe(answer))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	/* Never touched here: this process's vma has no anon_vma. */
	p = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	if (mprotect(p, ps, PROT_NONE) || mprotect(p + 3 * ps, ps, PROT_NONE))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	base = p + ps;
	atexit(kill_workers);
}

int main(void)
{
	long vmas, swapped, wrong;
	pid_t p;

	ksft_print_header();
	if (proc_value("/proc/meminfo", "SwapTotal") <= 0)
		ksft_exit_skip("no swap: MADV_PAGEOUT cannot take anonymous pages\n");
	ksft_set_plan(3);
	setup();

	/* 1. A; B, C, D (gen3b's, a child of C); gen2 gone: B has no vma. */
	p = fork_or_fail();
	if (p == 0)
		worker(GEN1);
	watch(GEN1, p);
	tell(GEN1, OP_WRITE, GEN1 + 1, 0, 2);
	spawn(GEN1, GEN2);
	spawn(GEN2, GEN3);
	spawn(GEN3, GEN3B);
	retire(GEN2);
	/* 2. gen4 reuses B; its upper half becomes a vma of its own. */
	spawn(GEN3, GEN4);
	protect(GEN4, PROT_READ);
	/* 3. C is busy (gen3's vma, gen3b's D): L and H; gen5 writes H's page. */
	spawn(GEN4, GEN5);
	protect(GEN5, PROT_READ | PROT_WRITE);
	tell(GEN5, OP_WRITE, GEN5 + 1, 1, 1);
	protect(GEN5, PROT_READ);
	/* 4. C: no vma, no child. */
	retire(GEN3B);
	retire(GEN3);
	/* 5. the lower half reuses C; the upper one must not. */
	spawn(GEN5, GEN6);
	/* 6. Same flags again: do the halves merge? */
	protect(GEN6, PROT_READ | PROT_WRITE);
	vmas = tell(GEN6, OP_VMAS, 0, 0, 0);
	if (vmas == 1)
		ksft_test_result_fail("gen6's halves merged into one vma: fork gave both C, gen3's old anon_vma (reused twice)\n");
	else
		ksft_test_result(vmas == 2, "gen6's halves after mprotect: %ld vmas (want 2: different anon_vmas)\n",
				 vmas);
	/* 7. H: gen5's vma was the last one chained to it. */
	retire(GEN5);
	usleep(RCU_WAIT_US);
	swapped = tell(GEN6, OP_PAGEOUT, 0, 0, 0);
	if (swapped < 0)
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(-swapped));
	ksft_test_result(swapped == 1, "MADV_PAGEOUT swapped out %ld of gen6's 1 page that gen5 wrote%s\n",
			 swapped, swapped ? "" : " (its rmap walk found no vma)");
	wrong = tell(GEN6, OP_CHECK, GEN5 + 1, 1, 1);
	ksft_test_result(wrong < 0, "gen6 reads gen5's page back%s\n",
			 wrong < 0 ? "" : ": wrong bytes");

	retire(GEN6);
	retire(GEN4);
	retire(GEN1);
	while (waitpid(-1, NULL, 0) > 0)
		;
	ksft_finished();
}
