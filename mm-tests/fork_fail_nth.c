// SPDX-License-Identifier: GPL-2.0
/*
 * fork_fail_nth: fail each allocation fork() makes, one at a time, and
 * check that nothing leaks and the parent is untouched.
 *
 * The parent holds every mapping kind of mappings.h. For N = 1, 2, ...
 * it writes N to /proc/thread-self/fail-nth and forks: the N-th
 * allocation that failslab or fail_page_alloc sees fails. fork() must
 * then fail with ENOMEM, or succeed if the kernel can do without that
 * allocation (a "tolerated" injection: the child must still be right).
 * When fail-nth is still counting down after a fork, that fork made
 * fewer than N allocations: N - 1 is the number of injection points.
 *
 * By default failslab and fail_page_alloc ignore exactly the allocations
 * fork makes (they may sleep; order 0), so this test makes those
 * eligible, quiet, and puts each knob back at the end.
 *
 * After each attempt, everything fork allocates must be back where it
 * was (read_counters() says what is counted and what cannot be): a leak
 * on one path and an extra free on another do not cancel. A dup_mmap()
 * error path that forgets a vma shows up here, at the injection that
 * took it.
 *
 * Each injection point is named by its call site, from the stack that
 * /sys/kernel/debug/fail_nth_site keeps (patches/0009), and held to its
 * site's rule (../kunit/fail_nth_sites.h): a site with a fallback must be
 * tolerated, every other must fail the fork.
 *
 * The walk is over fork's own checks, the same on every attempt and
 * boot. The stack filter of each knob (CONFIG_FAULT_INJECTION_STACKTRACE_
 * FILTER, applied before the fail-nth count) leaves out the checks whose
 * number depends on what ran before:
 *
 *   - a slab's own page (a refill under ___slab_alloc()): whether a
 *     cache needs one depends on every earlier allocation and on frees
 *     that RCU callbacks make; its failure is the failure of the object
 *     asked for, at the same site, which failslab injects anyway;
 *   - the new task's stack when vmalloc makes it (under
 *     __vmalloc_node_range()): copy_process() takes one from a per-CPU
 *     cache of freed stacks first, which an exited child refills only
 *     when its task_struct is freed (an RCU grace period after the
 *     wait), and kernel threads take from too;
 *   - every page outside dup_mm() (fail_page_alloc requires dup_mm() on
 *     the stack): the above, and the parent's first COW after fork().
 *
 * Counted one more or less, either would move every later check to
 * another N from one attempt to the next: a walk could step over
 * dup_mm() altogether, as it did before this filter.
 *
 * fork_fail_nth_memcg (-m): the same walk under the
 * settings fork_memcg and fork_settings set, a memory cgroup of its own
 * (memory.max and memory.swap.max well above what it uses) and
 * vm.overcommit_memory=2 (CommitLimit well above Committed_AS): each of
 * fork's allocations is charged to the group (page tables, vmas,
 * anon_vmas, the task and its stack, the early-COW copy of the pinned
 * page, which folio_prealloc() charges), and each VM_ACCOUNT vma's
 * commit is checked against CommitLimit. After the walk the group holds
 * what it held before it, kind by kind (memcg_kinds[]). memory.stat is
 * exact only once flushed: each CPU's updates wait until a batch of them
 * is due, which only the kernel's flush every 2 s makes sure of, so both
 * reads wait MEMCG_FLUSH_WAIT first; and each CPU keeps up to a page of
 * slab bytes in its object stock until the stock changes hands, which
 * nothing here makes it do: the slab kind is held to within a page
 * (MEMCG_SLAB_SLACK). memory.current is not read (each CPU keeps a stock
 * of charged pages).
 *
 * In a group the walk meets one check that moves: a new slab of an
 * accounted cache gets its objcg vector (fail_nth_site_moves()), made
 * by whichever attempt made the slab. An injection there is tolerated
 * and the walk tries the same N again, so that the check after it is
 * not stepped over.
 */
#include <dirent.h>
#include <sys/syscall.h>

#include "mappings.h"
#include "../kunit/fail_nth_sites.h"

#define MAX_ATTEMPTS	100000
#define MAX_RETRIES	4	/* of one N, see fail_nth_site_moves() */
#define MEMFREE_SLACK_KB 2048

