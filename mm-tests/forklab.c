// SPDX-License-Identifier: GPL-2.0
/*
 * The helpers of mm-tests/forklab.h, linked into every mm-tests program,
 * museum reproducer and benchmark as the tree's selftests/mm/vm_util.c is
 * (mm-tests/Makefile). forklab.h says what each does.
 *
 * kselftest.h keeps its counters per object file: a helper here that
 * reported a result would count it in this file's copy, not the
 * program's. So the helpers here only print (ksft_print_msg()) or end the
 * program (ksft_exit_fail_msg(), whose "# Totals" line then counts
 * nothing); skip_named(), which counts, stays in forklab.h.
 */
#include <setjmp.h>
#include <signal.h>
#include <time.h>

#include "forklab.h"

/*
 * stdout line-buffered before main(), as 6.12's ksft_print_header() makes
 * it and 6.1's does not: a child that exits with the parent's unflushed
 * lines in its copy of the buffer would print them twice.
 */
static void __attribute__((constructor)) forklab_line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

enum fork_copy_policy fork_copy_policy(void)
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

const char *fork_copy_policy_name(void)
{
	return fork_copy_policy_names[fork_copy_policy()];
}

void set_fork_copy_policy(const char *name)
{
	FILE *f = fopen("/proc/sys/vm/fork_copy", "w");

	if (!f || fputs(name, f) < 0 || fclose(f))
		ksft_exit_fail_msg("fork_copy=%s: %s\n", name, strerror(errno));
	if (strcmp(fork_copy_policy_name(), name))
		ksft_exit_fail_msg("fork_copy is %s, not %s\n",
				   fork_copy_policy_name(), name);
}

bool policy_copies_skipped(bool shared)
{
	return fork_copy_rule(fork_copy_policy(), false, shared);
}

long long proc_value(const char *path, const char *name)
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

long long read_number(const char *path)
{
	FILE *f = fopen(path, "r");
	long long n;

	if (!f || fscanf(f, "%lld", &n) != 1)
		ksft_exit_fail_msg("read %s: %s\n", path, strerror(errno));
	fclose(f);
	return n;
}

long long ksm_merged_pages(void)
{
	return read_number("/proc/self/ksm_merging_pages");
}

int vma_has_flag(const void *addr, const char *flag)
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

bool kernel_older_than(int major, int minor)
{
	struct utsname u;
	int ma, mi;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		ksft_exit_fail_msg("uname: %s\n", strerror(errno));
	return ma < major || (ma == major && mi < minor);
}

bool smaps_shows_lock_on_fault(void)
{
	return !kernel_older_than(6, 2);
}

long kconfig_number(const char *name)
{
	const char *path = getenv("KCONFIG_PATH");
	size_t len = strlen(name);
	char line[256];
	long value = -1;
	FILE *f;

	f = path ? fopen(path, "r") : NULL;
	if (!f)
		return -1;
	while (value < 0 && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == '=')
			value = strtol(line + len + 1, NULL, 0);
	fclose(f);
	return value;
}

bool rss_counters_exact(void)
{
	long nr_cpus = kconfig_number("CONFIG_NR_CPUS");

	return !kernel_older_than(6, 2) || nr_cpus < 0 ||
	       nr_cpus < kconfig_number("CONFIG_SPLIT_PTLOCK_CPUS");
}

long long vmstat_value(const char *name)
{
	return proc_value("/proc/vmstat", name);
}

bool have_fork_counts(void)
{
	return vmstat_value(fork_count_names[COUNT_PTES]) >= 0;
}

struct fork_counts read_fork_counts(void)
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

struct fork_counts fork_counts_delta(struct fork_counts a,
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

size_t pagemap_count(const void *addr, size_t len, uint64_t bit)
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

size_t present_pages(const void *addr, size_t len)
{
	return pagemap_count(addr, len, PM_PRESENT);
}

size_t swapped_pages(const void *addr, size_t len)
{
	return pagemap_count(addr, len, PM_SWAP);
}

static sigjmp_buf sigbus_jump;

static void on_sigbus(int sig)
{
	siglongjmp(sigbus_jump, 1);
}

int load_or_sigbus(const void *p)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	volatile int byte = -1;

	sigaction(SIGBUS, &sa, &old);
	if (!sigsetjmp(sigbus_jump, 1))
		byte = __atomic_load_n((const uint8_t *)p, __ATOMIC_RELAXED);
	sigaction(SIGBUS, &old, NULL);
	return byte;
}

unsigned long page_pfn(const void *addr)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	unsigned long pfn;

	if (fd < 0)
		ksft_exit_fail_msg("open /proc/self/pagemap: %s\n", strerror(errno));
	pfn = pagemap_get_pfn(fd, (char *)addr);
	close(fd);
	return pfn == -1ul ? 0 : pfn;
}

uint64_t kpage_word(const char *file, const void *p)
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

bool page_in_thp(const void *p)
{
	return kpage_word("kpageflags", p) & (1ULL << 22);	/* KPF_THP */
}

