// SPDX-License-Identifier: GPL-2.0
/*
 * uffd_wp_marker_fork: does a child without uffd-wp get the parent's
 * uffd-wp pte markers? Exhibit 27, 49d6d7fb6313 ("mm/uffd: fix pte marker
 * when fork() without fork event", 2023).
 *
 * The report, bugzilla 216808 ("WARNING in copy_nonpresent_pte"), came
 * from stress-ng's userfaultfd stressor, whose process registers memory
 * for uffd-wp, write-protects it and forks without asking for
 * UFFD_FEATURE_EVENT_FORK. Where a write-protected range of a file-backed
 * vma has nothing mapped, change_protection() leaves a pte marker with
 * the uffd-wp bit; fork copies the page tables of a vma with an anon_vma
 * (d992895ba2b2), markers included, and the child (whose vma
 * dup_userfaultfd() unregistered) inherited a marker it has no use for:
 * copy_nonpresent_pte() warned and copied it.
 *
 * This program takes the shortest path there, step by step:
 *
 *   1. a memfd (shmem) of two pages, mapped MAP_PRIVATE; the parent
 *      writes the first page (a private anonymous copy: an anon_vma, so
 *      fork copies this vma's page tables);
 *   2. a userfaultfd without UFFD_FEATURE_EVENT_FORK; both pages
 *      registered (UFFDIO_REGISTER_MODE_WP) and write-protected
 *      (UFFDIO_WRITEPROTECT): the second page, never touched, gets a
 *      uffd-wp marker, which the parent's pagemap shows as PM_UFFD_WP;
 *   3. fork(); the child, whose vma is not registered, reads PM_UFFD_WP
 *      of both pages in its own pagemap: both must be clear (the present
 *      pte's bit is dropped by 8f34f1eac382's rule, the marker must not
 *      be copied), then writes both pages and reads them back.
 *
 * On a kernel with the bug the child sees PM_UFFD_WP on the second page,
 * and the console has the WARNING in copy_nonpresent_pte().
 */
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "forklab.h"

#define PAGES	2

struct child_report {
	bool wp[PAGES];		/* PM_UFFD_WP in the child's pagemap */
	bool wrote;		/* its writes read back */
};

static bool page_wp(int pagemap_fd, char *addr)
{
	return pagemap_get_entry(pagemap_fd, addr) & PM_UFFD_WP;
}

static int open_pagemap(void)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		ksft_exit_fail_msg("/proc/self/pagemap: %s\n", strerror(errno));
	return fd;
}

static void child(char *p, size_t ps, int report_fd)
{
	struct child_report r = {};
	int pagemap_fd = open_pagemap();
	int i;

	for (i = 0; i < PAGES; i++)
		r.wp[i] = page_wp(pagemap_fd, p + i * ps);
	for (i = 0; i < PAGES; i++)
		p[i * ps] = 'c';
	r.wrote = p[0] == 'c' && p[ps] == 'c';
	if (write(report_fd, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	_exit(0);
}

int main(void)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_WP_HUGETLBFS_SHMEM,
	};
	size_t ps = page_size(), len = PAGES * ps;
	struct uffdio_register reg = {
		.range.len = len,
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct uffdio_writeprotect wp = {
		.range.len = len,
		.mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};
	struct child_report r;
	int fd, uffd, pagemap_fd, fds[2], status;
	char *p;
	pid_t pid;

	ksft_print_header();
	ksft_set_plan(4);

	fd = memfd_create("uffd_wp_marker_fork", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, len))
		ksft_exit_fail_msg("memfd: %s\n", strerror(errno));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	p[0] = 'p';

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		ksft_exit_skip("userfaultfd: %s\n", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		ksft_exit_skip("UFFDIO_API with WP_HUGETLBFS_SHMEM: %s\n",
			       strerror(errno));
	reg.range.start = (unsigned long)p;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		ksft_exit_skip("UFFDIO_REGISTER_MODE_WP on shmem: %s\n",
			       strerror(errno));
	wp.range.start = (unsigned long)p;
	if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp))
		ksft_exit_fail_msg("UFFDIO_WRITEPROTECT: %s\n", strerror(errno));

	pagemap_fd = open_pagemap();
	if (!page_wp(pagemap_fd, p + ps))
		ksft_exit_skip("no uffd-wp marker on the untouched page (CONFIG_PTE_MARKER_UFFD_WP?)\n");
	ksft_test_result(page_wp(pagemap_fd, p),
			 "parent: the written page is write-protected\n");
	close(pagemap_fd);

	if (pipe(fds))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork_or_fail();
	if (pid == 0) {
		close(fds[0]);
		child(p, ps, fds[1]);
	}
	close(fds[1]);
	if (read(fds[0], &r, sizeof(r)) != sizeof(r))
		ksft_exit_fail_msg("the child reported nothing\n");
	status = wait_child(pid);
	if (status)
		ksft_exit_fail_msg("child: status %d\n", status);

	ksft_test_result(!r.wp[0],
			 "child without EVENT_FORK: no uffd-wp bit on the present page\n");
	if (r.wp[1])
		ksft_print_msg("the child's pagemap shows the parent's uffd-wp marker\n");
	ksft_test_result(!r.wp[1],
			 "child without EVENT_FORK: no uffd-wp marker on the untouched page\n");
	ksft_test_result(r.wrote, "child writes both pages\n");

	close(uffd);
	munmap(p, len);
	close(fd);
	ksft_finished();
}