struct knob {
	const char *path;
	const char *value;
	char saved[32];
	char path_buf[96], value_buf[24];	/* of a fail_nth_knobs[] entry */
};

static struct text_range vmalloc_text = {
	.names = { "__vmalloc_node_range_noprof", "__vmalloc_node_range" } };
static struct text_range slab_refill_text = {
	.names = { "___slab_alloc", "new_slab", "allocate_slab" } };
static struct text_range dup_mm_text = { .names = { "dup_mm" } };

#define FAILSLAB	"/sys/kernel/debug/failslab/"
#define FAIL_PAGE_ALLOC	"/sys/kernel/debug/fail_page_alloc/"

/* fail_nth_knobs[] (set_knobs() writes their paths), then the filter. */
static struct knob common_knobs[ARRAY_SIZE(fail_nth_knobs)];
static struct knob filter_knobs[] = {
	{ FAILSLAB "stacktrace-depth", "32" },
	{ FAILSLAB "reject-end", vmalloc_text.end },
	{ FAILSLAB "reject-start", vmalloc_text.start },
	{ FAIL_PAGE_ALLOC "stacktrace-depth", "32" },
	{ FAIL_PAGE_ALLOC "reject-end", slab_refill_text.end },
	{ FAIL_PAGE_ALLOC "reject-start", slab_refill_text.start },
	{ FAIL_PAGE_ALLOC "require-end", dup_mm_text.end },
	{ FAIL_PAGE_ALLOC "require-start", dup_mm_text.start },
};

#define NR_KNOBS	(ARRAY_SIZE(common_knobs) + ARRAY_SIZE(filter_knobs))

static struct knob *knob(size_t i)
{
	return i < ARRAY_SIZE(common_knobs) ? &common_knobs[i] :
	       &filter_knobs[i - ARRAY_SIZE(common_knobs)];
}

#define NO_FAIL_NTH \
	"no fail-nth or fault-injection debugfs (CONFIG_FAULT_INJECTION_DEBUG_FS, FAILSLAB, FAIL_PAGE_ALLOC)\n"

#define NO_DUP_MM \
	"no dup_mm() of its own in /proc/kallsyms (inlined: forklab's patches/0004 keeps it a function)\n"

/*
 * Has the kernel what the walk needs? Asked before the plan, so that a
 * kernel without fault injection (a distribution's) skips the program
 * whole ("1..0 # SKIP"), not one row of a plan it never runs.
 */
static bool have_fail_nth(void)
{
	char path[96];
	size_t i;

	if (access("/proc/thread-self/fail-nth", W_OK))
		return false;
	for (i = 0; i < ARRAY_SIZE(fail_nth_knobs); i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%s",
			 fail_nth_knobs[i].dir, fail_nth_knobs[i].name);
		if (access(path, W_OK))
			return false;
	}
	return true;
}

static bool set_knobs(void)
{
	struct knob *k;
	size_t i;

	find_text(&vmalloc_text);
	find_text(&slab_refill_text);
	find_text(&dup_mm_text);
	for (i = 0; i < ARRAY_SIZE(fail_nth_knobs); i++) {
		k = &common_knobs[i];
		snprintf(k->path_buf, sizeof(k->path_buf), "/sys/kernel/debug/%s/%s",
			 fail_nth_knobs[i].dir, fail_nth_knobs[i].name);
		snprintf(k->value_buf, sizeof(k->value_buf), "%lu",
			 fail_nth_knobs[i].value);
		k->path = k->path_buf;
		k->value = k->value_buf;
	}
	for (i = 0; i < NR_KNOBS; i++) {
		int fd = open((k = knob(i))->path, O_RDONLY);
		ssize_t len;

		if (fd < 0)
			return false;
		len = read(fd, k->saved, sizeof(k->saved) - 1);
		close(fd);
		if (len <= 0)
			return false;
		k->saved[len] = '\0';
		write_file(k->path, k->value);
	}
	return true;
}

static void restore_knobs(void)
{
	size_t i;

	for (i = 0; i < NR_KNOBS; i++)
		write_file(knob(i)->path, knob(i)->saved);
}

/* Active objects of a slab cache, from /proc/slabinfo. */
/*
 * Shrink a slab cache (/sys/kernel/slab/NAME/shrink). Under KASAN (make
 * check SANITIZE=1) freed objects wait in its quarantine and still count
 * as active; shrinking a cache takes its objects out of the quarantine.
 * Elsewhere it only gives empty slabs back.
 */
