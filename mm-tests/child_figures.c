// SPDX-License-Identifier: GPL-2.0
/*
 * child_figures: the figures a child's mm starts with, held against what
 * its own mappings hold.
 *
 * The parent holds every mapping kind of mappings.h (written, read,
 * untouched, paged out, mlocked, MADV_DONTFORK, MADV_WIPEONFORK, remapped)
 * and forks. The child, before it touches any of them, reads its
 * counters from /proc/self/status, which dup_mmap() and copy_page_range()
 * keep as they go (copied from the parent, then corrected, or counted
 * pte by pte), and walks its vmas and page tables through
 * /proc/self/smaps, which the kernel computes there and then. A counter
 * that fork got wrong disagrees with the walk: the child's figures are
 * never compared with the parent's. One row per figure:
 *
 *   figure      counter         the walk (smaps)          if fork got it wrong
 *   RssAnon     MM_ANONPAGES    Anonymous                 copy_present_ptes() does not
 *                                                         count a shared anon page
 *                                                         (mutant 15)
 *   RssFile     MM_FILEPAGES    Rss - Anonymous of the    ... a file page
 *                               other file vmas
 *   RssShmem    MM_SHMEMPAGES   Rss - Anonymous of shmem  counts a shmem page as a
 *                               vmas (/tmp is tmpfs)      file page (mutant 25)
 *   VmSwap      MM_SWAPENTS     Swap of anon vmas         copy_nonpresent_pte() does
 *                                                         not count a swap entry
 *   VmSize      total_vm        every vma                 dup_mmap() keeps a
 *                                                         VM_DONTCOPY vma's pages
 *                                                         (mutant 16)
 *   VmData      data_vm         private writable vmas     the same
 *   VmStk       stack_vm        VM_STACK vmas
 *   VmExe       exec_vm         executable vmas
 *   VmLck       locked_vm (0:   VM_LOCKED vmas (none:     the child keeps VM_LOCKED
 *               mm_init())      dup_mmap() clears it)     (its pages pinned in RAM)
 *   VmPin       pinned_vm (0:   none: the child pinned    the child starts with the
 *               mm_init())      nothing (the parent has   parent's pins, which it
 *                               a page pinned by io_uring) can never unpin (mutant 29)
 *   VmHWM       hiwater_rss     VmRSS (status)            dup_mm() keeps the parent's
 *   VmPeak      hiwater_vm      VmSize (status)           peaks (mutant 18)
 *   Committed_AS (the system's) grows by the child's      dup_mmap() does not charge
 *               VM_ACCOUNT vmas ("ac" in VmFlags)         a copied vma (mutant 17)
 *
 * A child only gains memory after fork (nothing reclaims here: 512 MiB,
 * a few MiB used), so its peaks are its current figures; the parent mapped, touched and unmapped PEAK_MIB before, so
 * its own peaks are higher. smaps has no figure for page tables;
 * fork_fail_nth counts those.
 * Committed_AS is exact on UML (one CPU: the percpu counter is a plain
 * one): the parent reads it while the child waits, after the child
 * summed up its VM_ACCOUNT vmas, so nothing either does in between can
 * move it. Both read /proc with read(2) into static buffers: malloc()
 * could grow the heap, a VM_ACCOUNT vma.
 */
#include "mappings.h"

#define PROC_BUF_SIZE	(256 * 1024)
#define PEAK_MIB	4

enum figure {
	RSS_ANON, RSS_FILE, RSS_SHMEM, VM_SWAP, VM_SIZE, VM_DATA, VM_STK, VM_EXE, VM_LCK,
	VM_PIN, VM_HWM_RSS, VM_PEAK_SIZE, NR_FIGURES
};

/* What the child sends the parent: each figure, counter and walk. */
struct figures {
	long long counter[NR_FIGURES], walk[NR_FIGURES];
	long long accountable_kb;	/* the child's VM_ACCOUNT vmas */
	bool read_all;
};

static const char *const figure_rows[NR_FIGURES] = {
	[RSS_ANON] = "RssAnon is the child's anonymous pages",
	[RSS_FILE] = "RssFile is its other file pages",
	[RSS_SHMEM] = "RssShmem is its shmem pages (tmpfs, SysV, shared anon)",
	[VM_SWAP] = "VmSwap is its swap entries",
	[VM_SIZE] = "VmSize is its vmas",
	[VM_DATA] = "VmData is its private writable vmas",
	[VM_STK] = "VmStk is its stack vmas",
	[VM_EXE] = "VmExe is its executable vmas",
	[VM_LCK] = "VmLck is its VM_LOCKED vmas",
	[VM_PIN] = "VmPin is 0, not the parent's io_uring pins",
	[VM_HWM_RSS] = "VmHWM is its VmRSS, not the parent's peak",
	[VM_PEAK_SIZE] = "VmPeak is its VmSize, not the parent's peak",
};

