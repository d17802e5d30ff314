// SPDX-License-Identifier: GPL-2.0
/*
 * forkbench: Ray Fucillo's 2005 table, fork time against the size of a
 * touched SysV shm segment, for each fork_copy= policy in one boot.
 *
 * forktest.c is the test of one policy; this is its benchmark form. Per
 * size S (0 is allowed: no segment), the parent touches S MiB, then forks
 * K times under each policy, interleaved (fork i runs the policies in the
 * i-th of their six orders, so neither noise nor a warm cache favours one):
 *
 *   fork 0:  lazy         always       skip-shared
 *   fork 1:  always       skip-shared  lazy
 *   ...
 *   fork 5:  always       lazy         skip-shared
 *
 * Each timed child exits once the parent has read the clock, so that only
 * fork() is timed and a child reading 1 GiB does not wait K times. One
 * fork per policy before those has forktest's child, which reads every
 * page and reports its present ptes and faults; after shmdt(), a baseline
 * timed fork per policy gives the segment's share of the fork_* counters
 * (timed fork 0's minus the baseline's). Checked, per size and
 * policy (a KTAP result each): the child read the parent's bytes, the ptes
 * copied for the segment are S * 256 under always and 0 under lazy and
 * skip-shared, and every timed fork moved the counters alike. One line per
 * size and policy carries the figures for tools/bench/fork:
 *
 *   # bench: mib=S policy=P forks=K pages=N ptes=.. skips=.. forced=..
 *            present=.. faults=.. us=T1,T2,...
 *
 * Usage: forkbench [-k FORKS] [-p POLICY,...] SIZE_MIB...
 *        (default: -k 11 -p lazy,always,skip-shared)
 */
#include <sys/mman.h>
#include <sys/shm.h>

#include "sampled_fork.h"
#include "timed_fork.h"

#define MAX_FORKS	64
#define MAX_POLICIES	3

struct policy_figures {
	const char *name;
	long long ns[MAX_FORKS];
	struct fork_counts counts[MAX_FORKS];
	struct fork_sample reader;	/* forktest's child, which reads */
	struct fork_counts base;	/* a timed fork after shmdt() */
	bool copied;			/* does it copy a shared vma? */
};

/*
 * The order of the policies in fork i: all six orders of three in turn,
 * so that each policy comes first, and after each other one, equally often
 * (a fixed rotation would always put skip-shared after always).
 */
static const unsigned char policy_orders[6][MAX_POLICIES] = {
	{ 0, 1, 2 }, { 1, 2, 0 }, { 2, 0, 1 },
	{ 0, 2, 1 }, { 2, 1, 0 }, { 1, 0, 2 },
};

static bool check_policy(struct policy_figures *p, unsigned int mib,
			 unsigned int forks, size_t pages)
{
	long long ptes = p->counts[0].pte_copy - p->base.pte_copy;
	long long skips = p->counts[0].vma_skip - p->base.vma_skip;
	long long forced = p->counts[0].vma_copy_policy -
			   p->base.vma_copy_policy;
	struct child_report *c = &p->reader.child;
	bool always = !strcmp(p->name, "always"), ok = true;
	size_t want = p->copied ? pages : 0;
	unsigned int i;

	for (i = 0; i < forks; i++)
		if (!same_counts(p->counts[i], p->counts[0])) {
			ksft_print_msg("%u MiB %s: fork %u moved the counters unlike fork 0\n",
				       mib, p->name, i);
			ok = false;
		}
	if (c->bad_pages) {
		ksft_print_msg("%u MiB %s: child read %zu pages without the parent's bytes\n",
			       mib, p->name, c->bad_pages);
		ok = false;
	}
	if (c->present != want || !faults_as_expected(c->faults, c->present, pages)) {
		ksft_print_msg("%u MiB %s: child had %zu of %zu ptes present (want %zu), took %ld faults to read them\n",
			       mib, p->name, c->present, pages, want, c->faults);
		ok = false;
	}
	if (ptes != (long long)want || skips != (pages && !p->copied) ||
	    forced != (pages && always)) {
		ksft_print_msg("%u MiB %s: the segment's share: %lld ptes copied, %lld vmas skipped, %lld forced; want %zu, %d, %d\n",
			       mib, p->name, ptes, skips, forced, want,
			       pages && !p->copied, pages && always);
		ok = false;
	}
	printf("# bench: mib=%u policy=%s forks=%u pages=%zu ptes=%lld skips=%lld forced=%lld present=%zu faults=%ld us=",
	       mib, p->name, forks, pages, ptes, skips, forced, c->present,
	       c->faults);
	for (i = 0; i < forks; i++)
		printf("%s%.1f", i ? "," : "", p->ns[i] / 1000.0);
	printf("\n");
	return ok;
}