static void shrink_cache(const char *cache)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", cache);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return;
	if (write(fd, "1", 1) != 1)
		ksft_exit_fail_msg("write %s: %s\n", path, strerror(errno));
	close(fd);
}

/* Every cache: what KASAN's quarantine holds of any of them, for MemFree. */
static void shrink_all_caches(void)
{
	DIR *dir = opendir("/sys/kernel/slab");
	struct dirent *d;

	if (!dir)
		return;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			shrink_cache(d->d_name);
	closedir(dir);
}

static long long slab_objects(const char *cache)
{
	char line[512], name[64];
	long long active = -1, n;
	FILE *f;

	shrink_cache(cache);
	f = fopen("/proc/slabinfo", "r");

	if (!f)
		ksft_exit_fail_msg("open /proc/slabinfo: %s\n", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", name, &n) == 2 &&
		    !strcmp(name, cache))
			active = n;
	fclose(f);
	if (active < 0)
		ksft_exit_fail_msg("no slab cache %s in /proc/slabinfo\n", cache);
	return active;
}

/*
 * What a fork allocates and must give back, exactly, after each attempt:
 * the slab caches count exactly when booted with slub_debug on them (see
 * run.list). Not here: caches whose objects a fork frees through RCU
 * (maple_node, task_struct, signal_cache, cred_jar), which lag by a
 * grace period that user space cannot wait for; sighand_cache, which
 * every kernel thread the kernel starts or ends on its own moves (each
 * has a sighand of its own); MemFree, which per-cpu
 * page lists move by pages that nobody leaked, is checked over the whole
 * run only, within MEMFREE_SLACK_KB.
 */
enum counter {
	PAGE_TABLES, VMAS, ANON_VMAS, ANON_VMA_CHAINS, MMS, FILES, FS,
	RSS_ANON, RSS_FILE, RSS_SHMEM, COMMITTED, MEM_FREE, NR_COUNTERS
};

static const char * const counter_names[NR_COUNTERS] = {
	"nr_page_table_pages", "vm_area_struct objects", "anon_vma objects",
	"anon_vma_chain objects", "mm_struct objects", "files_cache objects",
	"fs_cache objects", "RssAnon (kB)",
	"RssFile (kB)", "RssShmem (kB)", "Committed_AS (kB)", "MemFree (kB)",
};

static void read_counters(long long *c)
{
	c[PAGE_TABLES] = vmstat_value("nr_page_table_pages");
	c[VMAS] = slab_objects("vm_area_struct");
	c[ANON_VMAS] = slab_objects("anon_vma");
	c[ANON_VMA_CHAINS] = slab_objects("anon_vma_chain");
	c[MMS] = slab_objects("mm_struct");
	c[FILES] = slab_objects("files_cache");
	c[FS] = slab_objects("fs_cache");
	c[RSS_ANON] = proc_value("/proc/self/status", "RssAnon");
	c[RSS_FILE] = proc_value("/proc/self/status", "RssFile");
	c[RSS_SHMEM] = proc_value("/proc/self/status", "RssShmem");
	/* what dup_mmap() charged for VM_ACCOUNT vmas, and gave back */
	c[COMMITTED] = proc_value("/proc/meminfo", "Committed_AS");
}

static void read_memfree(long long *c)
{
	shrink_all_caches();
	c[MEM_FREE] = proc_value("/proc/meminfo", "MemFree");
}

/* Per counter: the attempts after which it was not back where it was. */
static int leaked_at[NR_COUNTERS];

/* Each exact counter after one attempt (@nth) against before it. */
static void check_attempt(int nth, const long long *pre, const long long *post)
{
	int i;

	for (i = 0; i < MEM_FREE; i++) {
		if (pre[i] == post[i])
			continue;
		if (!leaked_at[i]++)
			ksft_print_msg("injection %d: %s %lld -> %lld\n", nth,
				       counter_names[i], pre[i], post[i]);
	}
}

#define NTH_SITE_PATH	"/sys/kernel/debug/fail_nth_site"
#define MAX_SITES	32

struct site {
	char name[64];
	enum fail_nth_via via;
	int nowarn;
	int failed, tolerated;
};

