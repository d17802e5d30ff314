// SPDX-License-Identifier: GPL-2.0
/*
 * forkcost: what a fork costs today, in one guest. forkbench measures the
 * cost 2.6.14 removed (a touched shared segment); what every fork still
 * pays is the copy of each vma with an anon_vma, by the size of its
 * folios, and what lazy copying moves into the child's faults.
 *
 *   forkcost [-k FORKS] private BACKING SIZE_MIB...
 *	S MiB of private anonymous memory, written by the parent, backed by
 *	BACKING: 4k (order-0 folios), 64k (mTHP, pte-mapped), thp (PMD),
 *	hugetlb (2 MiB). FORKS timed forks, then one child that writes one
 *	word in every 4 KiB of it (the COW of all of it) and times that.
 *   forkcost [-k ROUNDS] tradeoff SIZE_MIB
 *	S MiB of SysV shm and of a MAP_PRIVATE tmpfs file, every pte present
 *	in the parent, mappings lazy copy skips. Per round, fraction f (0,
 *	1/16, 1/4, 1/2, 1) and policy (always, lazy): one fork, then the
 *	child reads one word in each of the first f * S MiB's pages and
 *	times that, then exits: fork + reads + exit is the total the 2005
 *	trade-off is about.
 *   forkcost [-k FORKS] vmas COUNT...
 *	COUNT one-page private vmas, each written (so each has an anon_vma
 *	and is copied): the per-vma cost beside the per-pte one.
 *   forkcost bandwidth SIZE_MIB
 *	memcpy() of S MiB, five times: the floor a pte copy cannot beat.
 *
 * Every fork is timed alone (timed_fork.h). A fork after the memory is
 * gone is the baseline: the counters' difference is the memory's share,
 * and is checked exactly (one KTAP result per size or mapping):
 *
 *   backing   per MiB: ptes   pmds   hugetlb ptes   folios
 *   4k        256             0      0              4 KiB
 *   64k       256 (batched)   0      0              64 KiB
 *   thp       0               1/2    0              2 MiB, pmd-mapped
 *   hugetlb   0               0      1/2            2 MiB
 *
 * (fork_pte_copy and fork_huge_copy count ptes and pmds; hugetlb's ptes,
 * which no counter sees, are the child's present pages / 512. In every
 * backing the child has every page present after fork.)
 *
 * If the backing was not what it says (a THP that fell back to small
 * pages, an mTHP fault that fell back), the counts show it and the size
 * fails: a table of 4 KiB folios labelled thp is worse than no table.
 * The figures go to stdout as "# private: ...", "# tradeoff: ...",
 * "# vmas: ..." and "# bandwidth: ..." lines for tools/bench/report.
 */
#include <sys/mman.h>
#include <sys/shm.h>

#include "sampled_fork.h"
#include "timed_fork.h"

#define MAX_FORKS	64
#define THP_SYSFS	"/sys/kernel/mm/transparent_hugepage"
#define HUGE_SIZE	(2UL << 20)

static unsigned int forks = 11;

enum backing { BACK_4K, BACK_64K, BACK_THP, BACK_HUGETLB, NR_BACKINGS };

static const char *const backing_names[NR_BACKINGS] = {
	"4k", "64k", "thp", "hugetlb",
};

/*
 * The memory's share of one fork, as the counters must show it: ptes
 * (fork_pte_copy), pmds (fork_huge_copy, which does not count hugetlb's
 * entries: copy_hugetlb_page_range() is not instrumented), and hugetlb
 * ptes, counted in the child as its present 4 KiB pages / 512.
 */
static long long want_ptes(enum backing b, unsigned int mib)
{
	return b == BACK_4K || b == BACK_64K ? mib * 256LL : 0;
}

static long long want_pmds(enum backing b, unsigned int mib)
{
	return b == BACK_THP ? mib / 2 : 0;
}

static long long want_hugetlb_ptes(enum backing b, unsigned int mib)
{
	return b == BACK_HUGETLB ? mib / 2 : 0;
}

