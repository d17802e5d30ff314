// SPDX-License-Identifier: GPL-2.0
/*
 * poison_marker_fork: does the child inherit a page the parent lost? Exhibit
 * 05, 7e3ce3f8d2d2 ("mm: fix a few rare cases of using swapin error pte
 * marker", 2022).
 *
 * A page whose swap-in failed is replaced by an error pte marker, and an
 * access to it gets SIGBUS. fork() copied the marker only into a child
 * with uffd-wp registered, so the child of a process that had lost a page
 * read zeros where the parent got SIGBUS: silent corruption. The fix
 * made fork always copy the error marker. The commit carries no program
 * (a swap-in error is hard to provoke); since 6.6 UFFDIO_POISON installs
 * the same marker (PTE_MARKER_POISONED, once PTE_MARKER_SWAPIN_ERROR)
 * from user space, as selftests/mm/uffd-unit-tests.c's poison test does.
 * This is the smallest program that shows the fork side:
 *
 *   1. private anon pages registered with a userfaultfd (MODE_MISSING,
 *      UFFD_FEATURE_POISON), one page written, one UFFDIO_POISON'ed;
 *      the parent's pagemap shows the marker (PM_SWAP) and a read of it
 *      through process_vm_readv() fails;
 *   2. fork (no EVENT_FORK: the child's vma is an ordinary one): the
 *      child's pagemap shows the marker too (without the fix: pte_none);
 *   3. the child's process_vm_readv() of the page fails, EFAULT (without
 *      the fix: it reads zeros);
 *   4. a load of the page in the child gets SIGBUS (without the fix: it
 *      reads 0). On UML only with forklab's patches/0013: without it
 *      UML's page fault handler BUG()s on VM_FAULT_HWPOISON (exhibit 08).
 */
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "forklab.h"

/* A tree whose uapi has no UFFDIO_POISON (6.1) gets a program that skips. */
#ifdef UFFDIO_POISON

#define PAGES		4
#define WRITTEN		0	/* the page the parent writes */
#define POISONED	1	/* the page it poisons */

/* A read of one page through GUP (process_vm_readv): 0, or the errno. */
static int gup_read(const uint8_t *page, uint8_t *buf)
{
	struct iovec local = { .iov_base = buf, .iov_len = page_size() };
	struct iovec remote = { .iov_base = (void *)page, .iov_len = page_size() };

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) < 0)
		return errno;
	return 0;
}

static bool marker_in_pagemap(const uint8_t *page)
{
	return swapped_pages(page, page_size()) == 1 &&
	       present_pages(page, page_size()) == 0;
}

static uint8_t *poisoned_range(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_POISON };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_poison poison = { 0 };
	size_t ps = page_size();
	uint8_t *p = mmap(NULL, PAGES * ps, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	if (uffd < 0)
		ksft_exit_skip("userfaultfd: %s\n", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		ksft_exit_skip("UFFDIO_API with UFFD_FEATURE_POISON: %s\n",
			       strerror(errno));
	/* before the registration: a missing fault would wait for a monitor */
	memset(p + WRITTEN * ps, 0x5a, ps);
	reg.range.start = (uintptr_t)p;
	reg.range.len = PAGES * ps;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		ksft_exit_fail_msg("UFFDIO_REGISTER: %s\n", strerror(errno));
	poison.range.start = (uintptr_t)(p + POISONED * ps);
	poison.range.len = ps;
	if (ioctl(uffd, UFFDIO_POISON, &poison))
		ksft_exit_fail_msg("UFFDIO_POISON: %s\n", strerror(errno));
	/* the uffd stays open: the child is forked without EVENT_FORK */
	return p;
}

struct child_report {
	bool marker;
	int gup_err;
	uint8_t first_byte;	/* what a GUP read found, if it found anything */
	int load;		/* load_or_sigbus() */
};

int main(void)
{
	struct child_report r = { 0 };
	uint8_t *p, *page, *buf;
	int fds[2], status;
	pid_t pid;

	ksft_print_header();
	ksft_set_plan(4);
	buf = malloc(page_size());
	if (!buf)
		ksft_exit_fail_msg("malloc failed\n");
	p = poisoned_range();
	page = p + POISONED * page_size();
	ksft_test_result(marker_in_pagemap(page) && gup_read(page, buf) == EFAULT,
			 "parent: the poisoned page is a marker and reads fail\n");

	if (pipe(fds))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork_or_fail();
	if (pid == 0) {
		r.marker = marker_in_pagemap(page);
		memset(buf, 0xff, page_size());
		r.gup_err = gup_read(page, buf);
		r.first_byte = buf[0];
		r.load = load_or_sigbus(page);
		_exit(write(fds[1], &r, sizeof(r)) != sizeof(r));
	}
	close(fds[1]);
	if (read(fds[0], &r, sizeof(r)) != sizeof(r) ||
	    waitpid(pid, &status, 0) != pid || status)
		ksft_exit_fail_msg("the child did not report (status %#x)\n", status);

	ksft_test_result(r.marker, "child: the poisoned page is %s\n",
			 r.marker ? "a marker (PM_SWAP)" : "not a marker: pte_none");
	if (!r.gup_err)
		ksft_print_msg("child: process_vm_readv() read the page: first byte %#x\n",
			       r.first_byte);
	ksft_test_result(r.gup_err == EFAULT,
			 "child: process_vm_readv() of the poisoned page: %s\n",
			 r.gup_err ? strerror(r.gup_err) : "read it");
	if (r.load >= 0)
		ksft_test_result_fail("child: a load of the poisoned page read %#x\n", r.load);
	else
		ksft_test_result_pass("child: a load of the poisoned page got SIGBUS\n");
	ksft_finished();
}
#else
int main(void)
{
	ksft_print_header();
	ksft_exit_skip("this tree's <linux/userfaultfd.h> has no UFFDIO_POISON (6.6)\n");
}
#endif