static struct site sites[MAX_SITES];
static int nr_sites, wrong_sites;
/* The last injection hit a check later attempts may not make. */
static bool site_moved;
static bool verbose;	/* -v: each injection's whole stack */
/*
 * The walk's variants, each a line of run.list with its flags:
 * fork_fail_nth_gen2 (-g 2), one generation down; fork_fail_nth_memcg
 * (-m), in a memory cgroup under overcommit 2.
 */
static int generation = 1;
static bool in_memcg;

/*
 * The first wrong injections, said again beside the result they fail:
 * a run's summary (tools/judge/results) shows a failed row's last lines.
 */
#define MAX_WRONG	4
static char wrong_said[MAX_WRONG][192];

static __printf(1, 2) void wrong_site(const char *fmt, ...)
{
	char *line = wrong_sites < MAX_WRONG ? wrong_said[wrong_sites] : NULL;
	char buf[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line ? line : buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ksft_print_msg("%s\n", line ? line : buf);
	wrong_sites++;
}

/*
 * Where a pte table is asked for ("__pte_alloc" below): x86 has
 * pte_alloc_one() out of line (arch/x86/mm/pgtable.c), UML's generic one
 * is inlined into __pte_alloc().
 */
#define PTE_TABLE_SITE	(on_uml() ? "__pte_alloc" : "pte_alloc_one")

/*
 * Sites every fork of this parent makes: a walk that ended before it
 * met them all ended early (a stack too short to show copy_process(),
 * say), whatever it counted.
 */
static const char * const core_sites[] = {
	"dup_mm", "vm_area_dup", "anon_vma_clone", "anon_vma_fork",
	"__pte_alloc", "alloc_pid",
};

/* The first core site the walk never met, or NULL. */
static const char *core_site_missed(void)
{
	size_t i;
	int j;

	for (i = 0; i < ARRAY_SIZE(core_sites); i++) {
		const char *site = strcmp(core_sites[i], "__pte_alloc") ?
				   core_sites[i] : PTE_TABLE_SITE;

		for (j = 0; j < nr_sites; j++)
			if (fail_nth_frame_is(sites[j].name, site))
				break;
		if (j == nr_sites)
			return site;
	}
	return NULL;
}

/* The record's sequence number; -1 without CONFIG_FAULT_INJECTION_NTH_SITE. */
static long nth_site_seq(void)
{
	FILE *f = fopen(NTH_SITE_PATH, "r");
	long seq = -1;

	if (!f)
		return -1;
	if (fscanf(f, "seq %ld", &seq) != 1)
		ksft_exit_fail_msg("%s: no sequence number\n", NTH_SITE_PATH);
	fclose(f);
	return seq;
}

/*
 * Name the injection that fork @nth met, from the record after it, and
 * hold it to its site's rule. @seq: the record's number before the fork.
 *
 * false: the injection did not happen inside fork() but after it, in the
 * parent: fork() write-protects the parent's anon pages, and its first
 * write to one (glibc's fork() wrapper writes to the stack) copies a page
 * in do_wp_page(), which is an allocation too. fork() then made fewer
 * than @nth checks, which ends the walk.
 */
static bool check_site(int nth, long seq, bool tolerated)
{
	static char stack[1024];
	struct site key = { .name = "?" }, *site = NULL;
	char line[256], attr[32] = "", flags[16] = "";
	bool named = false, in_fork = false;
	long now = -1;
	int pid = -1, i;
	const char *why;
	FILE *f = fopen(NTH_SITE_PATH, "r");

	site_moved = false;
	if (!f)
		ksft_exit_fail_msg("open %s: %s\n", NTH_SITE_PATH, strerror(errno));
	if (fscanf(f, "seq %ld\npid %d\nattr %31s\nflags %15s\n", &now, &pid,
		   attr, flags) != 4)
		ksft_exit_fail_msg("%s: unexpected format\n", NTH_SITE_PATH);
	key.nowarn = !strcmp(flags, "nowarn");
	stack[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "+.\n")] = '\0';	/* func+0x1/0x2, .isra.0 */
		if (verbose && strlen(stack) + strlen(line) + 4 < sizeof(stack))
			strcat(strcat(stack, stack[0] ? " < " : ""), line);
		if (fail_nth_frame_is(line, "copy_process"))
			in_fork = true;
		if (named)
			continue;
		key.via = fail_nth_via_of(line, key.via);
		if (!fail_nth_is_alloc_frame(line)) {
			snprintf(key.name, sizeof(key.name), "%.63s", line);
			named = true;
		}
	}
	fclose(f);
	if (verbose)
		ksft_print_msg("injection %d: %s\n", nth, stack);
	if (now != seq + 1 || pid != getpid()) {
		wrong_site("injection %d: record %ld of pid %d, want %ld of %d",
			   nth, now, pid, seq + 1, getpid());
		return true;
	}
	if (!in_fork) {
		if (!tolerated) {
			wrong_site("injection %d: fork() failed after an injection outside it (%s)",
				   nth, key.name);
		}
		return false;
	}
	for (i = 0; i < nr_sites && !site; i++)
		if (!strcmp(sites[i].name, key.name) &&
		    sites[i].via == key.via && sites[i].nowarn == key.nowarn)
			site = &sites[i];
	if (!site) {
		if (nr_sites == MAX_SITES)
			ksft_exit_fail_msg("more than %d injection sites\n", MAX_SITES);
		site = &sites[nr_sites++];
		*site = key;
	}
	why = fail_nth_fallback(site->name, site->via, site->nowarn,
				!kernel_older_than(6, 2));
	if (tolerated)
		site->tolerated++;
	else
		site->failed++;
	ksft_print_msg("injection %d: %s%s%s: %s\n", nth, site->name,
		       fail_nth_via_names[site->via],
		       site->nowarn ? ", no-warn" : "",
		       tolerated ? "tolerated" : "ENOMEM");
	site_moved = fail_nth_site_moves(site->name);
	if (fail_nth_either_way(site->name))
		return true;
	if (tolerated && !why) {
		wrong_site("injection %d: fork() went on after a failure in %s%s (%s), which has no fallback",
			   nth, site->name, fail_nth_via_names[site->via], attr);
	} else if (!tolerated && why) {
		wrong_site("injection %d: a failure in %s%s failed fork(), although %s",
			   nth, site->name, fail_nth_via_names[site->via], why);
	}
	return true;
}

