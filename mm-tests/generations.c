// SPDX-License-Identifier: GPL-2.0
/*
 * generations: fork over four generations, so that anon_vma_fork()
 * reuses an anon_vma, and rmap must still find every page.
 *
 *   P   maps A (private anon) and writes it: anon_vma AV1, the root
 *   C   = fork(P): AV2 (parent AV1); C writes pages 0-1 (its own copies)
 *   G   = fork(C): AV3 (parent AV2); G writes pages 2-3
 *   C   unmaps A: AV2 keeps no vma of its own, one child (AV3)
 *   H   = fork(G): anon_vma_clone() walks G's chain; AV2 has no active
 *       vma and fewer than two children, so H's vma reuses AV2 (the
 *       root is never reused: its self-reference counts as a child)
 *
 * Then, each from its own side:
 *
 *   H   reads C's bytes in pages 0-1, G's in 2-3, P's in 4-7, and writes
 *       page 4: a reused anon_vma that lost the pages, or that H's write
 *       reached, shows here or in G; then it pages out its page 4, a
 *       folio on the reused anon_vma itself, which reclaim must find by
 *       rmap through it, and reads it back;
 *   G   after H is gone: still its own bytes (not H's page 4); then it
 *       pages out pages 0-3, which only it maps now (C's copies of 0-1
 *       hang off AV2, its own of 2-3 off AV3): reclaim finds each pte by
 *       rmap, through the reused AV2 for 0-1; every page must reach swap
 *       and come back with its bytes;
 *   P   after all: its own bytes.
 *
 * The 2022 use-after-free in this logic (anon_vma->degree counted two
 * things, commit 2555283eb40d) showed as a freed anon_vma that rmap then
 * walked: KASAN's report in the sanitizer build, console-scan here.
 */
#include <sys/mman.h>

#include "forklab.h"

#define PAGES	8

enum writer { P_WROTE = 1, C_WROTE, G_WROTE, H_WROTE };
enum verdict {
	H_READS, H_PAGES_OUT, G_KEEPS, G_PAGES_OUT, P_KEEPS, NR_VERDICTS
};

static const char *const verdict_rows[NR_VERDICTS] = {
	[H_READS] = "the fourth generation, on a reused anon_vma, reads each generation's pages",
	[H_PAGES_OUT] = "the fourth pages out the page it wrote, through the reused anon_vma, and reads it back",
	[G_KEEPS] = "the third keeps its own bytes after the fourth wrote",
	[G_PAGES_OUT] = "the third pages out the pages only it maps now, through rmap, and reads them back",
	[P_KEEPS] = "the first keeps its own bytes",
};

/* Shared with every generation: each writes its verdicts here. */
struct board {
	int verdict[NR_VERDICTS];	/* 0: not reached, 1: right, -1: wrong */
	int c_unmapped;
};

static struct board *board;

/* The pages hold forklab.h's page_word() pattern, per writer. */
#define REGION_ID	0x9e7

static void write_pages(uint8_t *a, enum writer who, size_t first, size_t n)
{
	fill_words(a, who, REGION_ID, first, n);
}

/* Do pages [@first, @first + @n) hold what @who wrote? */
static bool pages_hold(const uint8_t *a, enum writer who, size_t first, size_t n)
{
	long p = first_wrong_page(a, who, REGION_ID, first, n);

	if (p >= 0)
		ksft_print_msg("pid %d: page %ld is not writer %d's\n",
			       getpid(), p, who);
	return p < 0;
}

/* What every generation but P sees as pages 4-7 and the rest. */
static bool lineage_holds(const uint8_t *a)
{
	return pages_hold(a, C_WROTE, 0, 2) && pages_hold(a, G_WROTE, 2, 2) &&
	       pages_hold(a, P_WROTE, 4, 4);
}

static void set(enum verdict v, bool ok)
{
	__atomic_store_n(&board->verdict[v], ok ? 1 : -1, __ATOMIC_SEQ_CST);
}

/* In a descendant of the test: a failed fork fails this generation. */
static pid_t fork_or_exit(void)
{
	pid_t pid = fork_flushed();

	if (pid < 0) {
		ksft_print_msg("fork: %s\n", strerror(errno));
		_exit(2);
	}
	return pid;
}

/* Page out @n pages from page @first, which only this process maps. */
static bool page_out_and_back(uint8_t *a, size_t first, size_t n, enum writer who)
{
	uint8_t *p = a + first * page_size();
	size_t out;

	if (madvise(p, n * page_size(), MADV_PAGEOUT)) {
		ksft_print_msg("MADV_PAGEOUT: %s\n", strerror(errno));
		return false;
	}
	out = swapped_pages(p, n * page_size());
	if (out != n) {
		ksft_print_msg("pid %d: %zu of %zu pages reached swap\n", getpid(),
			       out, n);
		return false;
	}
	return pages_hold(a, who, first, n) && !swapped_pages(p, n * page_size());
}

static void fourth(uint8_t *a)
{
	set(H_READS, lineage_holds(a));
	/* its own copy: a new folio on the anon_vma it reused */
	write_pages(a, H_WROTE, 4, 1);
	set(H_PAGES_OUT, page_out_and_back(a, 4, 1, H_WROTE));
	_exit(0);
}

static void third(uint8_t *a)
{
	pid_t pid;

	write_pages(a, G_WROTE, 2, 2);
	while (!__atomic_load_n(&board->c_unmapped, __ATOMIC_SEQ_CST))
		usleep(1000);
	pid = fork_or_exit();
	if (pid == 0)
		fourth(a);
	if (wait_child(pid))
		_exit(1);
	set(G_KEEPS, lineage_holds(a));
	/* pages 0-3: mapped by this process alone now */
	set(G_PAGES_OUT, page_out_and_back(a, 0, 2, C_WROTE) &&
	    page_out_and_back(a, 2, 2, G_WROTE) && lineage_holds(a));
	_exit(0);
}

static void second(uint8_t *a)
{
	pid_t pid;

	write_pages(a, C_WROTE, 0, 2);
	pid = fork_or_exit();
	if (pid == 0)
		third(a);
	munmap(a, PAGES * page_size());
	__atomic_store_n(&board->c_unmapped, 1, __ATOMIC_SEQ_CST);
	_exit(wait_child(pid) ? 1 : 0);
}

int main(void)
{
	size_t len = PAGES * page_size();
	uint8_t *a;
	pid_t pid;
	int i;

	ksft_print_header();
	ksft_set_plan(NR_VERDICTS);
	board = mmap(NULL, sizeof(*board), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (board == MAP_FAILED || a == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	/* one family of processes for every row: its waits are the first's */
	row_begin("%s", verdict_rows[0]);
	write_pages(a, P_WROTE, 0, PAGES);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0)
		second(a);
	if (wait_child(pid))
		ksft_print_msg("a generation failed before its checks\n");
	set(P_KEEPS, pages_hold(a, P_WROTE, 0, PAGES));
	for (i = 0; i < NR_VERDICTS; i++)
		ksft_test_result(board->verdict[i] == 1, "%s\n", verdict_rows[i]);
	ksft_finished();
}
