// SPDX-License-Identifier: GPL-2.0
/*
 * kbuild_bench: Nick Piggin's 2005 kbuild table, inside the guest.
 *
 * Nick timed "make -j4" of a kernel under three fork variants: "plain"
 * (copy every vma's ptes), "nocopy shared" (skip shared vmas) and "nocopy
 * all" (today's rule), and found the time equal within noise and ~2.5%
 * more minor faults for "nocopy all". fork_copy= always, skip-shared and
 * lazy are those three variants, switchable at run time: this runs a
 * build once under each policy it is given, in that order (the rounds and
 * their order are tools/bench/kbuild's, one boot per build).
 *
 *   guest /            the run's hostfs root (this program, its init)
 *   guest /host        the host's /, hostfs, read-only: its compiler, make,
 *                      shell and the prepared kernel tree
 *   guest /host/dev    devtmpfs, and in it /dev/shm, a tmpfs: the build's
 *                      output (O=) and TMPDIR. Not a tmpfs on /tmp: that
 *                      would hide a checkout under the host's /tmp.
 *
 * The command runs chrooted in /host, under sh -c, from /dev/shm, and
 * builds in /dev/shm/build, removed (unmeasured) before each run. Per run,
 * one line:
 *
 *   bench: kbuild policy=P status=S elapsed_ms=.. user_ms=..
 *          sys_ms=.. minflt=.. pgfault=.. forks=.. pte_copy=..
 *          vma_skip=.. vma_copy_policy=.. vma_copy_anon_vma=..
 *
 * user/sys/minflt: the command's rusage (wait4(): it and every process it
 * waited for); pgfault: /proc/vmstat's over the run (every fault in the
 * guest); forks: /proc/stat's processes; the rest: the fork_* counters.
 *
 * Usage: kbuild_bench COMMAND POLICY...
 */
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "forklab.h"

/* The command builds in /dev/shm/build; each run starts without it. */
#define CLEAN_BUILD	"rm -rf /dev/shm/build"


struct run_figures {
	long long elapsed_ms, user_ms, sys_ms, minflt, pgfault, forks;
	struct fork_counts counts;
	int status;
};

static void must_mount(const char *src, const char *dir, const char *type,
		       unsigned long flags, const char *data)
{
	mkdir(dir, 0755);
	if (mount(src, dir, type, flags, data))
		ksft_exit_fail_msg("mount %s on %s: %s\n", type, dir,
				   strerror(errno));
}

static long long ms_of(struct timeval tv)
{
	return tv.tv_sec * 1000LL + tv.tv_usec / 1000;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Run @cmd under sh in the host's root; its figures. */
static struct run_figures run_command(const char *cmd)
{
	struct run_figures f = {};
	struct fork_counts before;
	long long t0, pgfault0, forks0;
	struct rusage ru;
	int status;
	pid_t pid;

	before = read_fork_counts();
	pgfault0 = vmstat_value("pgfault");
	forks0 = proc_value("/proc/stat", "processes");
	t0 = now_ms();
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0) {
		if (chroot("/host") || chdir("/dev/shm"))
			_exit(126);
		execle("/bin/sh", "sh", "-c", cmd, (char *)NULL,
		       (char *const[]){ "PATH=/usr/local/bin:/usr/bin:/bin",
					"HOME=/dev/shm", "TMPDIR=/dev/shm",
					"LC_ALL=C", NULL });
		fprintf(stderr, "kbuild_bench: exec /bin/sh: %s\n", strerror(errno));
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		ksft_exit_fail_msg("wait4: %s\n", strerror(errno));
	f.elapsed_ms = now_ms() - t0;
	f.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	f.user_ms = ms_of(ru.ru_utime);
	f.sys_ms = ms_of(ru.ru_stime);
	f.minflt = ru.ru_minflt;
	f.pgfault = vmstat_value("pgfault") - pgfault0;
	f.forks = proc_value("/proc/stat", "processes") - forks0;
	f.counts = fork_counts_delta(before, read_fork_counts());
	return f;
}

static void print_run(const char *policy, struct run_figures f)
{
	printf("bench: kbuild policy=%s status=%d elapsed_ms=%lld user_ms=%lld sys_ms=%lld minflt=%lld pgfault=%lld forks=%lld pte_copy=%lld vma_skip=%lld vma_copy_policy=%lld vma_copy_anon_vma=%lld\n",
	       policy, f.status, f.elapsed_ms, f.user_ms, f.sys_ms,
	       f.minflt, f.pgfault, f.forks, f.counts.pte_copy,
	       f.counts.vma_skip, f.counts.vma_copy_policy,
	       f.counts.vma_copy_anon_vma);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int p, failed = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: kbuild_bench COMMAND POLICY...\n");
		return 2;
	}
	if (!have_fork_counts())
		ksft_exit_fail_msg("no fork_* counters in /proc/vmstat\n");

	must_mount("/", "/host", "hostfs", MS_RDONLY, "/");
	must_mount("proc", "/host/proc", "proc", 0, NULL);
	must_mount("devtmpfs", "/host/dev", "devtmpfs", 0, NULL);
	must_mount("tmpfs", "/host/dev/shm", "tmpfs", 0, "size=75%");

	for (p = 2; p < argc; p++) {
		struct run_figures f;

		run_command(CLEAN_BUILD);
		set_fork_copy_policy(argv[p]);
		f = run_command(argv[1]);
		print_run(argv[p], f);
		failed |= f.status != 0;
	}
	set_fork_copy_policy("lazy");
	return failed;
}