static struct mapping maps[NR_MAPPINGS];

/*
 * A page the parent holds pinned (FOLL_PIN | FOLL_LONGTERM, through
 * io_uring's registered buffers) while it forks: fork copies it at once
 * (copy_present_page(), with a page from folio_prealloc()), so each fork
 * makes that allocation too, and its child must read the bytes.
 */
#define PINNED_BYTE	0xa7
static uint8_t *pinned;

static void pin_a_page(void)
{
	pinned = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pinned == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(pinned, PINNED_BYTE, page_size());
	if (io_uring_pin(pinned, page_size()) < 0)
		ksft_exit_fail_msg("io_uring: cannot pin a page: %s\n", strerror(errno));
}

static bool pinned_intact(void)
{
	size_t i;

	for (i = 0; i < page_size(); i++)
		if (pinned[i] != PINNED_BYTE)
			return false;
	return true;
}

/*
 * Put the paged-out row back in swap before each fork: reading it after
 * the last one swapped it in, and a fork must meet swap entries
 * (copy_nonpresent_pte()) under injection too.
 */
static void page_out_again(void)
{
	int tries;
	size_t i;

	for (i = 0; i < NR_MAPPINGS; i++) {
		if (maps[i].advice != MADV_PAGEOUT)
			continue;
		/*
		 * A page still under writeback from the last time is skipped:
		 * ask again every 2 ms (the write takes a few), for at most
		 * 10 s (a loaded host's swap device is slow).
		 */
		for (tries = 0; tries < 5000; tries++) {
			if (madvise(maps[i].addr, MAPPING_SIZE, MADV_PAGEOUT))
				ksft_exit_fail_msg("madvise(MADV_PAGEOUT): %s\n",
						   strerror(errno));
			if (swapped_pages(maps[i].addr, MAPPING_SIZE) == MAPPING_PAGES)
				break;
			usleep(2000);
		}
		if (tries == 5000)
			ksft_exit_fail_msg("%s: not all in swap again after 10 s\n",
					   maps[i].desc);
	}
}

/* The child of a successful fork: every mapping as fork_mappings wants. */
static void child_checks_all(void)
{
	const char *wrong;
	long faults;
	size_t i;

	for (i = 0; i < NR_MAPPINGS; i++) {
		wrong = child_check(&maps[i], &faults);
		if (wrong) {
			ksft_print_msg("child: %s: %s\n", maps[i].desc, wrong);
			_exit(1);
		}
	}
	if (!pinned_intact()) {
		ksft_print_msg("child: the pinned page's bytes are wrong\n");
		_exit(1);
	}
	_exit(0);
}