/* All vmas fork looked at: copied for any reason, or skipped. */
static long long vmas_of(struct fork_counts c)
{
	return c.vma_skip + c.vma_copy_policy + c.vma_copy_anon_vma;
}

static void print_us(const char *key, const long long *ns, unsigned int n)
{
	unsigned int i;

	printf(" %s=", key);
	for (i = 0; i < n; i++)
		printf("%s%.1f", i ? "," : "", ns[i] / 1000.0);
}

static bool have_file(const char *path)
{
	return access(path, F_OK) == 0;
}

/*
 * THP as @b wants it, every size off but its own: a 4 KiB table without
 * khugepaged collapsing it, a 64 KiB one without PMDs. The boot is the
 * program's own (one per size), so nothing is put back.
 */
static void set_thp(enum backing b)
{
	static const char *const sizes[] = {
		"16", "32", "64", "128", "256", "512", "1024", "2048",
	};
	char path[128];
	unsigned int i;

	if (!have_file(THP_SYSFS "/enabled"))
		return;
	write_file(THP_SYSFS "/enabled", b == BACK_THP ? "always" : "never");
	write_file(THP_SYSFS "/defrag", b == BACK_THP ? "always" : "never");
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		snprintf(path, sizeof(path), THP_SYSFS "/hugepages-%skB/enabled",
			 sizes[i]);
		if (!have_file(path))
			continue;
		if (b == BACK_THP && !strcmp(sizes[i], "2048"))
			write_file(path, "inherit");
		else
			write_file(path, b == BACK_64K && !strcmp(sizes[i], "64") ?
				   "always" : "never");
	}
}

/* Why @b cannot run in this guest, or NULL. */
static const char *backing_missing(enum backing b)
{
	switch (b) {
	case BACK_4K:
		return NULL;
	case BACK_64K:
		if (!have_file(THP_SYSFS "/enabled"))
			return "no THP";
		return have_file(THP_SYSFS "/hugepages-64kB/stats/anon_fault_alloc") ?
			NULL : "no 64 KiB mTHP (6.10's per-size THP and its stats)";
	case BACK_THP:
		return have_file(THP_SYSFS "/enabled") ? NULL : "no THP";
	case BACK_HUGETLB:
		return proc_value("/proc/meminfo", "Hugepagesize") == 2048 ?
			NULL : "no 2 MiB hugetlb";
	default:
		return "unknown backing";
	}
}

static long long mthp64_faults(void)
{
	return read_number(THP_SYSFS "/hugepages-64kB/stats/anon_fault_alloc");
}

/*
 * @len bytes of private anonymous memory at a 2 MiB boundary, and only
 * those: no vma beside it to merge with or count.
 */