long long page_mapcount_at(const void *p)
{
	return kpage_word("kpagecount", p);
}

long pat_reservations(unsigned long phys, unsigned long size,
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

void fill_words(uint8_t *base, unsigned int writer, uint32_t id,
		size_t first, size_t n)
{
	size_t words = page_size() / sizeof(uint64_t), p, j;

	for (p = first; p < first + n; p++)
		for (j = 0; j < words; j++)
			((uint64_t *)(base + p * page_size()))[j] =
				page_word(writer, id, p, j);
}

long first_wrong_page(const volatile uint8_t *base,
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

int io_uring_pin(void *p, size_t len)
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

int open_uffd(uint64_t features)
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

pid_t fork_flushed(void)
{
	fflush(stdout);
	return fork();
}

pid_t fork_or_fail(void)
{
	pid_t pid = fork_flushed();

	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	return pid;
}

void lockstep_init(struct lockstep *ls)
{
	if (pipe(ls->to_parent) || pipe(ls->to_child))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
}

void lockstep_close(struct lockstep *ls)
{
	close(ls->to_parent[0]);
	close(ls->to_parent[1]);
	close(ls->to_child[0]);
	close(ls->to_child[1]);
}

void say(int fd)
{
	if (write(fd, "", 1) != 1)
		_exit(3);
}

void hear(int fd)
{
	char c;
	ssize_t n;

	wait_limit(WAIT_LIMIT_S, "the other side's next step");
	n = read(fd, &c, 1);
	wait_done();
	if (n != 1)
		_exit(3);
}

int tmp_fd(const char *name, size_t size)
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

void write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		ksft_exit_fail_msg("write %s to %s: %s\n", value, path,
				   strerror(errno));
	close(fd);
}

void set_vm(const char *name, long long value)
{
	char path[64], text[32];

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	snprintf(text, sizeof(text), "%lld", value);
	write_file(path, text);
}

void set_commit_limit(long long limit)
{
	long long swap = proc_value("/proc/meminfo", "SwapTotal") * 1024;

	set_vm("overcommit_kbytes", (limit - swap) / 1024);
	set_vm("overcommit_memory", 2);
}

void reset_overcommit(void)
{
	set_vm("overcommit_memory", 0);
	set_vm("overcommit_ratio", 50);
}

char *memcg_group(void)
{
	static char group[MEMCG_PATH_MAX];

	return group;
}

void memcg_path(char *path, size_t size, const char *file)
{
	snprintf(path, size, "%s/%s", memcg_group(), file);
}

void memcg_write(const char *file, const char *value)
{
	char path[128];

	memcg_path(path, sizeof(path), file);
	write_file(path, value);
}

void memcg_write_bytes(const char *file, long long bytes)
{
	char text[32];

	snprintf(text, sizeof(text), "%lld", bytes);
	memcg_write(file, text);
}

long long memcg_number(const char *file)
{
	char path[128];

	memcg_path(path, sizeof(path), file);
	return read_number(path);
}

long long memcg_value(const char *file, const char *name)
{
	char path[128];
	long long value;

	memcg_path(path, sizeof(path), file);
	value = proc_value(path, name);
	if (value < 0)
		ksft_exit_fail_msg("%s has no %s line\n", path, name);
	return value;
}

void memcg_enter(const char *name)
{
	char pid[16];

	snprintf(memcg_group(), MEMCG_PATH_MAX, "%s/forklab-%s-%d", CGROUP_ROOT, name, getpid());
	if (mkdir(memcg_group(), 0755))
		ksft_exit_fail_msg("mkdir %s: %s\n", memcg_group(), strerror(errno));
	snprintf(pid, sizeof(pid), "%d", getpid());
	memcg_write("cgroup.procs", pid);
}

void memcg_leave(void)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", getpid());
	write_file(CGROUP_ROOT "/cgroup.procs", pid);
	if (rmdir(memcg_group()))
		ksft_exit_fail_msg("rmdir %s: %s\n", memcg_group(), strerror(errno));
}

const char *memcg_missing(void)
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

bool lookup_text(struct text_range *range)
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
		return false;
	snprintf(range->start, sizeof(range->start), "%llu", start);
	snprintf(range->end, sizeof(range->end), "%llu", end);
	return true;
}

void find_text(struct text_range *range)
{
	if (!lookup_text(range))
		ksft_exit_fail_msg("no %s in /proc/kallsyms (CONFIG_KALLSYMS)\n",
				   range->names[0]);
	ksft_print_msg("%s: [0x%llx, 0x%llx)\n", range->found,
		       strtoull(range->start, NULL, 10), strtoull(range->end, NULL, 10));
}

void ksm_knob(const char *name, const char *value)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", name);
	write_file(path, value);
}

long long ksm_merge(size_t pages)
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

void populate_program(void)
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

bool on_uml(void)
{
	return access("/proc/exitcode", F_OK) == 0;
}

