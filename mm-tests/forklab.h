/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every mm-tests program reads about fork: the fork_copy= policy,
 * the /proc/vmstat fork_* counters (patches/0007, 0008), present ptes
 * from /proc/PID/pagemap, and minor faults from getrusage().
 *
 * Each helper exits the test with ksft_exit_fail_msg() when the kernel
 * does not give what it should: a broken read must not look like a pass.
 */
#ifndef FORKLAB_MM_TESTS_H
#define FORKLAB_MM_TESTS_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/io_uring.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "kselftest.h"
#include "vm_util.h"		/* pagemap_get_entry(), PM_PRESENT, ... */

/*
 * 6.1's selftests/vm/vm_util.h (KERNEL=6.1) has pagemap_get_entry() but
 * not the pagemap bits and pagemap_get_pfn() of 6.12's selftests/mm/:
 * here as Documentation/admin-guide/mm/pagemap.rst gives them.
 */
#ifndef PM_PRESENT
#define PM_SOFT_DIRTY		(1ULL << 55)
#define PM_MMAP_EXCLUSIVE	(1ULL << 56)
#define PM_UFFD_WP		(1ULL << 57)
#define PM_FILE			(1ULL << 61)
#define PM_SWAP			(1ULL << 62)
#define PM_PRESENT		(1ULL << 63)
#define PM_PFN_MASK		((1ULL << 55) - 1)

static inline unsigned long pagemap_get_pfn(int fd, char *start)
{
	uint64_t entry = pagemap_get_entry(fd, start);

	return entry & PM_PRESENT ? entry & PM_PFN_MASK : -1UL;
}
#endif
/*
 * stdout line-buffered before main(), as 6.12's ksft_print_header() makes
 * it and 6.1's does not: a child that exits with the parent's unflushed
 * lines in its copy of the buffer would print them twice.
 */
static void __attribute__((constructor)) forklab_line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

/*
 * A skipped result that keeps its name, "ok N NAME # SKIP REASON", as
 * 6.12's ksft_test_result_code() prints it (6.1's kselftest.h has only
 * ksft_test_result_skip(), whose line has no name): tools/judge/results
 * holds each skip, by name, against configs/expected.
 */
static inline void skip_named(const char *name, const char *reason)
{
	ksft_cnt.ksft_xskip++;
	printf("ok %u %s # SKIP %s\n", ksft_test_num(), name, reason);
}

/* 6.12's kselftest.h defines it; 6.1's does not */
#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

/* The fork_copy= rule and the counters' names, as the KUnit suites have them. */
#include "../kunit/fork_copy_rule.h"

static inline size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* The policy fork runs under: /proc/sys/vm/fork_copy, or upstream's. */
static inline enum fork_copy_policy fork_copy_policy(void)
{
	char name[32] = "";
	FILE *f = fopen("/proc/sys/vm/fork_copy", "r");
	enum fork_copy_policy policy;

	if (!f)
		return FORK_COPY_LAZY;
	if (!fgets(name, sizeof(name), f))
		ksft_exit_fail_msg("read /proc/sys/vm/fork_copy: %s\n",
				   strerror(errno));
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
	for (policy = FORK_COPY_LAZY; policy <= FORK_COPY_SKIP_SHARED; policy++)
		if (!strcmp(name, fork_copy_policy_names[policy]))
			return policy;
	ksft_exit_fail_msg("unknown fork_copy policy %s\n", name);
	return FORK_COPY_LAZY;	/* 6.1's ksft_exit_fail_msg() is no __noreturn */
}

static inline const char *fork_copy_policy_name(void)
{
	return fork_copy_policy_names[fork_copy_policy()];
}

/* Switch /proc/sys/vm/fork_copy to @name (root), or fail the program. */
static inline void set_fork_copy_policy(const char *name)
{
	FILE *f = fopen("/proc/sys/vm/fork_copy", "w");

	if (!f || fputs(name, f) < 0 || fclose(f))
		ksft_exit_fail_msg("fork_copy=%s: %s\n", name, strerror(errno));
	if (strcmp(fork_copy_policy_name(), name))
		ksft_exit_fail_msg("fork_copy is %s, not %s\n",
				   fork_copy_policy_name(), name);
}

