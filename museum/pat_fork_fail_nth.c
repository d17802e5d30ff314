// SPDX-License-Identifier: GPL-2.0
/*
 * pat_fork_fail_nth: does a fork() that fails while it copies a VM_PAT
 * mapping leave the PAT reservation and the console as they were?
 * Exhibit 28, d155df53f310 ("x86/mm/pat: clear VM_PAT if copy_p4d_range
 * failed", 2023) and dc84bc2aba85 ("x86/mm/pat: Fix VM_PAT handling when
 * fork() fails in copy_page_range()", 2025).
 *
 * The public reproducer is syzbot's, for "WARNING in untrack_pfn"
 * (syzbot+5f488e922d047d8f00cc, cited by d155df53f310): a process with a
 * remap_pfn_range() mapping forks while failslab fails an allocation of
 * copy_page_range() (pmd_alloc_one() in the report). The half-built mm
 * is torn down at once (mmput(), exit_mmap()); its copy of the vma still
 * has VM_PAT, untrack_pfn() looks the pfn up in page tables the copy
 * never filled, and get_pat_info() warns. dc84bc2aba85 showed the same
 * for a failed track_pfn_copy() and made the undo a real one: a copy that
 * reserved the range and then failed frees that reservation again
 * (untrack_pfn_copy()), and the child's vma starts without VM_PAT.
 *
 * This program follows it with what user space has here, step by step:
 *
 *   1. the pfnmap: /dev/mem mapped at 0x50000000, a stretch of the PCI
 *      window that no device claims in the QEMU guest (not RAM, not
 *      claimed exclusively: STRICT_DEVMEM allows it; below 1 MiB, the ISA
 *      range, PAT keeps no memtype), so that mmap_mem() ->
 *      remap_pfn_range() -> track_pfn_remap() reserves it (a line in
 *      /sys/kernel/debug/x86/pat_memtype_list) and sets VM_PAT;
 *   2. failslab and fail_page_alloc made to see fork's allocations (they
 *      ignore sleeping and order-0 ones by default), quietly;
 *   3. for N = 1, 2, ...: N into /proc/thread-self/fail-nth, fork(): the
 *      N-th allocation fails, the failed children's mms are torn down;
 *      until a fork succeeds with the countdown not run out;
 *   4. after each failed fork: no new kernel warning (the taint's W bit,
 *      /proc/sys/kernel/tainted), and the range reserved exactly as often
 *      as before (the parent's reservation only; a copy's, never undone,
 *      stays in the list).
 *
 * Each step that differs is a "not ok"; the kernel's console shows the
 * WARNING in get_pat_info() / untrack_pfn().
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/rseq.h>

#include "forklab.h"

#define DEVMEM		"/dev/mem"
#define PFNMAP_PHYS	0x50000000UL
#define PFNMAP_SIZE	(16 * 4096UL)
#define TAINTED		"/proc/sys/kernel/tainted"
#define TAINT_WARN	(1UL << 9)
#define MAX_NTH		20000
#define PMD_BYTES	(2UL << 20)

struct knob {
	const char *path;
	const char *value;
	char saved[32];
};

static struct knob knobs[] = {
	{ "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
	{ "/sys/kernel/debug/failslab/verbose", "0" },
	{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N" },
	{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N" },
	{ "/sys/kernel/debug/fail_page_alloc/min-order", "0" },
	{ "/sys/kernel/debug/fail_page_alloc/verbose", "0" },
};

static bool read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t len;

	if (fd < 0)
		return false;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len < 0)
		return false;
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

static bool set_knobs(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		if (!read_small(knobs[i].path, knobs[i].saved,
				sizeof(knobs[i].saved)))
			return false;
		write_file(knobs[i].path, knobs[i].value);
	}
	return true;
}

static void restore_knobs(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		write_file(knobs[i].path, knobs[i].saved);
}

static unsigned long tainted(void)
{
	char buf[32];

	if (!read_small(TAINTED, buf, sizeof(buf)))
		ksft_exit_fail_msg("%s: %s\n", TAINTED, strerror(errno));
	return strtoul(buf, NULL, 10);
}

/*
 * The pfnmap at the start of a 2 MiB stretch of its own: fork's copy of it
 * needs a page table of its own, which fail-nth then fails too (in
 * syzbot's report it was the pmd table).
 */