static uint8_t *aligned_space(size_t len)
{
	uint8_t *raw, *p;

	raw = mmap(NULL, len + HUGE_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		ksft_exit_fail_msg("mmap %zu bytes: %s\n", len, strerror(errno));
	p = (uint8_t *)(((uintptr_t)raw + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1));
	if (p != raw)
		munmap(raw, p - raw);
	munmap(p + len, raw + HUGE_SIZE - p);
	return p;
}

/*
 * @mib MiB of private anonymous memory backed by @b, 2 MiB aligned, one
 * word written in every 4 KiB. NULL (with a message) when the backing
 * fell short: fewer folios of its size than it needs.
 */
static uint8_t *private_memory(enum backing b, unsigned int mib)
{
	size_t len = (size_t)mib << 20, i;
	long long before = 0, thp_kb;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	uint8_t *p;

	if (b == BACK_HUGETLB) {
		static long long boot_pages = -1;

		/* The boot's pages, and the parent's and the child's copies. */
		if (boot_pages < 0)
			boot_pages = proc_value("/proc/meminfo", "HugePages_Total");
		set_vm("nr_hugepages", boot_pages + mib);
		if (proc_value("/proc/meminfo", "HugePages_Free") < mib) {
			ksft_print_msg("hugetlb, %u MiB: %lld free 2 MiB pages, want %u\n",
				       mib, proc_value("/proc/meminfo", "HugePages_Free"),
				       mib);
			return NULL;
		}
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags | MAP_HUGETLB,
			 -1, 0);
		if (p == MAP_FAILED)
			ksft_exit_fail_msg("mmap %u MiB of hugetlb: %s\n", mib,
					   strerror(errno));
	} else {
		p = aligned_space(len);
		if (have_file(THP_SYSFS "/enabled") &&
		    madvise(p, len, b == BACK_4K ? MADV_NOHUGEPAGE : MADV_HUGEPAGE))
			ksft_exit_fail_msg("madvise: %s\n", strerror(errno));
	}
	if (b == BACK_64K)
		before = mthp64_faults();
	for (i = 0; i < len; i += 4096)
		p[i] = 1;
	thp_kb = have_file(THP_SYSFS "/enabled") ?
		 proc_value("/proc/self/smaps_rollup", "AnonHugePages") : 0;
	if (thp_kb != (b == BACK_THP ? (long long)len >> 10 : 0)) {
		ksft_print_msg("%s, %u MiB: %lld KiB of it in PMD THPs\n",
			       backing_names[b], mib, thp_kb);
		return NULL;
	}
	if (b == BACK_64K && mthp64_faults() - before != (long long)mib * 16) {
		ksft_print_msg("64k, %u MiB: %lld 64 KiB folios faulted, want %u\n",
			       mib, mthp64_faults() - before, mib * 16);
		return NULL;
	}
	return p;
}

struct child_cost {
	long long ns;
	long faults;
	size_t present;		/* 4 KiB pages mapped right after fork */
};

/*
 * The 4 KiB pages of [@p, @p + @len) this process has present, read from
 * pagemap 512 entries at a time (1 GiB is 262144 entries: one pread()
 * each would take longer than the fork). A hugetlb page shows as 512.
 */
static size_t present_4k_pages(const void *p, size_t len)
{
	size_t left = len / 4096, n = 0, k, i;
	off_t off = (uintptr_t)p / 4096 * sizeof(uint64_t);
	uint64_t entries[512];
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		_exit(3);
	for (; left; left -= k, off += k * sizeof(uint64_t)) {
		k = left < ARRAY_SIZE(entries) ? left : ARRAY_SIZE(entries);
		if (pread(fd, entries, k * sizeof(uint64_t), off) !=
		    (ssize_t)(k * sizeof(uint64_t)))
			_exit(3);
		for (i = 0; i < k; i++)
			n += !!(entries[i] & PM_PRESENT);
	}
	close(fd);
	return n;
}

/*
 * The child's side of a fork: wait for the parent's word on @go, then
 * write (or read) one word in each 4 KiB of [@p, @p + @len), timed, and
 * report on @rep; then exit when the parent closes @go. Waiting first
 * keeps the child's work out of the parent's timed fork(); waiting last
 * puts all of its exit (the teardown of what fork copied and what it
 * touched) after the parent's clock starts.
 */
static void child_touches(int go, int rep, uint8_t *p, size_t len,
			  bool writes)
{
	struct child_cost c = {};
	unsigned long sum = 0;
	long long t0;
	size_t i;
	char byte;

	if (read(go, &byte, 1) < 0)
		_exit(2);
	/* What fork gave it, before it writes: hugetlb's count is this. */
	if (writes && len)
		c.present = present_4k_pages(p, len);
	/*
	 * Under lazy the child faults in the program's own text too: run
	 * what is timed once before counting (and the first call may COW
	 * the stack), so that only the memory's faults are counted.
	 */
	t0 = now_ns();
	c.faults = minor_faults();
	c.faults = minor_faults();
	t0 = now_ns();
	for (i = 0; i < len; i += 4096) {
		if (writes)
			p[i] = 2;
		else
			sum += p[i];
	}
	c.ns = now_ns() - t0;
	c.faults = minor_faults() - c.faults;
	if (write(rep, &c, sizeof(c)) != sizeof(c) || sum == 1)
		_exit(2);
	if (read(go, &byte, 1) < 0)
		_exit(2);
	_exit(0);
}

