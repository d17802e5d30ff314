// SPDX-License-Identifier: GPL-2.0
/*
 * forktest: Ray Fucillo's 2005 experiment, in modern form.
 *
 * A process attaches a SysV shm segment of S MiB, touches every page, and
 * forks K times. Per S, one KTAP result, with the median time fork() took
 * in the parent and what the fork did with the segment:
 *
 *   parent   [ text | data | stack ]  [ shm: S MiB, every page present ]
 *                  |  fork()
 *   child    [ copied as policy says ] [ shm: 0 ptes under lazy and
 *                                         skip-shared, all under always ]
 *
 * Checked per fork: the child reads every byte the parent wrote; its
 * present ptes in the segment right after fork (/proc/self/pagemap);
 * the minor faults it takes to read the segment (0 when fork copied the
 * ptes, one per page on UML: see forklab.h; at least one otherwise); and
 * the /proc/vmstat fork_* counters:
 * a fork of the same process after shmdt() is the baseline, so the
 * difference is the segment's share: one skipped vma and 0 ptes under
 * lazy, one vma copied by policy and S * 256 ptes (4 KiB pages) under
 * always. If fork copied the segment under lazy, the child would show
 * present ptes; if it skipped it under always, the counters
 * would show it.
 *
 * Usage: forktest [-k FORKS] [SIZE_MIB...]   (default: -k 5 1 16 64)
 */
#include <stdint.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <time.h>

#include "sampled_fork.h"

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static void run_size(unsigned int mib, unsigned int forks)
{
	size_t ps = page_size(), pages = (size_t)mib * (1 << 20) / ps, i;
	bool copied = policy_copies_skipped(true);
	bool counted = have_fork_counts(), ok = true;
	struct fork_sample warm, s[64], base;
	long long ns[64];
	uint8_t *seg;

	row_begin("%u MiB SysV shm, fork_copy=%s", mib, fork_copy_policy_name());
	seg = touched_segment(pages);
	warm = fork_once(seg, pages);	/* settle the parent's own pages */
	for (i = 0; i < forks; i++) {
		s[i] = fork_once(seg, pages);
		ns[i] = s[i].ns;
	}
	shmdt(seg);
	base = fork_once(NULL, 0);
	(void)warm;

	for (i = 0; i < forks; i++) {
		struct child_report *c = &s[i].child;

		if (c->bad_pages) {
			ksft_print_msg("fork %zu: child read %zu pages without the parent's bytes\n",
				       i, c->bad_pages);
			ok = false;
		}
		if (c->present != (copied ? pages : 0)) {
			ksft_print_msg("fork %zu: child has %zu present ptes in the segment, want %zu\n",
				       i, c->present, copied ? pages : 0);
			ok = false;
		}
		if (!faults_as_expected(c->faults, c->present, pages)) {
			ksft_print_msg("fork %zu: child took %ld faults to read %zu pages with %zu ptes present\n",
				       i, c->faults, pages, c->present);
			ok = false;
		}
		if (counted && !same_counts(s[i].counts, s[0].counts)) {
			ksft_print_msg("fork %zu: counters moved unlike fork 0\n", i);
			ok = false;
		}
	}

	if (counted) {
		long long ptes = s[0].counts.pte_copy - base.counts.pte_copy;
		long long skips = s[0].counts.vma_skip - base.counts.vma_skip;
		long long forced = s[0].counts.vma_copy_policy -
				   base.counts.vma_copy_policy;

		ksft_print_msg("%u MiB: fork_pte_copy %lld (baseline %lld): %lld for the segment; fork_vma_skip %+lld, fork_vma_copy_policy %+lld\n",
			       mib, s[0].counts.pte_copy, base.counts.pte_copy,
			       ptes, skips, forced);
		if (ptes != (long long)(copied ? pages : 0) ||
		    skips != (copied ? 0 : 1) ||
		    forced != (fork_copy_policy() == FORK_COPY_ALWAYS)) {
			ksft_print_msg("%u MiB: want %zu ptes, %d skipped, %d forced\n",
				       mib, copied ? pages : 0, !copied,
				       fork_copy_policy() == FORK_COPY_ALWAYS);
			ok = false;
		}
	}

	qsort(ns, forks, sizeof(ns[0]), cmp_ll);
	ksft_print_msg("%u MiB: fork median %lld us (min %lld, max %lld) over %u forks; child: %zu ptes present, %ld faults to read %zu pages\n",
		       mib, ns[forks / 2] / 1000, ns[0] / 1000,
		       ns[forks - 1] / 1000, forks, s[0].child.present,
		       s[0].child.faults, pages);
	ksft_test_result(ok, "%u MiB SysV shm, fork_copy=%s\n", mib,
			 fork_copy_policy_name());
}

int main(int argc, char **argv)
{
	unsigned int defaults[] = { 1, 16, 64 }, sizes[32], nsizes = 0;
	unsigned int forks = 5, i;
	int opt;

	while ((opt = getopt(argc, argv, "k:")) != -1) {
		if (opt != 'k' || atoi(optarg) < 1 || atoi(optarg) > 64) {
			fprintf(stderr, "usage: forktest [-k FORKS (1..64)] [SIZE_MIB...]\n");
			return KSFT_FAIL;
		}
		forks = atoi(optarg);
	}
	for (; optind < argc && nsizes < 32; optind++) {
		if (atoi(argv[optind]) < 1) {
			fprintf(stderr, "forktest: size '%s' is not a positive MiB count\n",
				argv[optind]);
			return KSFT_FAIL;
		}
		sizes[nsizes++] = atoi(argv[optind]);
	}
	if (!nsizes)
		for (; nsizes < 3; nsizes++)
			sizes[nsizes] = defaults[nsizes];

	ksft_print_header();
	ksft_set_plan(nsizes);
	ksft_print_msg("fork_copy=%s, fork counters %s\n", fork_copy_policy_name(),
		       have_fork_counts() ? "in /proc/vmstat" : "not built in");
	for (i = 0; i < nsizes; i++)
		run_size(sizes[i], forks);
	ksft_finished();
}
