// SPDX-License-Identifier: GPL-2.0
/*
 * hugetlb_mkwrite_fork: the child of a fork() whose private hugetlb page
 * is pinned must not be able to write its copy when the vma is PROT_READ.
 *
 * The steps of David Hildenbrand's reproducer for d8fd84dd4ce7 ("mm/hugetlb:
 * don't map folios writable without VM_WRITE when copying during fork()"),
 * hugetlb-mkwrite-fork.c, linked from the patch
 * (https://lore.kernel.org/r/20241204153100.1967364-1-david@redhat.com):
 *
 *   1. map one private anonymous hugetlb page and write it;
 *   2. pin it long-term: register it as an io_uring fixed buffer;
 *   3. mprotect(PROT_READ);
 *   4. fork(): the page is pinned, so copy_hugetlb_page_range() gives the
 *      child its own copy at once (hugetlb_install_folio());
 *   5. the child writes: it must get SIGSEGV.
 *
 * Before the fix the copy is mapped writable and the write succeeds
 * ("[FAIL] access should not have worked" in the original).
 */
#include <sys/mman.h>

#include "forklab.h"

#define HUGE_SIZE	(2UL << 20)

int main(void)
{
	const char *desc = "the child's write to its PROT_READ copy faults";
	volatile char *child_view;
	int ring, status;
	char *p;
	pid_t pid;

	ksft_print_header();
	ksft_set_plan(1);
	p = mmap(NULL, HUGE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED)
		ksft_exit_skip("no free hugetlb page: %s\n", strerror(errno));
	memset(p, 1, HUGE_SIZE);
	ring = io_uring_pin(p, HUGE_SIZE);
	if (ring < 0)
		ksft_exit_fail_msg("io_uring pin: %s\n", strerror(errno));
	if (mprotect(p, HUGE_SIZE, PROT_READ))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	pid = fork_or_fail();
	if (pid == 0) {
		child_view = p;
		child_view[0] = 2;
		_exit(0);
	}
	status = wait_child(pid);
	if (status == 0)
		ksft_print_msg("the child wrote its PROT_READ mapping\n");
	ksft_test_result(status == 128 + SIGSEGV, "%s\n", desc);
	close(ring);
	ksft_finished();
}