/* Does fork copy a vma that upstream skips? @shared: VM_MAYSHARE. */
static inline bool policy_copies_skipped(bool shared)
{
	return fork_copy_rule(fork_copy_policy(), false, shared);
}

/*
 * A line "NAME VALUE" of /proc/vmstat, /proc/meminfo ("NAME: VALUE kB")
 * or /proc/self/status. -1: the file has no such line.
 */
static inline long long proc_value(const char *path, const char *name)
{
	size_t len = strlen(name);
	long long value = -1;
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		ksft_exit_fail_msg("open %s: %s\n", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, len) &&
		    (line[len] == ' ' || line[len] == ':' || line[len] == '\t')) {
			value = strtoll(line + len + 1 + strspn(line + len + 1, " \t"),
					NULL, 10);
			break;
		}
	}
	fclose(f);
	return value;
}

/* The number a file such as /proc/self/ksm_merging_pages holds. */
static inline long long read_number(const char *path)
{
	FILE *f = fopen(path, "r");
	long long n;

	if (!f || fscanf(f, "%lld", &n) != 1)
		ksft_exit_fail_msg("read %s: %s\n", path, strerror(errno));
	fclose(f);
	return n;
}

/*
 * This mm's KSM-merged pages: /proc/self/ksm_merging_pages (5.19), which
 * both trees have; 6.1's ksm_stat has no ksm_merging_pages line (6.6).
 */
static inline long long ksm_merged_pages(void)
{
	return read_number("/proc/self/ksm_merging_pages");
}

/*
 * Does the vma at @addr have @flag (two letters of smaps' VmFlags: "lo"
 * for VM_LOCKED, "ac" for VM_ACCOUNT, ...)? -1: no such vma.
 */
static inline int vma_has_flag(const void *addr, const char *flag)
{
	unsigned long start, end, a = (unsigned long)addr;
	bool here = false;
	char line[512];
	int found = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		ksft_exit_fail_msg("open /proc/self/smaps: %s\n", strerror(errno));
	while (found < 0 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			here = start <= a && a < end;
		else if (here && !strncmp(line, "VmFlags:", 8))
			found = strstr(line + 8, flag) &&
				strstr(line + 8, flag)[-1] == ' ';
	}
	fclose(f);
	return found;
}

/*
 * Is the guest's kernel older than @major.@minor? forklab's trees are
 * 6.12 and 6.1 (KERNEL=6.1), and where they differ a program asks this.
 */
static inline bool kernel_older_than(int major, int minor)
{
	struct utsname u;
	int ma, mi;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		ksft_exit_fail_msg("uname: %s\n", strerror(errno));
	return ma < major || (ma == major && mi < minor);
}

/*
 * smaps names VM_LOCKONFAULT ("lf") since 8614d6c5eda0 (6.2); on 6.1 a
 * lock-on-fault vma shows "lo" alone, and "lf" can be checked nowhere.
 */
static inline bool smaps_shows_lock_on_fault(void)
{
	return !kernel_older_than(6, 2);
}

static inline long long vmstat_value(const char *name)
{
	return proc_value("/proc/vmstat", name);
}

/* The fork_* counters, read together before and after one fork. */
struct fork_counts {
	long long vma_skip, vma_copy_policy, vma_copy_anon_vma, pte_copy;
	long long huge_copy;	/* pmds (not hugetlb's entries) */
};

static inline bool have_fork_counts(void)
{
	return vmstat_value(fork_count_names[COUNT_PTES]) >= 0;
}

static inline struct fork_counts read_fork_counts(void)
{
	struct fork_counts c = {
		.vma_skip = vmstat_value(fork_count_names[COUNT_SKIP]),
		.vma_copy_policy = vmstat_value(fork_count_names[COUNT_POLICY]),
		.vma_copy_anon_vma = vmstat_value(fork_count_names[COUNT_ANON_VMA]),
		.pte_copy = vmstat_value(fork_count_names[COUNT_PTES]),
		.huge_copy = vmstat_value("fork_huge_copy"),
	};
	return c;
}

