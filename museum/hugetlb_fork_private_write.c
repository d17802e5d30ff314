// SPDX-License-Identifier: GPL-2.0
/*
 * hugetlb_fork_private_write: does a child's write to a private hugetlb
 * page after fork() stay in the child? Exhibit 21, 84894e1c42e9
 * ("mm/hugetlb: fix cow where page writtable in child", 2021).
 *
 * The fix's commit message names the public test: "memfd_test hugetlbfs"
 * (tools/testing/selftests/memfd/memfd_test.c, run by run_hugetlbfs_test.sh),
 * whose mfd_assert_fork_private_write() this program follows step by step:
 *
 *   1. a hugetlbfs memfd (memfd_create(MFD_HUGETLB)) of one huge page,
 *      mapped MAP_PRIVATE, PROT_READ | PROT_WRITE;
 *   2. the parent writes 22 into its first int (a private huge page, an
 *      anon_vma: fork copies the huge pte, copy_hugetlb_page_range());
 *   3. fork(); the child writes 33 into the same int and exits;
 *   4. the parent, after waitpid(), must still read 22: memfd_test prints
 *      "MAP_PRIVATE copy-on-write failed" and abort()s otherwise.
 *
 * memfd_test runs it under F_SEAL_FUTURE_WRITE (test_seal_future_write());
 * the seal plays no part in the copy, and this program seals too, so that
 * it takes the same path. Without the fix, copy_hugetlb_page_range()
 * write-protected the parent's huge pte but installed the entry it had
 * read before that, still writable, in the child: the child's write went
 * into the page the parent maps, and the parent read 33.
 *
 * Needs one free 2 MiB huge page for the mapping and one for the child's
 * COW copy (hugepages=4 on the kernel command line, or this program sets
 * vm.nr_hugepages).
 */
#include <sys/mman.h>

#include "forklab.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE	0x0010
#endif

#define NR_HUGEPAGES	"/proc/sys/vm/nr_hugepages"
#define PARENT_VALUE	22
#define CHILD_VALUE	33

static size_t huge_page_size(void)
{
	long long kb = proc_value("/proc/meminfo", "Hugepagesize");

	return kb > 0 ? (size_t)kb << 10 : 2UL << 20;
}

static void want_huge_pages(long pages)
{
	char value[16];

	if (proc_value("/proc/meminfo", "HugePages_Free") >= pages)
		return;
	if (access(NR_HUGEPAGES, W_OK))
		return;
	snprintf(value, sizeof(value), "%ld", pages);
	write_file(NR_HUGEPAGES, value);
}

int main(void)
{
	size_t size = huge_page_size();
	int fd, status;
	int *p;
	pid_t pid;

	ksft_print_header();
	ksft_set_plan(2);
	want_huge_pages(4);
	fd = memfd_create("kern_memfd_seal_future_write",
			  MFD_HUGETLB | MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		ksft_exit_skip("memfd_create(MFD_HUGETLB): %s\n",
			       strerror(errno));
	if (ftruncate(fd, size))
		ksft_exit_fail_msg("ftruncate: %s\n", strerror(errno));
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE))
		ksft_exit_fail_msg("F_SEAL_FUTURE_WRITE: %s\n", strerror(errno));

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		ksft_exit_skip("mmap of a hugetlb memfd: %s\n", strerror(errno));
	p[0] = PARENT_VALUE;

	pid = fork_or_fail();
	if (pid == 0) {
		p[0] = CHILD_VALUE;
		_exit(p[0] == CHILD_VALUE ? 0 : 1);
	}
	status = wait_child(pid);
	ksft_test_result(status == 0, "child reads its own write (status %d)\n",
			 status);

	if (p[0] != PARENT_VALUE)
		ksft_print_msg("parent reads %d after the child wrote %d: MAP_PRIVATE copy-on-write failed\n",
			       p[0], CHILD_VALUE);
	ksft_test_result(p[0] == PARENT_VALUE,
			 "parent keeps its write to the private hugetlb page\n");

	munmap(p, size);
	close(fd);
	ksft_finished();
}