static bool parent_all_intact(void)
{
	size_t i;

	for (i = 0; i < NR_MAPPINGS; i++)
		if (!parent_intact(&maps[i])) {
			ksft_print_msg("parent: %s changed\n", maps[i].desc);
			return false;
		}
	if (!pinned_intact()) {
		ksft_print_msg("parent: the pinned page changed\n");
		return false;
	}
	return true;
}

/*
 * fork_fail_nth_gen2 (-g 2): the walk runs in a
 * child of the process that mapped the rows, which waits, silent, and
 * exits with its status. Each fork of the walk is then a second
 * generation's: every anon vma hangs off two anon_vmas, its first
 * generation's and its own, so anon_vma_fork() clones two chain entries
 * and links a third (those of the rows mapped again here: one, and a
 * second); the swap entries, KSM pages and zero-page ptes it forks are
 * already shared with a live parent. What a fork does not hand over is
 * done again here: the MADV_DONTFORK and MADV_WIPEONFORK rows are mapped
 * anew, the mlocked rows locked again (dup_mmap() unlocked them), so
 * that each fork of the walk meets them as the first generation's did.
 */
static void become_second_generation(void)
{
	pid_t pid = fork_or_fail();
	size_t i;

	/* the child prints the rows, and its waits have the limits */
	rows_printed_by(pid ? pid : getpid());
	if (pid > 0)
		_exit(wait_child(pid));
	for (i = 0; i < NR_MAPPINGS; i++) {
		if (maps[i].mlocked && (maps[i].lock_on_fault ?
			mlock2(maps[i].addr, MAPPING_SIZE, MLOCK_ONFAULT) :
			mlock(maps[i].addr, MAPPING_SIZE)))
			ksft_exit_fail_msg("mlock: %s\n", strerror(errno));
		if ((maps[i].advice != MADV_DONTFORK &&
		     maps[i].advice != MADV_WIPEONFORK) ||
		    maps[i].reshape == DOFORK_AGAIN)
			continue;
		if (maps[i].advice == MADV_WIPEONFORK)
			munmap(maps[i].addr, MAPPING_SIZE);
		maps[i] = mapping_table[i];
		map_one(&maps[i]);
	}
}

/* fork_fail_nth_memcg: the group's charges by kind (memory.stat). */
#define MEMCG_FLUSH_WAIT	3	/* s: past the kernel's 2 s stats flush */
#define MEMCG_HEADROOM		(128LL << 20)

/*
 * Not "percpu": with one CPU (both guests are !SMP) a percpu_counter,
 * the mm's rss counters, is a plain field of the mm_struct.
 */
static const char * const memcg_kinds[] = {
	"anon", "pagetables", "kernel_stack", "slab_unreclaimable",
};

#define NR_MEMCG_COUNTS	ARRAY_SIZE(memcg_kinds)
#define MEMCG_SLAB_SLACK	4096	/* bytes: one CPU's object stock */

static void read_memcg(long long *c)
{
	size_t i;

	sleep(MEMCG_FLUSH_WAIT);
	for (i = 0; i < NR_MEMCG_COUNTS; i++)
		c[i] = memcg_value("memory.stat", memcg_kinds[i]);
}

/* After the walk against before it: the slab bytes within a stock. */
static bool memcg_kind_back(size_t i, long long before, long long after)
{
	long long slack = strstr(memcg_kinds[i], "slab") ? MEMCG_SLAB_SLACK : 0;

	return after - before <= slack && before - after <= slack;
}

#define MEMCG_ENV	"FORKLAB_FAIL_NTH_MEMCG"

/*
 * Into a group of its own, under overcommit 2, as a new image: a page
 * this program touched before the move stays charged to the root group,
 * and the parent's first write to it after a fork would move its charge
 * (the COW copy is the group's); after execve() every anon page is the
 * group's. The new image finds its group in MEMCG_ENV.
 */