static char proc_buf[PROC_BUF_SIZE];

/* @path whole into proc_buf, NUL-terminated; false if it did not fit. */
static bool read_proc(const char *path)
{
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return false;
	while ((n = read(fd, proc_buf + len, sizeof(proc_buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	proc_buf[len] = '\0';
	return n == 0 && len < sizeof(proc_buf) - 1;
}

/* The kB of "@name:" in proc_buf, or -1. */
static long long field_kb(const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = proc_buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ':')
			return strtoll(p + len + 1, NULL, 10);
	return -1;
}

/* Does a VmFlags line (two letters a flag) hold @flag? */
static bool has_flag(const char *flags, const char *flag)
{
	const char *p;

	for (p = flags; *p && *p != '\n'; p++)
		if (p[0] == flag[0] && p[1] == flag[1] &&
		    (p == flags || p[-1] == ' '))
			return true;
	return false;
}

/*
 * Is a vma of this smaps path shmem's? Every file this test maps is in
 * /tmp, a tmpfs in the UML forklab boots; SysV segments and MAP_SHARED
 * anon are shmem files of their own. The executable is not.
 */
static bool is_shmem_path(const char *path)
{
	return !strncmp(path, "/tmp/", 5) || !strncmp(path, "/SYSV", 5) ||
	       !strncmp(path, "/dev/zero", 9) || !strncmp(path, "/memfd:", 7);
}

/*
 * Walk proc_buf (smaps) vma by vma into @f->walk and
 * @f->accountable_kb: each vma's size and flags, the way mm/internal.h's
 * is_data_mapping(), is_stack_mapping() and is_exec_mapping() sort them
 * (VM_STACK is VM_GROWSDOWN, "gd"), and its Rss, Anonymous and Swap.
 */
static void walk_smaps(struct figures *f)
{
	long long size = 0, rss = 0, anon = 0, swap = 0;
	unsigned long start, end, inode = 0;
	const char *p, *flags;
	bool wr, sh, ex, gd, shmem = false, gate = false;
	int path;

	for (p = proc_buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		/* "start-end perms offset dev inode path": the entry's header */
		if (sscanf(p, "%lx-%lx %*s %*s %*s %lu %n", &start, &end, &inode,
			   &path) == 3) {
			shmem = is_shmem_path(p + path);
			/* x86_64's vsyscall page: the gate area, in no vma */
			gate = !strncmp(p + path, "[vsyscall]", 10);
			continue;
		}
		if (!strncmp(p, "Size:", 5))
			size = strtoll(p + 5, NULL, 10);
		else if (!strncmp(p, "Rss:", 4))
			rss = strtoll(p + 4, NULL, 10);
		else if (!strncmp(p, "Anonymous:", 10))
			anon = strtoll(p + 10, NULL, 10);
		else if (!strncmp(p, "Swap:", 5))
			swap = strtoll(p + 5, NULL, 10);
		if (strncmp(p, "VmFlags:", 8))
			continue;
		/* the last line of a vma's entry */
		if (gate)
			continue;
		flags = p + 8;
		wr = has_flag(flags, "wr");
		sh = has_flag(flags, "sh");
		ex = has_flag(flags, "ex");
		gd = has_flag(flags, "gd");
		f->walk[VM_SIZE] += size;
		f->walk[VM_DATA] += wr && !sh && !gd ? size : 0;
		f->walk[VM_STK] += gd ? size : 0;
		f->walk[VM_EXE] += ex && !wr && !gd ? size : 0;
		f->walk[VM_LCK] += has_flag(flags, "lo") ? size : 0;
		f->walk[RSS_ANON] += anon;
		f->walk[shmem ? RSS_SHMEM : RSS_FILE] += rss - anon;
		/*
		 * An anonymous vma's Swap is its swap entries; a file vma's
		 * adds the shmem pages its file has in swap, which are the
		 * file's, not the mm's (MM_SWAPENTS). None of this parent's
		 * file vmas has swap entries of its own.
		 */
		f->walk[VM_SWAP] += inode ? 0 : swap;
		f->accountable_kb += has_flag(flags, "ac") ? size : 0;
		size = rss = anon = swap = 0;
	}
}

/* The counters of /proc/self/status (in proc_buf) into @f. */
static void read_counters(struct figures *f)
{
	static const char *const status_names[NR_FIGURES] = {
		[RSS_ANON] = "RssAnon", [VM_SWAP] = "VmSwap",
		[VM_SIZE] = "VmSize", [VM_DATA] = "VmData",
		[VM_STK] = "VmStk", [VM_LCK] = "VmLck", [VM_PIN] = "VmPin",
		[VM_HWM_RSS] = "VmHWM", [VM_PEAK_SIZE] = "VmPeak",
	};
	int i;

	for (i = 0; i < NR_FIGURES; i++)
		if (status_names[i])
			f->counter[i] = field_kb(status_names[i]);
	f->counter[RSS_FILE] = field_kb("RssFile");
	f->counter[RSS_SHMEM] = field_kb("RssShmem");
	/* exec_vm: task_mem() splits it into VmExe and VmLib */
	f->counter[VM_EXE] = field_kb("VmExe") + field_kb("VmLib");
	/* the peaks are held against the current figures */
	f->walk[VM_HWM_RSS] = field_kb("VmRSS");
	f->walk[VM_PEAK_SIZE] = field_kb("VmSize");
}

/*
 * In the child: the counters, the walk, and the counters again, until
 * the two reads agree (the first reads may fault in a page of the
 * child's own stack, which moves RssAnon; proc_buf the parent touched).
 */
static void child_figures(struct figures *f)
{
	struct figures again;
	int tries;

	for (tries = 0; tries < 3; tries++) {
		memset(f, 0, sizeof(*f));
		memset(&again, 0, sizeof(again));
		if (!read_proc("/proc/self/status"))
			return;
		read_counters(f);
		if (!read_proc("/proc/self/smaps"))
			return;
		walk_smaps(f);
		if (!read_proc("/proc/self/status"))
			return;
		read_counters(&again);
		if (!memcmp(f->counter, again.counter, sizeof(f->counter))) {
			f->read_all = true;
			return;
		}
	}
}

static long long committed_as_kb(void)
{
	if (!read_proc("/proc/meminfo"))
		ksft_exit_fail_msg("read /proc/meminfo\n");
	return field_kb("Committed_AS");
}

int main(void)
{
	struct mapping maps[NR_MAPPINGS];
	long long before, during;
	int to_parent[2], to_child[2], i;
	struct figures f;
	void *peak, *pinned;
	bool ok;
	char go;
	pid_t pid;

	ksft_print_header();
	ksft_set_plan(NR_FIGURES + 1);
	for (i = 0; i < (int)NR_MAPPINGS; i++) {
		maps[i] = mapping_table[i];
		map_one(&maps[i]);
	}
	/* peaks above anything the child will have */
	peak = mmap(NULL, PEAK_MIB << 20, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (peak == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(peak, 1, PEAK_MIB << 20);
	munmap(peak, PEAK_MIB << 20);
	/* pinned_vm the parent has and the child must not (mm_init()) */
	pinned = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pinned == MAP_FAILED || io_uring_pin(pinned, page_size()) < 0)
		ksft_exit_fail_msg("io_uring: cannot pin a page: %s\n", strerror(errno));
	if (proc_value("/proc/self/status", "VmPin") != (long long)page_size() / 1024)
		ksft_exit_fail_msg("the parent's VmPin is not its pinned page\n");
	memset(proc_buf, 0, sizeof(proc_buf));
	if (pipe(to_parent) || pipe(to_child))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	/* one child's figures for every row: its waits are the first's */
	row_begin("%s", figure_rows[0]);
	fflush(stdout);
	before = committed_as_kb();
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0) {
		child_figures(&f);
		if (write(to_parent[1], &f, sizeof(f)) != sizeof(f))
			_exit(2);
		/* alive, and still, while the parent reads Committed_AS */
		_exit(read(to_child[0], &go, 1) == 1 ? 0 : 2);
	}
	if (!read_report(to_parent[0], &f, sizeof(f)))
		ksft_exit_fail_msg("the child sent no figures\n");
	during = committed_as_kb();
	if (write(to_child[1], "", 1) != 1 || wait_child(pid))
		ksft_exit_fail_msg("the child failed\n");
	if (!f.read_all)
		ksft_exit_fail_msg("the child could not read its /proc/self files, or its counters moved on every try\n");

	for (i = 0; i < NR_FIGURES; i++) {
		ok = f.counter[i] == f.walk[i] && f.counter[i] >= 0;
		ksft_print_msg("%s: %lld kB, %s %lld kB\n", figure_rows[i],
			       f.counter[i],
			       i == VM_HWM_RSS || i == VM_PEAK_SIZE ? "now" : "walk",
			       f.walk[i]);
		if (i <= VM_SWAP && !rss_counters_exact())
			skip_named(figure_rows[i], "SPLIT_RSS_COUNTING: the RSS counters lag");
		else
			ksft_test_result(ok, "%s\n", figure_rows[i]);
	}
	ksft_print_msg("Committed_AS: %lld kB before fork, %lld kB with the child; its VM_ACCOUNT vmas: %lld kB\n",
		       before, during, f.accountable_kb);
	ksft_test_result(during - before == f.accountable_kb,
			 "Committed_AS grew by the child's VM_ACCOUNT vmas\n");
	ksft_finished();
}