static inline struct fork_counts fork_counts_delta(struct fork_counts a,
						   struct fork_counts b)
{
	struct fork_counts d = {
		.vma_skip = b.vma_skip - a.vma_skip,
		.vma_copy_policy = b.vma_copy_policy - a.vma_copy_policy,
		.vma_copy_anon_vma = b.vma_copy_anon_vma - a.vma_copy_anon_vma,
		.pte_copy = b.pte_copy - a.pte_copy,
		.huge_copy = b.huge_copy - a.huge_copy,
	};
	return d;
}

/* Entries of [addr, addr + len) in this process's pagemap with @bit. */
static inline size_t pagemap_count(const void *addr, size_t len, uint64_t bit)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	size_t i, n = 0;

	if (fd < 0)
		ksft_exit_fail_msg("open /proc/self/pagemap: %s\n", strerror(errno));
	for (i = 0; i < len; i += page_size())
		if (pagemap_get_entry(fd, (char *)addr + i) & bit)
			n++;
	close(fd);
	return n;
}

static inline size_t present_pages(const void *addr, size_t len)
{
	return pagemap_count(addr, len, PM_PRESENT);
}

/* Swap ptes (and other non-present entries pagemap calls swapped). */
static inline size_t swapped_pages(const void *addr, size_t len)
{
	return pagemap_count(addr, len, PM_SWAP);
}

/* The pfn mapping @addr in this process (root only), 0 if none. */
static inline unsigned long page_pfn(const void *addr)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	unsigned long pfn;

	if (fd < 0)
		ksft_exit_fail_msg("open /proc/self/pagemap: %s\n", strerror(errno));
	pfn = pagemap_get_pfn(fd, (char *)addr);
	close(fd);
	return pfn == -1ul ? 0 : pfn;
}

/*
 * The 64-bit word that /proc/@file (kpageflags, kpagecount) holds for the
 * page mapped at @p (root only).
 */
static inline uint64_t kpage_word(const char *file, const void *p)
{
	char path[32];
	uint64_t word = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s", file);
	fd = open(path, O_RDONLY);
	if (fd < 0 || pread(fd, &word, sizeof(word),
			    page_pfn(p) * sizeof(word)) != sizeof(word))
		ksft_exit_fail_msg("read %s: %s\n", path, strerror(errno));
	close(fd);
	return word;
}

/* Is the page mapped at @p part of a THP (/proc/kpageflags KPF_THP)? */
static inline bool page_in_thp(const void *p)
{
	return kpage_word("kpageflags", p) & (1ULL << 22);	/* KPF_THP */
}

/*
 * How many ptes and pmds map the page mapped at @p (/proc/kpagecount:
 * its precise mapcount), over every process.
 */
static inline long long page_mapcount_at(const void *p)
{
	return kpage_word("kpagecount", p);
}

#define PAT_MEMTYPE_LIST	"/sys/kernel/debug/x86/pat_memtype_list"

/*
 * x86 PAT's reservations of [@phys, +@size): the lines of its memtype
 * list that name that range, each reservation one line. @type (if not
 * NULL, of at least 32 bytes): the memory type of the last.
 */
static inline long pat_reservations(unsigned long phys, unsigned long size,
				    char *type)
{
	char line[256], want[64];
	long n = 0;
	FILE *f = fopen(PAT_MEMTYPE_LIST, "r");

	if (!f)
		ksft_exit_fail_msg("%s: %s\n", PAT_MEMTYPE_LIST, strerror(errno));
	snprintf(want, sizeof(want), "[mem 0x%016lx-0x%016lx]", phys, phys + size);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, want))
			continue;
		n++;
		if (type && sscanf(strstr(line, want) + strlen(want), " %31s", type) != 1)
			type[0] = '\0';
	}
	fclose(f);
	return n;
}