static void enter_settings(char **argv)
{
	const char *missing;

	if (getenv(MEMCG_ENV)) {
		snprintf(memcg_group(), MEMCG_PATH_MAX, "%s", getenv(MEMCG_ENV));
		return;
	}
	missing = memcg_missing();
	if (missing) {
		ksft_print_header();
		ksft_exit_skip("%s\n", missing);
	}
	memcg_enter("fail-nth");
	memcg_write_bytes("memory.max", MEMCG_HEADROOM);
	memcg_write_bytes("memory.swap.max", MEMCG_HEADROOM);
	set_commit_limit(proc_value("/proc/meminfo", "Committed_AS") * 1024 +
			 proc_value("/proc/meminfo", "SwapTotal") * 1024 +
			 MEMCG_HEADROOM);
	if (setenv(MEMCG_ENV, memcg_group(), 1))
		ksft_exit_fail_msg("setenv: %s\n", strerror(errno));
	fflush(stdout);
	execv("/proc/self/exe", argv);
	ksft_exit_fail_msg("execv /proc/self/exe: %s\n", strerror(errno));
}

/* Fork with fail-nth at @nth (0: no injection); did the countdown end? */
static pid_t fork_failing(int fail_nth_fd, int nth, bool *injected)
{
	char buf[32];
	pid_t pid;
	int err;
	ssize_t len;

	snprintf(buf, sizeof(buf), "%d", nth);
	if (pwrite(fail_nth_fd, buf, strlen(buf), 0) < 0)
		ksft_exit_fail_msg("write fail-nth: %s\n", strerror(errno));
	pid = fork();
	err = errno;
	if (pid == 0)
		child_checks_all();
	len = pread(fail_nth_fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		ksft_exit_fail_msg("read fail-nth: %s\n", strerror(errno));
	buf[len] = '\0';
	*injected = nth && atoi(buf) == 0;
	if (pwrite(fail_nth_fd, "0", 1, 0) < 0)
		ksft_exit_fail_msg("reset fail-nth: %s\n", strerror(errno));
	errno = err;
	return pid;
}

int main(int argc, char **argv)
{
	int points = -1, failed = 0, tolerated = 0, wrong_errno = 0;
	int bad_children = 0, broken_parent = 0, leaks = 0, nth, fd, retries = 0;
	long long before[NR_COUNTERS], after[NR_COUNTERS];
	long long pre[NR_COUNTERS], post[NR_COUNTERS];
	long long memcg_before[NR_MEMCG_COUNTS], memcg_after[NR_MEMCG_COUNTS];
	const char *missed;
	bool injected;
	long seq = -1;
	int opt;
	size_t i;
	pid_t pid;

	while ((opt = getopt(argc, argv, "vg:m")) != -1) {
		switch (opt) {
		case 'v':
			verbose = true;
			break;
		case 'g':
			generation = atoi(optarg);
			break;
		case 'm':
			in_memcg = true;
			break;
		default:
			generation = 0;
		}
	}
	if (generation != 1 && generation != 2)
		ksft_exit_fail_msg("usage: %s [-v] [-g 1|2] [-m]\n", argv[0]);
	if (in_memcg)
		enter_settings(argv);
	ksft_print_header();
	if (!have_fail_nth())
		ksft_exit_skip(NO_FAIL_NTH);
	/*
	 * Without forklab's patches/0004 dup_mm() is static, and inlined
	 * into copy_process(): the page filter has no text to require.
	 */
	if (!lookup_text(&dup_mm_text))
		ksft_exit_skip(NO_DUP_MM);
	ksft_set_plan(5 + NR_COUNTERS + (in_memcg ? NR_MEMCG_COUNTS : 0));

	for (i = 0; i < NR_MAPPINGS; i++) {
		maps[i] = mapping_table[i];
		map_one(&maps[i]);
	}
	if (generation == 2)
		become_second_generation();

	fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (fd < 0 || !set_knobs())
		ksft_exit_skip(NO_FAIL_NTH);
	pin_a_page();
	populate_program();
	fflush(stdout);

	/* one walk for every row: its waits are the first's */
	row_begin("fork() ends its injections");
	/* One fork without injection first, so that lazily made caches exist. */
	pid = fork_failing(fd, 0, &injected);
	if (pid < 0 || wait_child(pid))
		ksft_exit_fail_msg("fork without injection failed\n");
	/* Reading the untouched mapping maps the zero page: do it once now. */
	wait_limit(WAIT_LIMIT_S, "the parent's reads of its own pages");
	if (!parent_all_intact())
		ksft_exit_fail_msg("the parent's memory changed without injection\n");
	wait_done();
	/* Twice: the first time, fopen() and opendir() may grow the heap. */
	read_memfree(before);
	read_counters(before);
	read_memfree(before);
	read_counters(before);
	if (in_memcg)
		read_memcg(memcg_before);

	for (nth = 1; nth <= MAX_ATTEMPTS; nth++) {
		page_out_again();
		read_counters(pre);
		seq = nth_site_seq();
		pid = fork_failing(fd, nth, &injected);
		if (injected && seq >= 0 && !check_site(nth, seq, pid >= 0))
			injected = false;	/* fork() made fewer checks */
		if (pid < 0) {
			failed++;
			if (errno != ENOMEM) {
				ksft_print_msg("injection %d: fork failed with %s, want ENOMEM\n",
					       nth, strerror(errno));
				wrong_errno++;
			}
		} else {
			if (wait_child(pid)) {
				ksft_print_msg("injection %d: the child of a successful fork was wrong\n",
					       nth);
				bad_children++;
			}
			if (injected)
				tolerated++;
		}
		read_counters(post);	/* before the reads swap the row in */
		check_attempt(nth, pre, post);
		/* swapped out again: a swap entry a failed fork freed refaults */
		wait_limit(WAIT_LIMIT_S, "the parent's reads of its own pages");
		if (!parent_all_intact()) {
			ksft_print_msg("injection %d: the parent's memory changed\n", nth);
			broken_parent++;
		}
		wait_done();
		if (pid >= 0 && !injected) {
			points = nth - 1;
			break;
		}
		/* The same N again, while it lands on a check that moves. */
		if (injected && site_moved && ++retries <= MAX_RETRIES) {
			nth--;
			continue;
		}
		retries = 0;
	}
	restore_knobs();
	read_memfree(after);
	read_counters(after);
	if (in_memcg)
		read_memcg(memcg_after);

	missed = seq >= 0 ? core_site_missed() : NULL;
	if (missed)
		ksft_print_msg("the walk never failed an allocation of %s\n", missed);
	ksft_test_result(points > 0 && !missed,
			 "fork() ends its injections (%d points)\n", points);
	ksft_test_result(!wrong_errno, "every failed fork() returned ENOMEM (%d failed)\n",
			 failed);
	ksft_test_result(!broken_parent, "the parent's memory is intact after each\n");
	ksft_test_result(!bad_children, "children of tolerated injections are right (%d)\n",
			 tolerated);
	for (i = 0; i < (size_t)nr_sites; i++)
		ksft_print_msg("site %s%s%s: %d failed with ENOMEM, %d tolerated\n",
			       sites[i].name, fail_nth_via_names[sites[i].via],
			       sites[i].nowarn ? ", no-warn" : "", sites[i].failed,
			       sites[i].tolerated);
	for (i = 0; i < (size_t)wrong_sites && i < MAX_WRONG; i++)
		ksft_print_msg("wrong: %s\n", wrong_said[i]);
	if (seq < 0)
		ksft_test_result_skip("each injection site fails as it should (no %s: CONFIG_FAULT_INJECTION_NTH_SITE)\n",
				      NTH_SITE_PATH);
	else
		ksft_test_result(!wrong_sites, "each injection site fails as it should (%d sites)\n",
				 nr_sites);
	for (i = 0; i < NR_COUNTERS; i++) {
		long long d = after[i] - before[i];
		bool ok = i == MEM_FREE ? d >= -MEMFREE_SLACK_KB :
					  d == 0 && !leaked_at[i];

		if (!ok)
			leaks++;
		ksft_test_result(ok, "no leak: %s %lld -> %lld\n", counter_names[i],
				 before[i], after[i]);
	}
	for (i = 0; in_memcg && i < NR_MEMCG_COUNTS; i++) {
		bool ok = memcg_kind_back(i, memcg_before[i], memcg_after[i]);

		if (!ok)
			leaks++;
		ksft_test_result(ok, "no leak: the group's %s %lld -> %lld\n",
				 memcg_kinds[i], memcg_before[i], memcg_after[i]);
	}
	if (in_memcg) {
		memcg_leave();
		reset_overcommit();
	}
	ksft_print_msg("fork(): %d injection points, %d failed with ENOMEM, %d tolerated; %d leaks\n",
		       points, failed - wrong_errno, tolerated, leaks);
	ksft_finished();
}
