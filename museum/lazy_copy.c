// SPDX-License-Identifier: GPL-2.0
/*
 * lazy_copy: does fork() leave the page tables of a shared mapping to the
 * child's page faults? Exhibit 01, d992895ba2b2 ("Lazy page table copies
 * in fork()", 2.6.14).
 *
 * Follows Ray Fucillo's forktest.c, attached to "process creation time
 * increases linearly with shmem" (linux-kernel, August 2005; the thread is
 * /work/shared/seeds/lkml-2005-fork-shmem-thread.txt): a System V shared
 * memory segment of some megabytes, attached with shmat() and written by
 * the parent every 32 bytes, then a number of fork()s whose children exit
 * at once. He timed the forks (23 ms per 100 MB of segment before the fix,
 * 1 ms regardless of size after it); this program counts instead. Each
 * child, before it touches the segment, counts the present ptes of the
 * segment in /proc/self/pagemap:
 *
 *   with the rule (a shared vma has no anon_vma, faults refill it): 0
 *   without it (2.6.13: every pte copied): every page of the segment
 *
 * Then the child reads the parent's bytes back, so that a lazy fork is
 * also seen to be a correct one. Counts, not timing: the result does not
 * depend on the machine.
 */
#include <sys/ipc.h>
#include <sys/shm.h>

#include "forklab.h"

#define SEGMENT_MB	16
#define CHILDREN	5
#define STRIDE		32	/* forktest.c wrote every 32nd byte */

struct child_report {
	size_t present;		/* the segment's ptes present before any access */
	size_t wrong;		/* offsets that did not read 'R' */
};

static void child(const char *mem, size_t size, int fd)
{
	struct child_report report = { .present = present_pages(mem, size) };
	size_t i;

	for (i = 0; i < size; i += STRIDE)
		if (mem[i] != 'R')
			report.wrong++;
	if (write(fd, &report, sizeof(report)) != sizeof(report))
		_exit(2);
	_exit(0);
}

int main(void)
{
	size_t size = (size_t)SEGMENT_MB << 20, pages = size / page_size(), i;
	struct child_report report;
	int shmid, fds[2], status;
	char *mem;
	pid_t pid;

	ksft_print_header();
	if (fork_copy_policy() != FORK_COPY_LAZY)
		ksft_exit_skip("fork_copy=%s: fork copies by policy\n",
			       fork_copy_policy_name());
	ksft_set_plan(CHILDREN);

	shmid = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (shmid < 0)
		ksft_exit_fail_msg("shmget: %s\n", strerror(errno));
	mem = shmat(shmid, NULL, 0);
	/* the segment goes away with its last detach, at exit */
	shmctl(shmid, IPC_RMID, NULL);
	if (mem == (char *)-1)
		ksft_exit_fail_msg("shmat: %s\n", strerror(errno));
	for (i = 0; i < size; i += STRIDE)
		mem[i] = 'R';
	if (present_pages(mem, size) != pages)
		ksft_exit_fail_msg("the parent wrote %zu pages but maps %zu\n",
				   pages, present_pages(mem, size));
	ksft_print_msg("parent: %d MiB segment, %zu pages written\n",
		       SEGMENT_MB, pages);

	for (i = 0; i < CHILDREN; i++) {
		if (pipe(fds))
			ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
		pid = fork_or_fail();
		if (pid == 0) {
			close(fds[0]);
			child(mem, size, fds[1]);
		}
		close(fds[1]);
		if (read(fds[0], &report, sizeof(report)) != sizeof(report))
			ksft_exit_fail_msg("child %zu sent no report\n", i);
		close(fds[0]);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			ksft_exit_fail_msg("child %zu: status %#x\n", i, status);
		if (report.wrong)
			ksft_print_msg("child %zu: %zu of %zu bytes not the parent's\n",
				       i, report.wrong, size / STRIDE);
		ksft_test_result(!report.present && !report.wrong,
				 "child %zu: %zu of %zu ptes of the shared segment present after fork\n",
				 i, report.present, pages);
	}
	shmdt(mem);
	ksft_finished();
}