/* fork(), timed in the parent; then the child's touches, timed in it. */
static long long fork_then_touch(uint8_t *p, size_t len, bool writes,
				 struct child_cost *cost,
				 struct fork_counts *counts, long long *exit_ns)
{
	struct fork_counts before = read_fork_counts();
	int go[2], rep[2];
	long long ns = 0, t0;
	pid_t pid;

	if (pipe(go) || pipe(rep))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork_timed(&ns);
	if (pid == 0) {
		close(go[1]);
		close(rep[0]);
		child_touches(go[0], rep[1], p, len, writes);
	}
	*counts = fork_counts_delta(before, read_fork_counts());
	close(go[0]);
	close(rep[1]);
	if (write(go[1], "g", 1) != 1)
		ksft_exit_fail_msg("pipe to the child: %s\n", strerror(errno));
	if (read(rep[0], cost, sizeof(*cost)) != sizeof(*cost))
		ksft_exit_fail_msg("no report from the child\n");
	close(rep[0]);
	t0 = now_ns();
	close(go[1]);		/* exit */
	if (wait_child(pid))
		ksft_exit_fail_msg("child failed\n");
	*exit_ns = now_ns() - t0;
	return ns;
}

/* Timed fork 0's counts, and whether every other fork's were the same. */
static bool counts_alike(const struct fork_counts *c, unsigned int n,
			 const char *what)
{
	unsigned int i;

	for (i = 1; i < n; i++)
		if (!same_counts(c[i], c[0])) {
			ksft_print_msg("%s: fork %u moved the counters unlike fork 0\n",
				       what, i);
			return false;
		}
	return true;
}

static void private_size(enum backing b, unsigned int mib)
{
	struct fork_counts c[MAX_FORKS], base, discard, wc;
	const char *name = backing_names[b];
	size_t len = (size_t)mib << 20;
	long long ns[MAX_FORKS], ptes, pmds, hugetlb_ptes, exit_ns;
	struct child_cost wcost;
	char what[64];
	bool ok = true;
	uint8_t *p = NULL;
	unsigned int i;

	snprintf(what, sizeof(what), "%s, %u MiB", name, mib);
	if (mib && b >= BACK_THP && mib % 2) {
		ksft_test_result_fail("%s: not a whole number of 2 MiB folios\n", what);
		return;
	}
	if (mib) {
		p = private_memory(b, mib);
		if (!p) {
			ksft_test_result_fail("%s private anonymous memory\n", what);
			return;
		}
	}
	timed_fork(&discard);	/* settle the parent's own pages */
	for (i = 0; i < forks; i++)
		ns[i] = timed_fork(&c[i]);
	/* The child that writes it all: the COW of every page. */
	fork_then_touch(p, len, true, &wcost, &wc, &exit_ns);
	if (p)
		munmap(p, len);
	timed_fork(&base);
	ok = counts_alike(c, forks, what);
	ptes = c[0].pte_copy - base.pte_copy;
	pmds = c[0].huge_copy - base.huge_copy;
	hugetlb_ptes = b == BACK_HUGETLB ? wcost.present / 512 : 0;
	if (ptes != want_ptes(b, mib) || pmds != want_pmds(b, mib) ||
	    hugetlb_ptes != want_hugetlb_ptes(b, mib)) {
		ksft_print_msg("%s: the memory's share: %lld ptes, %lld pmds, %lld hugetlb ptes copied per fork; want %lld, %lld, %lld\n",
			       what, ptes, pmds, hugetlb_ptes, want_ptes(b, mib),
			       want_pmds(b, mib), want_hugetlb_ptes(b, mib));
		ok = false;
	}
	/* Private memory has an anon_vma: all of it is in the child. */
	if (wcost.present != len / 4096) {
		ksft_print_msg("%s: the child had %zu of %zu pages present after fork\n",
			       what, wcost.present, len / 4096);
		ok = false;
	}
	printf("# private: backing=%s mib=%u forks=%u ptes=%lld pmds=%lld hugetlb_ptes=%lld present=%zu vmas_all=%lld ptes_all=%lld pmds_all=%lld write_us=%.1f write_faults=%ld",
	       name, mib, forks, ptes, pmds, hugetlb_ptes, wcost.present,
	       vmas_of(c[0]), c[0].pte_copy, c[0].huge_copy,
	       wcost.ns / 1000.0, wcost.faults);
	print_us("us", ns, forks);
	printf("\n");
	ksft_test_result(ok, "%s private anonymous memory, %u forks\n", what,
			 forks);
}