/*
 * What a child's read of a page whose pte fork copied costs is not the
 * guest kernel's alone on UML. fork makes every pte it shares with the
 * child old (pte_mkold() in __copy_present_ptes(); not the young pte of
 * an early-COW copy of a pinned page, copy_present_page(), which no row
 * of this rule reads), and UML maps an old pte into
 * the child's host process with PROT_EXEC only (update_pte_range() in
 * arch/um/kernel/tlb.c: not young, so neither read nor write; a user pte
 * is always "exec"). Whether the host lets a read through an exec-only
 * mapping is the host's business: an x86 host with protection keys makes
 * it execute-only (a read traps, the guest takes one minor fault per page
 * and makes the pte young) unless the PKRU value that UML writes into its
 * processes through ptrace opens every key again (hosts since the change
 * that let ptrace write PKRU: no trap, no fault); a host without
 * protection keys maps PROT_EXEC readable. Both were seen on machines of
 * this kind: 1 fault per page on one host, 0 on another.
 *
 * So for copied ptes a user-space test asserts what the guest decides:
 * the ptes are there (pagemap), the counters moved, the bytes are right,
 * and the reads cost either nothing or exactly one fault per page (a
 * trap per page is the host's; a second one, or a fault fork should have
 * saved on one page but not another, is the guest's). A missing pte costs
 * at least one real fault, which fault-around may share with up to 15
 * neighbours. Exact counts are the KUnit suites', below the host layer.
 * /proc/exitcode exists only on UML.
 */
/*
 * Who wrote a page: the file (its contents on disk), the parent before
 * fork, the child after it. With the region and the page, the writer
 * makes every page's bytes unique (page_word()): a pte that points at
 * the same page of another mapping, at another page of the same one, or
 * at the other side's copy, reads wrong somewhere in the page.
 */
enum side { FILE_SIDE = 1, PARENT_SIDE, CHILD_SIDE };

/* The one pattern every suite writes: page_word(), ../kunit/fork_pattern.h. */
#include "../kunit/fork_pattern.h"

/* Write pages [@first, @first + @n) of @base as @writer of region @id. */
static inline void fill_words(uint8_t *base, unsigned int writer, uint32_t id,
			      size_t first, size_t n)
{
	size_t words = page_size() / sizeof(uint64_t), p, j;

	for (p = first; p < first + n; p++)
		for (j = 0; j < words; j++)
			((uint64_t *)(base + p * page_size()))[j] =
				page_word(writer, id, p, j);
}

/*
 * Do pages [@first, @first + @n) of @base hold what @writer wrote? The
 * first page that does not, or -1. volatile: each read is a real load.
 */
static inline long first_wrong_page(const volatile uint8_t *base,
				    unsigned int writer, uint32_t id,
				    size_t first, size_t n)
{
	size_t words = page_size() / sizeof(uint64_t), p, j;

	for (p = first; p < first + n; p++)
		for (j = 0; j < words; j++)
			if (((const volatile uint64_t *)(base + p * page_size()))[j] !=
			    page_word(writer, id, p, j))
				return p;
	return -1;
}

/*
 * Pin [@p, +@len) as O_DIRECT or RDMA would: io_uring's registered
 * buffers (FOLL_PIN | FOLL_LONGTERM, counted in the mm's pinned_vm) for
 * as long as the ring, the returned fd, is open. -1 (errno): no io_uring.
 */
static inline int io_uring_pin(void *p, size_t len)
{
	struct io_uring_params params = {};
	struct iovec iov = { .iov_base = p, .iov_len = len };
	int ring = syscall(__NR_io_uring_setup, 4, &params);

	if (ring < 0)
		return -1;
	if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1)) {
		close(ring);
		return -1;
	}
	return ring;
}

/*
 * A userfaultfd with @features (UFFD_API handshake done); -1 with errno
 * set if the kernel has no userfaultfd or refuses a feature.
 */
static inline int open_uffd(uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	int err;

	if (uffd < 0)
		return -1;
	if (ioctl(uffd, UFFDIO_API, &api)) {
		err = errno;
		close(uffd);
		errno = err;
		return -1;
	}
	return uffd;
}

/* fork() with stdout flushed first, or the child prints it again. */
static inline pid_t fork_flushed(void)
{
	fflush(stdout);
	return fork();
}

/* fork_flushed() in the test's own process: a failure ends the test. */
static inline pid_t fork_or_fail(void)
{
	pid_t pid = fork_flushed();

	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	return pid;
}

/*
 * Parent and child in turns: each says() when it is done with a step and
 * hears() the other's. A side that loses the other exits 3.
 */
struct lockstep {
	int to_parent[2], to_child[2];
};

