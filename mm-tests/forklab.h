/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every mm-tests program reads about fork: the fork_copy= policy,
 * the /proc/vmstat fork_* counters (patches/0007, 0008), present ptes
 * from /proc/PID/pagemap, and minor faults from getrusage().
 *
 * Each helper exits the test with ksft_exit_fail_msg() when the kernel
 * does not give what it should: a broken read must not look like a pass.
 * The helpers are in forklab.c, linked into every program (as vm_util.c
 * is); what is here is their prototypes, and what must be inline.
 */
#ifndef FORKLAB_MM_TESTS_H
#define FORKLAB_MM_TESTS_H

#include <errno.h>
#include <stdarg.h>
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

/* As the kernel's compiler_attributes.h, which user space does not have. */
#ifndef noinline
#define noinline	__attribute__((__noinline__))
#endif

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

size_t page_size(void);

/* The policy fork runs under: /proc/sys/vm/fork_copy, or upstream's. */
enum fork_copy_policy fork_copy_policy(void);

const char *fork_copy_policy_name(void);

/* Switch /proc/sys/vm/fork_copy to @name (root), or fail the program. */
void set_fork_copy_policy(const char *name);

/* Does fork copy a vma that upstream skips? @shared: VM_MAYSHARE. */
bool policy_copies_skipped(bool shared);

/*
 * A line "NAME VALUE" of /proc/vmstat, /proc/meminfo ("NAME: VALUE kB")
 * or /proc/self/status. -1: the file has no such line.
 */
long long proc_value(const char *path, const char *name);

/* The number a file such as /proc/self/ksm_merging_pages holds. */
long long read_number(const char *path);

/*
 * This mm's KSM-merged pages: /proc/self/ksm_merging_pages (5.19), which
 * both trees have; 6.1's ksm_stat has no ksm_merging_pages line (6.6).
 */
long long ksm_merged_pages(void);

/*
 * Does the vma at @addr have @flag (two letters of smaps' VmFlags: "lo"
 * for VM_LOCKED, "ac" for VM_ACCOUNT, ...)? -1: no such vma.
 */
int vma_has_flag(const void *addr, const char *flag);

/*
 * Is the guest's kernel older than @major.@minor? forklab's trees are
 * 6.12 and 6.1 (KERNEL=6.1), and where they differ a program asks this.
 */
bool kernel_older_than(int major, int minor);

/*
 * smaps names VM_LOCKONFAULT ("lf") since 8614d6c5eda0 (6.2); on 6.1 a
 * lock-on-fault vma shows "lo" alone, and "lf" can be checked nowhere.
 */
bool smaps_shows_lock_on_fault(void);

/*
 * The number @name (CONFIG_NR_CPUS) is set to in the kernel's config,
 * which init names in KCONFIG_PATH when the runner found one; -1 if it
 * is not there, or there is no config.
 */
long kconfig_number(const char *name);

/*
 * Are /proc's RSS figures (RssAnon, RssFile, RssShmem, VmSwap) exact?
 * Before f1a7941243c1 (6.2) a kernel built for NR_CPUS >=
 * SPLIT_PTLOCK_CPUS (SPLIT_RSS_COUNTING: Debian 12's 6.1, not forklab's
 * one-CPU builds) keeps each task's changes in the task and adds them
 * to the mm's every 64 faults: the figures lag. 6.2 made them per-CPU
 * counters, which /proc reads whole since 82241a83cd15 (6.16, in
 * 6.12.118).
 */
bool rss_counters_exact(void);

long long vmstat_value(const char *name);

/* The fork_* counters, read together before and after one fork. */
struct fork_counts {
	long long vma_skip, vma_copy_policy, vma_copy_anon_vma, pte_copy;
	long long huge_copy;	/* pmds (not hugetlb's entries) */
};

bool have_fork_counts(void);

struct fork_counts read_fork_counts(void);

struct fork_counts fork_counts_delta(struct fork_counts a,
				     struct fork_counts b);

/* Entries of [addr, addr + len) in this process's pagemap with @bit. */
size_t pagemap_count(const void *addr, size_t len, uint64_t bit);

size_t present_pages(const void *addr, size_t len);

/* Swap ptes (and other non-present entries pagemap calls swapped). */
size_t swapped_pages(const void *addr, size_t len);