static void run_private(enum backing b, unsigned int *sizes, unsigned int n)
{
	const char *missing = backing_missing(b);
	unsigned int i;

	if (missing) {
		for (i = 0; i < n; i++) {
			char what[64];

			snprintf(what, sizeof(what), "%s, %u MiB private anonymous memory",
				 backing_names[b], sizes[i]);
			skip_named(what, missing);
		}
		return;
	}
	set_thp(b);
	for (i = 0; i < n; i++)
		private_size(b, sizes[i]);
}

/*
 * The trade-off. A fraction num/16 of the segment's pages is read by the
 * child: under always fork copied their ptes, under lazy the child
 * faults them in: one fault a page for SysV shm (shm_vm_ops has no
 * map_pages), up to 16 a fault for the file (fault-around, 64 KiB by
 * default, in windows aligned to the address: the mapping is 2 MiB
 * aligned so that every window is whole). The child's exit is timed
 * too: under always it tears down every pte fork copied.
 */
static const unsigned int sixteenths[] = { 0, 1, 4, 8, 16 };

enum { SEG_SHM, SEG_FILE, NR_SEGMENTS };
static const char *const mapping_names[NR_SEGMENTS] = { "shm", "file" };
static const char *const tradeoff_policies[] = { "always", "lazy" };

struct tradeoff_row {
	long long fork_ns[MAX_FORKS], touch_ns[MAX_FORKS], exit_ns[MAX_FORKS];
	struct fork_counts counts[MAX_FORKS];
	long faults[MAX_FORKS];
};