static inline void lockstep_init(struct lockstep *ls)
{
	if (pipe(ls->to_parent) || pipe(ls->to_child))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
}

static inline void lockstep_close(struct lockstep *ls)
{
	close(ls->to_parent[0]);
	close(ls->to_parent[1]);
	close(ls->to_child[0]);
	close(ls->to_child[1]);
}

static inline void say(int fd)
{
	if (write(fd, "", 1) != 1)
		_exit(3);
}

static inline void hear(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		_exit(3);
}

/* An unlinked file of @size bytes (zeros) in /tmp, open O_RDWR. */
static inline int tmp_fd(const char *name, size_t size)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/forklab-%s-%d", name, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, size))
		ksft_exit_fail_msg("create %s: %s\n", path, strerror(errno));
	unlink(path);
	return fd;
}

static inline void write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		ksft_exit_fail_msg("write %s to %s: %s\n", value, path,
				   strerror(errno));
	close(fd);
}

static inline void set_vm(const char *name, long long value)
{
	char path[64], text[32];

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	snprintf(text, sizeof(text), "%lld", value);
	write_file(path, text);
}

/*
 * overcommit 2 with CommitLimit at @limit bytes: overcommit_kbytes is
 * what is not swap.
 */
static inline void set_commit_limit(long long limit)
{
	long long swap = proc_value("/proc/meminfo", "SwapTotal") * 1024;

	set_vm("overcommit_kbytes", (limit - swap) / 1024);
	set_vm("overcommit_memory", 2);
}

/* Back to the boot's defaults: heuristic, ratio 50. */
static inline void reset_overcommit(void)
{
	set_vm("overcommit_memory", 0);
	set_vm("overcommit_ratio", 50);
}

/*
 * A memory cgroup of the program's own under CGROUP_ROOT (cgroup v2,
 * which the guests' init mounts): memcg_enter() makes it and moves this
 * process in, memcg_leave() moves it back and removes the group.
 */
#define CGROUP_ROOT	"/sys/fs/cgroup"
#define MEMCG_PATH_MAX	96

static inline char *memcg_group(void)
{
	static char group[MEMCG_PATH_MAX];

	return group;
}

static inline void memcg_path(char *path, size_t size, const char *file)
{
	snprintf(path, size, "%s/%s", memcg_group(), file);
}

static inline void memcg_write(const char *file, const char *value)
{
	char path[128];

	memcg_path(path, sizeof(path), file);
	write_file(path, value);
}

static inline void memcg_write_bytes(const char *file, long long bytes)
{
	char text[32];

	snprintf(text, sizeof(text), "%lld", bytes);
	memcg_write(file, text);
}

static inline long long memcg_number(const char *file)
{
	char path[128];

	memcg_path(path, sizeof(path), file);
	return read_number(path);
}

/* A "NAME VALUE" line of memory.stat or memory.events. */
static inline long long memcg_value(const char *file, const char *name)
{
	char path[128];
	long long value;

	memcg_path(path, sizeof(path), file);
	value = proc_value(path, name);
	if (value < 0)
		ksft_exit_fail_msg("%s has no %s line\n", path, name);
	return value;
}

/* Make the group @name and move this process into it. */
static inline void memcg_enter(const char *name)
{
	char pid[16];

	snprintf(memcg_group(), MEMCG_PATH_MAX, "%s/forklab-%s-%d", CGROUP_ROOT, name, getpid());
	if (mkdir(memcg_group(), 0755))
		ksft_exit_fail_msg("mkdir %s: %s\n", memcg_group(), strerror(errno));
	snprintf(pid, sizeof(pid), "%d", getpid());
	memcg_write("cgroup.procs", pid);
}

/* Back to the root group; the group goes (its children exited). */
static inline void memcg_leave(void)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", getpid());
	write_file(CGROUP_ROOT "/cgroup.procs", pid);
	if (rmdir(memcg_group()))
		ksft_exit_fail_msg("rmdir %s: %s\n", memcg_group(), strerror(errno));
}

/*
 * Is the memory controller there for the groups? NULL if so, else why
 * not. Turning it on for the root's children is the caller's.
 */
