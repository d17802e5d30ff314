// SPDX-License-Identifier: GPL-2.0
/*
 * ptrace_poke: a debugger writes into a tracee's read-only file mapping,
 * then the tracee forks.
 *
 * PTRACE_POKEDATA and /proc/PID/mem write with FOLL_FORCE. Into a
 * PROT_READ MAP_PRIVATE file mapping the write succeeds: it COWs an
 * anonymous page, the vma gets an anon_vma, and fork must copy it (a
 * child that refaulted from the file would lose the poke: cda540ace6a1
 * kept this case working through the lazy copy). Into a PROT_READ
 * MAP_SHARED mapping it must fail with EIO and leave the file as it was:
 * an anonymous page inside a shared vma is the "awkward case" of the 2005
 * thread, which fork would skip.
 *
 *   debugger (this process)         tracee                grandchild
 *   mmap file, fork ------------->  PTRACE_TRACEME
 *                                   raise(SIGSTOP)
 *   poke the word at addr
 *   PTRACE_CONT ------------------> fork() ------------>  read addr,
 *                                                         exit 0 if poked
 */
#include <sys/mman.h>
#include <sys/ptrace.h>

#include "forklab.h"

#define POKED	0x0123456789abcdefULL

enum poke_path { POKEDATA, PROC_MEM };

static const char *path_name(enum poke_path path)
{
	return path == POKEDATA ? "PTRACE_POKEDATA" : "/proc/PID/mem";
}

static int make_file(uint64_t *word)
{
	char path[] = "/tmp/forklab-poke-XXXXXX";
	size_t ps = page_size();
	uint8_t *page = calloc(1, ps);
	int fd = mkstemp(path);

	if (fd < 0 || !page)
		ksft_exit_fail_msg("mkstemp: %s\n", strerror(errno));
	memset(page, 0x11, ps);
	if (write(fd, page, ps) != (ssize_t)ps)
		ksft_exit_fail_msg("write: %s\n", strerror(errno));
	memcpy(word, page, sizeof(*word));
	free(page);
	unlink(path);
	return fd;
}

/* The tracee: stop for the debugger, then fork and report what the child saw. */
static void tracee(volatile uint64_t *addr)
{
	pid_t pid;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		_exit(10);
	raise(SIGSTOP);
	pid = fork();
	if (pid < 0)
		_exit(11);
	if (pid == 0)
		_exit(*addr == POKED ? 0 : 1);
	_exit(wait_child(pid));
}

static int poke(pid_t pid, uint64_t *addr, enum poke_path path)
{
	char mem[64];
	uint64_t value = POKED;
	int fd, ret;

	if (path == POKEDATA)
		return ptrace(PTRACE_POKEDATA, pid, addr, (void *)value) ? errno : 0;
	snprintf(mem, sizeof(mem), "/proc/%d/mem", pid);
	fd = open(mem, O_RDWR);
	if (fd < 0)
		return errno;
	ret = pwrite(fd, &value, sizeof(value), (off_t)(uintptr_t)addr) ==
	      sizeof(value) ? 0 : errno;
	close(fd);
	return ret;
}

static void test_poke(int flags, enum poke_path path)
{
	bool shared = flags == MAP_SHARED;
	uint64_t file_word, now;
	int fd, err, status, rc;
	uint64_t *addr;
	bool ok = true;
	pid_t pid;

	row_begin("%s into PROT_READ %s file mapping: %s", path_name(path),
		  shared ? "MAP_SHARED" : "MAP_PRIVATE",
		  shared ? "EIO, file unchanged" : "seen by a child forked later");
	fd = make_file(&file_word);
	addr = mmap(NULL, page_size(), PROT_READ, flags, fd, 0);
	if (addr == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0)
		tracee(addr);
	wait_limit(WAIT_LIMIT_S, "the tracee's stop");
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		ksft_exit_fail_msg("tracee did not stop\n");
	wait_done();

	err = poke(pid, addr, path);
	if (shared ? err != EIO : err != 0) {
		ksft_print_msg("%s into PROT_READ %s: %s, want %s\n",
			       path_name(path), shared ? "MAP_SHARED" : "MAP_PRIVATE",
			       err ? strerror(err) : "success",
			       shared ? "EIO" : "success");
		ok = false;
	}
	/* Let it run to its end, passing on the signals it stops at (SIGCHLD). */
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	wait_limit(WAIT_LIMIT_S, "the tracee's exit");
	while (waitpid(pid, &status, 0) == pid && WIFSTOPPED(status))
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(status));
	wait_done();
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	/* The grandchild reads the poke only where the poke was allowed. */
	if (rc != (shared ? 1 : 0)) {
		ksft_print_msg("the tracee's child %s the poke (exit %d)\n",
			       rc ? "lost" : "saw", rc);
		ok = false;
	}
	if (pread(fd, &now, sizeof(now), 0) != sizeof(now) || now != file_word) {
		ksft_print_msg("the file changed under a PROT_READ mapping\n");
		ok = false;
	}
	row_result(ok);
	munmap(addr, page_size());
	close(fd);
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(4);
	test_poke(MAP_PRIVATE, POKEDATA);
	test_poke(MAP_SHARED, POKEDATA);
	test_poke(MAP_PRIVATE, PROC_MEM);
	test_poke(MAP_SHARED, PROC_MEM);
	ksft_finished();
}