static void *mmap_own_pte_table(int fd)
{
	uint8_t *area = mmap(NULL, 2 * PMD_BYTES, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t aligned;

	if (area == MAP_FAILED)
		return MAP_FAILED;
	aligned = ((uintptr_t)area + PMD_BYTES - 1) & ~(PMD_BYTES - 1);
	return mmap((void *)aligned, PFNMAP_SIZE, PROT_READ,
		    MAP_SHARED | MAP_FIXED, fd, PFNMAP_PHYS);
}

/*
 * Unregister glibc's rseq area. When clone() returns, the kernel may
 * write it (rseq_handle_notify_resume()), and fork left its page shared
 * with the child: a copy-on-write fault, whose allocation a countdown
 * that fork did not use up fails, and the kernel's answer is SIGSEGV.
 * Seen on 6.1.192 x86_64 (2 runs of 12 died so; 0 of 16 with rseq off),
 * never on 6.12.118. It is the countdown going past fork, not fork.
 */
static void unregister_rseq(void)
{
	struct rseq *area;

	if (!__rseq_size)
		return;
	area = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
	/* glibc registers 32 bytes (sizeof(struct rseq)), whatever __rseq_size says. */
	if (syscall(SYS_rseq, area, 32, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) &&
	    syscall(SYS_rseq, area, __rseq_size, RSEQ_FLAG_UNREGISTER, RSEQ_SIG))
		ksft_exit_fail_msg("rseq unregistration: %s\n", strerror(errno));
}

/*
 * fork() with fail-nth at @nth; the child exits at once. The parent's
 * memory is locked in (main()), so that no page fault of its own meets
 * the injection instead of fork.
 */
static int fork_failing(int nth_fd, int nth, bool *ran_out)
{
	char buf[16];
	int err;
	pid_t pid;

	snprintf(buf, sizeof(buf), "%d", nth);
	fflush(stdout);
	if (pwrite(nth_fd, buf, strlen(buf), 0) < 0)
		ksft_exit_fail_msg("write fail-nth: %s\n", strerror(errno));
	/* clone() itself: no user code (a fault) between fail-nth and fork. */
	pid = syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
	err = errno;
	if (pid == 0)
		_exit(0);
	if (pread(nth_fd, buf, sizeof(buf) - 1, 0) < 0)
		ksft_exit_fail_msg("read fail-nth: %s\n", strerror(errno));
	*ran_out = atoi(buf) == 0;
	if (pwrite(nth_fd, "0", 1, 0) < 0)
		ksft_exit_fail_msg("reset fail-nth: %s\n", strerror(errno));
	if (pid > 0) {
		wait_child(pid);
		return 0;
	}
	return err;
}

int main(void)
{
	unsigned long taint_before, taint_after;
	long reserved, failed = 0, leaked = 0;
	int fd, nth_fd, nth, err, first_warn = 0, first_leak = 0;
	bool ran_out = true;
	void *p;

	ksft_print_header();
	ksft_set_plan(3);

	fd = open(DEVMEM, O_RDONLY | O_SYNC);
	if (fd < 0)
		ksft_exit_skip("%s: %s (CONFIG_DEVMEM?)\n", DEVMEM,
			       strerror(errno));
	p = mmap_own_pte_table(fd);
	if (p == MAP_FAILED)
		ksft_exit_skip("mmap %s at %#lx: %s\n", DEVMEM, PFNMAP_PHYS,
			       strerror(errno));
	if (vma_has_flag(p, "pf") != 1)
		ksft_exit_skip("%s is not a VM_PFNMAP mapping here\n", DEVMEM);
	if (access(PAT_MEMTYPE_LIST, R_OK))
		ksft_exit_skip("%s: %s (x86 PAT off?)\n", PAT_MEMTYPE_LIST,
			       strerror(errno));
	reserved = pat_reservations(PFNMAP_PHYS, PFNMAP_SIZE, NULL);
	ksft_print_msg("%s at %#lx: %ld reservation(s) in %s\n", DEVMEM,
		       PFNMAP_PHYS, reserved, PAT_MEMTYPE_LIST);
	ksft_test_result(reserved == 1, "the parent's pfnmap is reserved once\n");

	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (nth_fd < 0)
		ksft_exit_skip("fail-nth: %s (CONFIG_FAULT_INJECTION?)\n",
			       strerror(errno));
	if (!set_knobs())
		ksft_exit_skip("failslab/fail_page_alloc knobs: %s\n",
			       strerror(errno));

	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		ksft_print_msg("mlockall: %s\n", strerror(errno));
	unregister_rseq();
	taint_before = tainted();
	for (nth = 1; nth <= MAX_NTH; nth++) {
		err = fork_failing(nth_fd, nth, &ran_out);
		if (!ran_out)
			break;
		if (!err)
			continue;
		failed++;
		if (!first_warn && (tainted() & ~taint_before & TAINT_WARN))
			first_warn = nth;
		if (pat_reservations(PFNMAP_PHYS, PFNMAP_SIZE, NULL) != reserved) {
			leaked++;
			if (!first_leak)
				first_leak = nth;
			reserved = pat_reservations(PFNMAP_PHYS, PFNMAP_SIZE, NULL);
		}
	}
	restore_knobs();
	taint_after = tainted();
	ksft_print_msg("%ld of %d forks failed by injection%s\n", failed,
		       nth - 1, ran_out ? ", and the walk did not end" : "");
	if (ran_out)
		ksft_exit_fail_msg("fork never ran out of injections\n");

	if (first_warn)
		ksft_print_msg("the kernel warned first after injection %d (taint %#lx -> %#lx)\n",
			       first_warn, taint_before, taint_after);
	ksft_test_result(!(taint_after & ~taint_before & TAINT_WARN),
			 "no kernel warning from the failed forks\n");
	if (leaked)
		ksft_print_msg("%ld failed fork(s) left a reservation of the range, first at injection %d: %ld now\n",
			       leaked, first_leak, reserved);
	ksft_test_result(!leaked,
			 "each failed fork undid its PAT reservation\n");

	munmap(p, PFNMAP_SIZE);
	close(fd);
	ksft_finished();
}