static uint8_t *tradeoff_mapping(int m, size_t pages)
{
	size_t len = pages * 4096;
	uint8_t *p;
	int fd;

	if (m == SEG_SHM)
		return touched_segment(pages);
	fd = tmp_fd("tradeoff", len);
	p = aligned_space(len);
	if (mmap(p, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED)
		ksft_exit_fail_msg("mmap the file: %s\n", strerror(errno));
	close(fd);
	/* Every pte present, as the shm segment's are; no anon_vma. */
	if (madvise(p, len, MADV_POPULATE_READ))
		ksft_exit_fail_msg("MADV_POPULATE_READ: %s\n", strerror(errno));
	return p;
}

static void run_tradeoff(unsigned int mib)
{
	static struct tradeoff_row rows[NR_SEGMENTS][ARRAY_SIZE(sixteenths)][2];
	size_t pages = (size_t)mib * 256;
	struct fork_counts base[2];
	unsigned int r, f, k, j;
	struct child_cost cost;
	int m;

	for (m = 0; m < NR_SEGMENTS; m++) {
		uint8_t *p = tradeoff_mapping(m, pages);
		bool ok = true;

		for (r = 0; r < forks; r++)
			for (f = 0; f < ARRAY_SIZE(sixteenths); f++)
				for (j = 0; j < 2; j++) {
					/* Each policy first in every other round. */
					struct tradeoff_row *row;

					k = (j + r + f) % 2;
					row = &rows[m][f][k];
					set_fork_copy_policy(tradeoff_policies[k]);
					row->fork_ns[r] = fork_then_touch(p,
						pages * sixteenths[f] / 16 * 4096,
						false, &cost, &row->counts[r],
						&row->exit_ns[r]);
					row->touch_ns[r] = cost.ns;
					row->faults[r] = cost.faults;
				}
		if (m == SEG_SHM)
			shmdt(p);
		else
			munmap(p, pages * 4096);
		for (k = 0; k < 2; k++) {
			set_fork_copy_policy(tradeoff_policies[k]);
			timed_fork(&base[k]);
		}
		for (f = 0; f < ARRAY_SIZE(sixteenths); f++)
			for (k = 0; k < 2; k++) {
				struct tradeoff_row *row = &rows[m][f][k];
				size_t touched = pages * sixteenths[f] / 16;
				long long ptes = row->counts[0].pte_copy -
						 base[k].pte_copy;
				long long want = k == 0 ? (long long)pages : 0;
				char what[64];

				snprintf(what, sizeof(what), "%s, %u MiB, %s, %u/16",
					 mapping_names[m], mib,
					 tradeoff_policies[k], sixteenths[f]);
				if (!counts_alike(row->counts, forks, what))
					ok = false;
				if (ptes != want) {
					ksft_print_msg("%s: %lld of the mapping's ptes copied per fork, want %lld\n",
						       what, ptes, want);
					ok = false;
				}
				/* Lazy: the child faulted what it touched. */
				if (k == 1 && touched && !faults_as_expected(
						row->faults[0], 0, touched)) {
					ksft_print_msg("%s: %ld faults to read %zu pages\n",
						       what, row->faults[0], touched);
					ok = false;
				}
				printf("# tradeoff: mapping=%s mib=%u policy=%s sixteenths=%u pages=%zu touched=%zu ptes=%lld ptes_all=%lld vmas_all=%lld faults=%ld",
				       mapping_names[m], mib, tradeoff_policies[k],
				       sixteenths[f], pages, touched, ptes,
				       row->counts[0].pte_copy,
				       vmas_of(row->counts[0]), row->faults[0]);
				print_us("fork_us", row->fork_ns, forks);
				print_us("touch_us", row->touch_ns, forks);
				print_us("exit_us", row->exit_ns, forks);
				printf("\n");
			}
		ksft_test_result(ok, "%s of %u MiB, the child reading 0..16/16 of it, always and lazy, %u rounds\n",
				 m == SEG_SHM ? "SysV shm" : "a MAP_PRIVATE tmpfs file",
				 mib, forks);
	}
}

/*
 * @count one-page vmas, each written (an anon_vma: copied under every
 * policy) and apart from the next by an unmapped page, so none merge:
 *
 *   [ page ] hole [ page ] hole ... [ page ]     @count vmas
 */
static void run_vmas(unsigned int count)
{
	struct fork_counts c[MAX_FORKS], base;
	long long ns[MAX_FORKS], copied, ptes;
	uint8_t *p = NULL;
	char what[32];
	unsigned int i;
	bool ok;

	snprintf(what, sizeof(what), "%u vmas", count);
	if (count) {
		p = mmap(NULL, 2UL * count * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
		for (i = 0; i < count; i++) {
			p[2UL * i * 4096] = 1;
			if (munmap(p + (2UL * i + 1) * 4096, 4096))
				ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
		}
	}
	timed_fork(&base);	/* settle */
	for (i = 0; i < forks; i++)
		ns[i] = timed_fork(&c[i]);
	for (i = 0; i < count; i++)
		munmap(p + 2UL * i * 4096, 4096);
	timed_fork(&base);
	ok = counts_alike(c, forks, what);
	copied = c[0].vma_copy_anon_vma - base.vma_copy_anon_vma;
	ptes = c[0].pte_copy - base.pte_copy;
	if (copied != count || ptes != count) {
		ksft_print_msg("%s: %lld vmas and %lld ptes of them copied per fork, want %u each\n",
			       what, copied, ptes, count);
		ok = false;
	}
	printf("# vmas: count=%u forks=%u vmas=%lld ptes=%lld vmas_all=%lld ptes_all=%lld pmds_all=%lld",
	       count, forks, copied, ptes, vmas_of(c[0]), c[0].pte_copy,
	       c[0].huge_copy);
	print_us("us", ns, forks);
	printf("\n");
	ksft_test_result(ok, "%u one-page vmas, %u forks\n", count, forks);
}

/* memcpy() of @mib MiB, five times: bytes read plus bytes written per ns. */
static void run_bandwidth(unsigned int mib)
{
	size_t len = (size_t)mib << 20;
	long long ns[5];
	uint8_t *a = malloc(len), *b = malloc(len);
	unsigned int i;

	if (!a || !b)
		ksft_exit_fail_msg("malloc %u MiB twice\n", mib);
	memset(a, 1, len);
	memset(b, 2, len);
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		long long t0 = now_ns();

		memcpy(b, a, len);
		ns[i] = now_ns() - t0;
		a[i] = b[len - 1 - i];	/* keep each copy */
	}
	printf("# bandwidth: mib=%u bytes=%zu", mib, 2 * len);
	print_us("us", ns, ARRAY_SIZE(ns));
	printf("\n");
	ksft_test_result_pass("memcpy of %u MiB, 5 times\n", mib);
}

static int print_usage(void)
{
	fprintf(stderr, "usage: forkcost [-k FORKS (1..%d)] private 4k|64k|thp|hugetlb SIZE_MIB...\n"
		"       forkcost [-k ROUNDS] tradeoff SIZE_MIB\n"
		"       forkcost [-k FORKS] vmas COUNT...\n"
		"       forkcost bandwidth SIZE_MIB\n", MAX_FORKS);
	return KSFT_FAIL;
}

int main(int argc, char **argv)
{
	unsigned int args[32], nargs = 0, i;
	int opt, b = -1;
	const char *cmd;

	/* no rows: its waits (a child reading 1 GiB) are the runner's to bound */
	rows_printed_by(0);

	while ((opt = getopt(argc, argv, "k:")) != -1) {
		if (!whole_in(optarg, 1, MAX_FORKS))
			return print_usage();
		forks = strtol(optarg, NULL, 10);
	}
	if (optind >= argc)
		return print_usage();
	cmd = argv[optind++];
	if (!strcmp(cmd, "private")) {
		for (i = 0; i < NR_BACKINGS && optind < argc; i++)
			if (!strcmp(argv[optind], backing_names[i]))
				b = i;
		if (b < 0)
			return print_usage();
		optind++;
	} else if (strcmp(cmd, "tradeoff") && strcmp(cmd, "vmas") &&
		   strcmp(cmd, "bandwidth")) {
		return print_usage();
	}
	for (; optind < argc; optind++) {
		if (nargs == ARRAY_SIZE(args) ||
		    !whole_in(argv[optind], 0, 16384)) {
			fprintf(stderr, "forkcost: '%s' is not a count up to 16384 (at most %zu)\n",
				argv[optind], ARRAY_SIZE(args));
			return KSFT_FAIL;
		}
		args[nargs++] = strtol(argv[optind], NULL, 10);
	}
	if (!nargs || (nargs > 1 && (!strcmp(cmd, "tradeoff") ||
				     !strcmp(cmd, "bandwidth"))))
		return print_usage();

	/* Every page of the program present before the first timed fork. */
	if (strcmp(cmd, "bandwidth") && (mlockall(MCL_CURRENT) || munlockall())) {
		fprintf(stderr, "forkcost: mlockall: %s\n", strerror(errno));
		return KSFT_FAIL;
	}
	ksft_print_header();
	if (strcmp(cmd, "bandwidth") && !have_fork_counts())
		ksft_exit_fail_msg("no fork_* counters in /proc/vmstat\n");
	if (!strcmp(cmd, "private")) {
		ksft_set_plan(nargs);
		run_private(b, args, nargs);
	} else if (!strcmp(cmd, "tradeoff")) {
		ksft_set_plan(NR_SEGMENTS);
		run_tradeoff(args[0]);
	} else if (!strcmp(cmd, "vmas")) {
		ksft_set_plan(nargs);
		for (i = 0; i < nargs; i++)
			run_vmas(args[i]);
	} else {
		ksft_set_plan(1);
		run_bandwidth(args[0]);
	}
	ksft_finished();
}