/*
 * A load of the byte at @p that the compiler must make: the byte, or -1
 * if it got SIGBUS (a page beyond EOF, a poisoned pte). The SIGBUS
 * handler is this process's again when it returns.
 */
int load_or_sigbus(const void *p);

/* The pfn mapping @addr in this process (root only), 0 if none. */
unsigned long page_pfn(const void *addr);

/*
 * The 64-bit word that /proc/@file (kpageflags, kpagecount) holds for the
 * page mapped at @p (root only).
 */
uint64_t kpage_word(const char *file, const void *p);

/* Is the page mapped at @p part of a THP (/proc/kpageflags KPF_THP)? */
bool page_in_thp(const void *p);

/*
 * How many ptes and pmds map the page mapped at @p (/proc/kpagecount:
 * its precise mapcount), over every process.
 */
long long page_mapcount_at(const void *p);

#define PAT_MEMTYPE_LIST	"/sys/kernel/debug/x86/pat_memtype_list"

/*
 * x86 PAT's reservations of [@phys, +@size): the lines of its memtype
 * list that name that range, each reservation one line. @type (if not
 * NULL, of at least 32 bytes): the memory type of the last.
 */
long pat_reservations(unsigned long phys, unsigned long size,
		      char *type);

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
void fill_words(uint8_t *base, unsigned int writer, uint32_t id,
		size_t first, size_t n);

/*
 * Do pages [@first, @first + @n) of @base hold what @writer wrote? The
 * first page that does not, or -1. volatile: each read is a real load.
 */
long first_wrong_page(const volatile uint8_t *base,
		      unsigned int writer, uint32_t id,
		      size_t first, size_t n);

/*
 * Pin [@p, +@len) as O_DIRECT or RDMA would: io_uring's registered
 * buffers (FOLL_PIN | FOLL_LONGTERM, counted in the mm's pinned_vm) for
 * as long as the ring, the returned fd, is open. -1 (errno): no io_uring.
 */
int io_uring_pin(void *p, size_t len);

/*
 * A userfaultfd with @features (UFFD_API handshake done); -1 with errno
 * set if the kernel has no userfaultfd or refuses a feature.
 */
int open_uffd(uint64_t features);

/* fork() with stdout flushed first, or the child prints it again. */
pid_t fork_flushed(void);

/* fork_flushed() in the test's own process: a failure ends the test. */
pid_t fork_or_fail(void);

/*
 * Parent and child in turns: each says() when it is done with a step and
 * hears() the other's. A side that loses the other exits 3.
 */
struct lockstep {
	int to_parent[2], to_child[2];
};

void lockstep_init(struct lockstep *ls);

void lockstep_close(struct lockstep *ls);

void say(int fd);

void hear(int fd);

/* An unlinked file of @size bytes (zeros) in /tmp, open O_RDWR. */
int tmp_fd(const char *name, size_t size);

void write_file(const char *path, const char *value);

void set_vm(const char *name, long long value);

/*
 * overcommit 2 with CommitLimit at @limit bytes: overcommit_kbytes is
 * what is not swap.
 */
void set_commit_limit(long long limit);

/* Back to the boot's defaults: heuristic, ratio 50. */
void reset_overcommit(void);

/*
 * A memory cgroup of the program's own under CGROUP_ROOT (cgroup v2,
 * which the guests' init mounts): memcg_enter() makes it and moves this
 * process in, memcg_leave() moves it back and removes the group.
 */
#define CGROUP_ROOT	"/sys/fs/cgroup"
#define MEMCG_PATH_MAX	96

char *memcg_group(void);

void memcg_path(char *path, size_t size, const char *file);

void memcg_write(const char *file, const char *value);

void memcg_write_bytes(const char *file, long long bytes);

long long memcg_number(const char *file);

/* A "NAME VALUE" line of memory.stat or memory.events. */
long long memcg_value(const char *file, const char *name);

/* Make the group @name and move this process into it. */
void memcg_enter(const char *name);

/* Back to the root group; the group goes (its children exited). */
void memcg_leave(void);

/*
 * Is the memory controller there for the groups? NULL if so, else why
 * not. Turning it on for the root's children is the caller's.
 */
const char *memcg_missing(void);