static void bench_size(unsigned int mib, unsigned int forks,
		       struct policy_figures *pol, unsigned int npol)
{
	size_t ps = page_size(), pages = (size_t)mib * (1 << 20) / ps, i;
	struct fork_counts discard;
	uint8_t *seg = pages ? touched_segment(pages) : NULL;
	unsigned int j;

	for (j = 0; j < npol; j++) {	/* settle the parent's own pages */
		set_fork_copy_policy(pol[j].name);
		pol[j].copied = policy_copies_skipped(true);
		timed_fork(&discard);
	}
	for (j = 0; j < npol; j++) {
		set_fork_copy_policy(pol[j].name);
		pol[j].reader = fork_once(seg, pages);
	}
	for (i = 0; i < forks; i++)
		for (j = 0; j < MAX_POLICIES; j++) {
			unsigned int k = policy_orders[i % 6][j];

			if (k >= npol)	/* fewer policies: the same orders */
				continue;
			set_fork_copy_policy(pol[k].name);
			pol[k].ns[i] = timed_fork(&pol[k].counts[i]);
		}
	if (seg)
		shmdt(seg);
	for (j = 0; j < npol; j++) {
		set_fork_copy_policy(pol[j].name);
		timed_fork(&pol[j].base);
	}
	for (j = 0; j < npol; j++)
		ksft_test_result(check_policy(&pol[j], mib, forks, pages),
				 "%u MiB SysV shm, fork_copy=%s, %u forks\n",
				 mib, pol[j].name, forks);
}

int main(int argc, char **argv)
{
	struct policy_figures pol[MAX_POLICIES] = {};
	char all[] = "lazy,always,skip-shared";	/* strtok_r() writes */
	char *list = all, *name, *save = NULL;
	unsigned int sizes[32], nsizes = 0, npol = 0, forks = 11, i;
	char start[32];
	int opt;

	/* no rows: its waits (a child reading 1 GiB) are the runner's to bound */
	rows_printed_by(0);

	while ((opt = getopt(argc, argv, "k:p:")) != -1) {
		if (opt == 'p') {
			list = optarg;
			continue;
		}
		if (opt != 'k' || !whole_in(optarg, 1, MAX_FORKS)) {
			fprintf(stderr, "usage: forkbench [-k FORKS (1..%d)] [-p POLICY,...] SIZE_MIB...\n",
				MAX_FORKS);
			return KSFT_FAIL;
		}
		forks = strtol(optarg, NULL, 10);
	}
	for (name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		if (npol == MAX_POLICIES) {
			fprintf(stderr, "forkbench: at most %d policies\n", MAX_POLICIES);
			return KSFT_FAIL;
		}
		if (strcmp(name, "lazy") && strcmp(name, "always") &&
		    strcmp(name, "skip-shared")) {
			fprintf(stderr, "forkbench: unknown policy '%s'\n", name);
			return KSFT_FAIL;
		}
		pol[npol++].name = name;
	}
	if (argc - optind > 32) {
		fprintf(stderr, "forkbench: at most 32 sizes\n");
		return KSFT_FAIL;
	}
	for (; optind < argc; optind++) {
		if (!whole_in(argv[optind], 0, 65536)) {
			fprintf(stderr, "forkbench: size '%s' is not a MiB count\n",
				argv[optind]);
			return KSFT_FAIL;
		}
		sizes[nsizes++] = strtol(argv[optind], NULL, 10);
	}
	if (!nsizes || !npol) {
		fprintf(stderr, "forkbench: no sizes or no policies given\n");
		return KSFT_FAIL;
	}

	/*
	 * Every page of the program present before the first fork: a text
	 * page first run between timed fork 0 and the baseline fork would be
	 * one more pte copied (under always) in the baseline, off the count.
	 */
	if (mlockall(MCL_CURRENT) || munlockall()) {
		fprintf(stderr, "forkbench: mlockall: %s\n", strerror(errno));
		return KSFT_FAIL;
	}
	ksft_print_header();
	if (!have_fork_counts())
		ksft_exit_fail_msg("no fork_* counters in /proc/vmstat\n");
	ksft_set_plan(nsizes * npol);
	snprintf(start, sizeof(start), "%s", fork_copy_policy_name());
	for (i = 0; i < nsizes; i++)
		bench_size(sizes[i], forks, pol, npol);
	set_fork_copy_policy(start);
	ksft_finished();
}
