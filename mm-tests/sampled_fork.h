/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One fork of a process with a touched SysV shm segment, timed and
 * sampled: the time fork() took in the parent, the fork_* counters'
 * deltas, and what the child found in the segment. forktest's fork,
 * linked (sampled_fork.c) into forktest and make bench's forkbench and
 * forkcost, so that the benchmarks time the fork the test checks.
 */
#ifndef FORKLAB_SAMPLED_FORK_H
#define FORKLAB_SAMPLED_FORK_H

#include "forklab.h"

struct child_report {
	size_t present;		/* segment ptes right after fork */
	long faults;		/* minor faults to read the segment */
	size_t bad_pages;	/* pages without the parent's bytes */
};

struct fork_sample {
	long long ns;			/* fork() in the parent */
	struct fork_counts counts;	/* counter deltas of this fork */
	struct child_report child;
};

/* CLOCK_MONOTONIC, in ns. */
long long now_ns(void);

/*
 * Fork once; the child reads the @pages of @seg (none: NULL, 0), checks
 * each against the pattern touched_segment() wrote, and reports.
 */
struct fork_sample fork_once(const uint8_t *seg, size_t pages);

bool same_counts(struct fork_counts a, struct fork_counts b);

/* A SysV shm segment of @pages, attached, every page written. */
uint8_t *touched_segment(size_t pages);

#endif /* FORKLAB_SAMPLED_FORK_H */