/* A function's text, from /proc/kallsyms: the first of @names there. */
struct text_range {
	const char *names[3];
	const char *found;
	char start[24], end[24];
};

/*
 * Fill @range from /proc/kallsyms: the function's address up to the next
 * text symbol's (its .cold part, elsewhere, makes no allocation). false
 * when no name of it is a symbol there (a static function inlined).
 */
bool lookup_text(struct text_range *range);

/* lookup_text(), or fail the program naming the function. */
void find_text(struct text_range *range);

void ksm_knob(const char *name, const char *value);

/*
 * Have ksmd merge the equal pages of this process's MADV_MERGEABLE vmas
 * until @pages of them map KSM pages (/proc/self/ksm_stat), within 10 s;
 * then stop it (run=0 keeps what it merged): a running ksmd would
 * allocate and free behind the tests' counts. Returns how many it merged.
 */
long long ksm_merge(size_t pages);

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif

/*
 * Fault in every page of this program's own file mappings (text, rodata),
 * so that its RssFile stays put while a test counts it: code first run
 * later (after a fork's first failure, say) would add a page there.
 */
void populate_program(void);

bool on_uml(void);

/*
 * The minor faults a child may take to read @pages pages of which fork
 * copied @present ptes: none if all were copied (on UML, none or one per
 * page, as the host decides), else at least one and at most one a page.
 */
bool faults_as_expected(long faults, size_t present, size_t pages);

long minor_faults(void);

/*
 * Bounded waits (docs/checks.md#bounded-waits). A wrong kernel can make a
 * row wait for ever: for a child whose swap-in the kernel retries for
 * ever, an event never queued on a uffd, a step the other side never
 * takes. The runner's limit (90 s at least) would end the boot with no
 * row named; so each wait has a limit of its own, far below it. When it
 * passes, the row in progress fails by its name, with what did not
 * arrive ("not ok 13 NAME # waited 30 s for the exit of child 42"), and
 * the program exits 1: its KTAP ends there, init kills what it forked.
 * Only main()'s thread of the process that prints the rows has limits:
 * a child waits for its parent without one (the parent's exit ends its
 * wait), and the parent's wait for it has one.
 *
 * A row names itself with row_begin() before its first wait and prints
 * its result with row_result() (or row_skip()), under that name; a wait
 * after its result and before the next row_begin() is "a row after" it.
 * wait_limit() starts a wait, wait_done() ends it; waits nest (the
 * innermost one's limit passes first); wait_child(), read_report() and
 * hear() are waits of WAIT_LIMIT_S. One alarm a process: a program's own
 * alarm() must be outside every wait.
 */
#define WAIT_LIMIT_S	30

/*
 * The row whose result is the next: @name, after @printed() results
 * (the program's ksft_test_num(): kselftest.h's counters are the
 * program's, not forklab.c's).
 */
void row_starts(unsigned int (*printed)(void), const char *name);

const char *row_in_progress(void);

/*
 * From now on @pid prints the rows (a program that goes on in a child of
 * its own): its waits have the limits, this process's none. 0: no
 * process (a benchmark, which has no rows: the runner's limit is its).
 */
void rows_printed_by(pid_t pid);

void row_timed_out(const char *what, unsigned int secs)
	__attribute__((noreturn));

void wait_limit(unsigned int secs, const char *what);

void wait_done(void);

/* The row whose result this program prints next is @fmt. */
static inline __printf(1, 2) void row_begin(const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	row_starts(ksft_test_num, name);
}

/* The result of the row row_begin() named. */
static inline void row_result(bool pass)
{
	ksft_test_result(pass, "%s\n", row_in_progress());
}

static inline void row_skip(const char *reason)
{
	skip_named(row_in_progress(), reason);
}

/*
 * Read @size bytes of a child's report from the pipe @fd (within
 * WAIT_LIMIT_S): false if the child closed it first.
 */
bool read_report(int fd, void *buf, size_t size);

/*
 * Wait for @pid (within WAIT_LIMIT_S); its exit code, or 128 + the
 * signal that killed it.
 */
int wait_child(pid_t pid);

/* wait_child() for a child that may take longer: within @secs. */
int wait_child_within(pid_t pid, unsigned int secs);

#endif /* FORKLAB_MM_TESTS_H */