static inline const char *memcg_missing(void)
{
	char line[256] = "";
	FILE *f = fopen(CGROUP_ROOT "/cgroup.controllers", "r");

	if (!f)
		return "no cgroup2 at " CGROUP_ROOT " (CONFIG_CGROUPS)";
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	if (!strstr(line, "memory"))
		return "no memory controller (CONFIG_MEMCG)";
	write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory");
	return NULL;
}

/* A function's text, from /proc/kallsyms: the first of @names there. */
struct text_range {
	const char *names[3];
	const char *found;
	char start[24], end[24];
};

/*
 * Fill @range from /proc/kallsyms: the function's address up to the next
 * text symbol's (its .cold part, elsewhere, makes no allocation).
 */
static inline void find_text(struct text_range *range)
{
	unsigned long long addr, start = 0, end = ~0ULL;
	char type, name[256], line[512];
	FILE *f = fopen("/proc/kallsyms", "r");
	size_t i;

	if (!f)
		ksft_exit_fail_msg("open /proc/kallsyms: %s\n", strerror(errno));
	for (i = 0; i < 3 && range->names[i] && !start; i++) {
		rewind(f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
			    !strcmp(name, range->names[i])) {
				start = addr;
				range->found = range->names[i];
				break;
			}
	}
	rewind(f);
	while (start && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    (type == 't' || type == 'T') && addr > start && addr < end)
			end = addr;
	fclose(f);
	if (!start || end == ~0ULL)
		ksft_exit_fail_msg("no %s in /proc/kallsyms (CONFIG_KALLSYMS)\n",
				   range->names[0]);
	snprintf(range->start, sizeof(range->start), "%llu", start);
	snprintf(range->end, sizeof(range->end), "%llu", end);
	ksft_print_msg("%s: [0x%llx, 0x%llx)\n", range->found, start, end);
}

static inline void ksm_knob(const char *name, const char *value)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", name);
	write_file(path, value);
}

/*
 * Have ksmd merge the equal pages of this process's MADV_MERGEABLE vmas
 * until @pages of them map KSM pages (/proc/self/ksm_stat), within 10 s;
 * then stop it (run=0 keeps what it merged): a running ksmd would
 * allocate and free behind the tests' counts. Returns how many it merged.
 */
static inline long long ksm_merge(size_t pages)
{
	long long merged = -1;
	int tries;

	ksm_knob("pages_to_scan", "1000");
	ksm_knob("sleep_millisecs", "1");
	ksm_knob("run", "1");
	for (tries = 0; tries < 1000; tries++) {
		merged = ksm_merged_pages();
		if (merged >= (long long)pages)
			break;
		usleep(10000);
	}
	ksm_knob("run", "0");
	return merged;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif

/*
 * Fault in every page of this program's own file mappings (text, rodata),
 * so that its RssFile stays put while a test counts it: code first run
 * later (after a fork's first failure, say) would add a page there.
 */
static inline void populate_program(void)
{
	char exe[256], line[512], path[256];
	unsigned long start, end;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");

	if (len < 0 || !f)
		ksft_exit_fail_msg("/proc/self/exe, maps: %s\n", strerror(errno));
	exe[len] = '\0';
	while (fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &start, &end,
			   path) == 3 && !strcmp(path, exe) &&
		    madvise((void *)start, end - start, MADV_POPULATE_READ))
			ksft_exit_fail_msg("MADV_POPULATE_READ: %s\n", strerror(errno));
	}
	fclose(f);
}

static inline bool on_uml(void)
{
	return access("/proc/exitcode", F_OK) == 0;
}

/*
 * The minor faults a child may take to read @pages pages of which fork
 * copied @present ptes: none if all were copied (on UML, none or one per
 * page, as the host decides), else at least one and at most one a page.
 */
static inline bool faults_as_expected(long faults, size_t present, size_t pages)
{
	if (present == pages)
		return faults == 0 || (on_uml() && faults == (long)pages);
	return faults >= 1 && faults <= (long)pages;
}

static inline long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Wait for @pid; its exit code, or 128 + the signal that killed it. */
static inline int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) :
				   128 + WTERMSIG(status);
}

#endif /* FORKLAB_MM_TESTS_H */