bool faults_as_expected(long faults, size_t present, size_t pages)
{
	if (present == pages)
		return faults == 0 || (on_uml() && faults == (long)pages);
	return faults >= 1 && faults <= (long)pages;
}

long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

bool read_report(int fd, void *buf, size_t size)
{
	ssize_t n;

	wait_limit(WAIT_LIMIT_S, "the child's report");
	n = read(fd, buf, size);
	wait_done();
	return n == (ssize_t)size;
}

int wait_child(pid_t pid)
{
	return wait_child_within(pid, WAIT_LIMIT_S);
}

int wait_child_within(pid_t pid, unsigned int secs)
{
	char what[48];
	int status;

	snprintf(what, sizeof(what), "the exit of child %d", (int)pid);
	wait_limit(secs, what);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
	wait_done();
	return WIFEXITED(status) ? WEXITSTATUS(status) :
				   128 + WTERMSIG(status);
}

/*
 * The row in progress, and the waits of this process: what each waits
 * for, since when, for how long. The process that prints the rows is the
 * one that ran main(): a child has copies of the program's counters and
 * must not print a result of its own.
 */
static pid_t rows_pid;
static unsigned int row_number;
static char row_name[256];
static unsigned int (*results_printed)(void);

#define MAX_WAITS	4	/* a wait_child() inside a wait_limit() */

static struct wait {
	char what[128];
	time_t since;
	unsigned int secs;
} waits[MAX_WAITS];
static int nr_waits;

static void __attribute__((constructor)) forklab_rows_pid(void)
{
	rows_pid = getpid();
}

void rows_printed_by(pid_t pid)
{
	rows_pid = pid;
}

/* main()'s thread of the process that prints the rows */
static bool in_rows_thread(void)
{
	return syscall(SYS_gettid) == rows_pid;
}

void row_starts(unsigned int (*printed)(void), const char *name)
{
	results_printed = printed;
	row_number = printed() + 1;
	snprintf(row_name, sizeof(row_name), "%s", name);
}

const char *row_in_progress(void)
{
	return row_name;
}

void row_timed_out(const char *what, unsigned int secs)
{
	if (!results_printed)	/* no row named yet */
		printf("# before this program's first named row: waited %u s for %s\n",
		       secs, what);
	else if (results_printed() + 1 == row_number)
		printf("not ok %u %s # waited %u s for %s\n", row_number,
		       row_name, secs, what);
	else	/* the named row's result is out: the next is unnamed */
		printf("not ok %u (a row after %s) # waited %u s for %s\n",
		       results_printed() + 1, row_name, secs, what);
	fflush(stdout);
	/* what it forked is killed by init, once this process is gone */
	_exit(KSFT_FAIL);
}

/*
 * SIGALRM ends the row from inside a blocking call (waitpid(), read() of
 * a pipe or a uffd) or from a fault the kernel retries for ever. A wait
 * that prints (a row's diagnostics) could be interrupted inside stdio;
 * the handler's printf() would then wait for the lock it holds: the
 * program's limit ends that. The innermost wait's limit is the first to
 * pass.
 */
static void limit_passed(int sig)
{
	struct wait *w = &waits[nr_waits - 1];

	if (nr_waits)	/* else an alarm that wait_done() was ending */
		row_timed_out(w->what, w->secs);
}

/* The innermost wait's alarm, for what is left of it; none: SIG_DFL. */
static void arm_innermost(void)
{
	struct sigaction sa = { .sa_handler = nr_waits ? limit_passed : SIG_DFL };
	struct wait *w = &waits[nr_waits - 1];
	time_t left;

	alarm(0);
	sigaction(SIGALRM, &sa, NULL);
	if (!nr_waits)
		return;
	left = w->since + w->secs - time(NULL);
	alarm(left > 0 ? left : 1);
}

/*
 * @secs, scaled as forklab_wait_limit_s= on the kernel's command line
 * (init's environment) says: WAIT_LIMIT_S's new value. A slower machine
 * can give the waits more time, the tools' tests less.
 */
static unsigned int scaled_limit(unsigned int secs)
{
	const char *knob = getenv("forklab_wait_limit_s");
	unsigned long long scaled;

	if (!knob || atoi(knob) <= 0)
		return secs;
	scaled = (unsigned long long)secs * atoi(knob) / WAIT_LIMIT_S;
	return scaled ? scaled : 1;
}

void wait_limit(unsigned int secs, const char *what)
{
	struct wait *w;

	if (!in_rows_thread())
		return;
	if (nr_waits == MAX_WAITS)
		ksft_exit_fail_msg("%s(%s): %d waits already\n", __func__,
				   what, nr_waits);
	/* the entry whole before the count shows it to limit_passed() */
	alarm(0);
	w = &waits[nr_waits];
	snprintf(w->what, sizeof(w->what), "%s", what);
	w->since = time(NULL);
	w->secs = scaled_limit(secs);
	nr_waits++;
	arm_innermost();
}

void wait_done(void)
{
	if (!in_rows_thread())
		return;
	alarm(0);
	if (nr_waits)
		nr_waits--;
	arm_innermost();
}
