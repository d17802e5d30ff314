/* SPDX-License-Identifier: GPL-2.0 */
/*
 * timed_fork.h: one fork() timed alone, for make bench's programs
 * (forkbench.c, forkcost.c). Include after sampled_fork.h, whose
 * now_ns() and forklab.h's wait_child() it uses.
 */
#ifndef FORKLAB_TIMED_FORK_H
#define FORKLAB_TIMED_FORK_H

/*
 * fork(), timed in the parent: *@ns is the time fork() took there (left
 * alone in the child, which gets 0 back).
 */
static pid_t fork_timed(long long *ns)
{
	long long t0 = now_ns();
	pid_t pid = fork();

	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid > 0)
		*ns = now_ns() - t0;
	return pid;
}

/* Involuntary context switches of this process so far. */
static long preempted_count(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_nivcsw;
}

/*
 * One fork whose child exits as soon as the parent has read the clock: its
 * time and counter moves. The child waits on a pipe, so that on one CPU
 * its exit (under always: freeing the copied page tables) can never run
 * inside the parent's timed interval. A fork during which the parent was
 * preempted (the scheduler ran the new child, or anything else, before
 * fork() returned to it) is taken again, up to 5 times: its time would
 * be another task's.
 */
static long long timed_fork(struct fork_counts *counts)
{
	struct fork_counts before;
	long long ns = 0;
	int go[2], tries;
	long preempted;
	pid_t pid;
	char c;

	for (tries = 0; tries < 5; tries++) {
		if (pipe(go))
			ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
		before = read_fork_counts();
		preempted = preempted_count();
		pid = fork_timed(&ns);
		if (pid == 0) {
			close(go[1]);
			_exit(read(go[0], &c, 1) == 0 ? 0 : 1);
		}
		preempted = preempted_count() - preempted;
		close(go[0]);
		close(go[1]);
		if (wait_child(pid))
			ksft_exit_fail_msg("child failed\n");
		*counts = fork_counts_delta(before, read_fork_counts());
		if (!preempted)
			break;
	}
	return ns;
}

/* Is @s a whole number in [@lo, @hi], and nothing else? */
static bool whole_in(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return !errno && end != s && !*end && v >= lo && v <= hi;
}

#endif /* FORKLAB_TIMED_FORK_H */
