// SPDX-License-Identifier: GPL-2.0
/*
 * uffd_wp_fork: the tree's own uffd-wp fork tests (selftests/mm's
 * uffd-unit-tests -f wp-fork: wp-fork, wp-fork-with-event, wp-fork-pin and
 * wp-fork-pin-with-event, each on anon, shmem, shmem-private, hugetlb and
 * hugetlb-private memory), as KTAP.
 *
 * They are what vma_needs_copy()'s first test is for: a child that keeps
 * uffd-wp (UFFD_FEATURE_EVENT_FORK) must get the write-protected ptes and
 * the pte markers of unpopulated pages, even in a shared vma fork would
 * otherwise skip (c56d1b62cce8); one that does not must get no uffd-wp
 * bit at all (49d6d7fb6313), pinned pages included. x86_64 only: UML has
 * no uffd-wp.
 *
 * uffd-unit-tests.c is compiled in with its main() renamed; a child runs
 * it, and each of its "Testing NAME on MEM... done|failed|skipped" lines
 * becomes one KTAP result here.
 */
#define main uffd_unit_tests_main
#include "mm/uffd-unit-tests.c"
#undef main

#define NR_HUGEPAGES	"/proc/sys/vm/nr_hugepages"
/* Two 32 MiB areas of 2 MiB pages, and room for the child's copies. */
#define HUGEPAGES_WANTED	"96"

struct result {
	char name[128];
	char verdict[16];	/* done, failed, skipped */
	char reason[256];
};

#define MAX_RESULTS	64

static int parse(char *out, struct result *res)
{
	char *at = out, *next, *dots, *end;
	int n = 0;

	while ((at = strstr(at, "Testing ")) && n < MAX_RESULTS) {
		struct result *r = &res[n++];

		at += strlen("Testing ");
		next = strstr(at, "Testing ");
		dots = strstr(at, "... ");
		if (!dots || (next && dots > next)) {
			snprintf(r->name, sizeof(r->name), "%.*s",
				 (int)strcspn(at, ".\n"), at);
			snprintf(r->verdict, sizeof(r->verdict), "cut");
			continue;
		}
		snprintf(r->name, sizeof(r->name), "%.*s", (int)(dots - at), at);
		end = next ? next : at + strlen(at);
		/* The verdict is the last line's first word before the next test. */
		if (sscanf(dots + 4, "%15s", r->verdict) != 1)
			snprintf(r->verdict, sizeof(r->verdict), "cut");
		snprintf(r->reason, sizeof(r->reason), "%.*s",
			 (int)(end - dots - 4), dots + 4);
		r->reason[strcspn(r->reason, "\n")] = '\0';
		at = end;
	}
	return n;
}

/*
 * Its run's limit, far below the runner's (docs/checks.md#bounded-waits):
 * the wp-fork tests take about a second in the guest.
 */
#define RUN_LIMIT_S	60

/* What uffd-unit-tests printed: at its limit, what it printed so far. */
static char out[1 << 16];
static size_t len;

static void run_too_long(int sig)
{
	printf("# waited %d s for uffd-unit-tests -f wp-fork to end; it printed:\n",
	       RUN_LIMIT_S);
	fflush(stdout);
	if (write(1, out, len) < 0)
		_exit(KSFT_FAIL);
	_exit(KSFT_FAIL);
}

int main(void)
{
	static struct result res[MAX_RESULTS];
	static char *argv[] = { "uffd-unit-tests", "-f", "wp-fork", NULL };
	ssize_t got;
	int fds[2], n, i, status;
	pid_t pid;

	ksft_print_header();
	if (access(NR_HUGEPAGES, W_OK) == 0) {
		int fd = open(NR_HUGEPAGES, O_WRONLY);

		if (fd < 0 || write(fd, HUGEPAGES_WANTED, 2) != 2)
			ksft_print_msg("nr_hugepages: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	if (pipe(fds))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		exit(uffd_unit_tests_main(3, argv));
	}
	close(fds[1]);
	/* its tests' own waits have no limit: its whole run has one */
	signal(SIGALRM, run_too_long);
	alarm(RUN_LIMIT_S);
	while (len < sizeof(out) - 1 &&
	       (got = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += got;
	out[len] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	alarm(0);

	n = parse(out, res);
	if (!n) {
		ksft_print_msg("uffd-unit-tests printed no test:\n%s\n", out);
		ksft_exit_fail();
	}
	ksft_set_plan(n);
	for (i = 0; i < n; i++) {
		if (!strcmp(res[i].verdict, "done"))
			ksft_test_result_pass("%s\n", res[i].name);
		else if (!strcmp(res[i].verdict, "skipped"))
			ksft_test_result_skip("%s: %s\n", res[i].name,
					      res[i].reason);
		else
			ksft_test_result_fail("%s: %s\n", res[i].name,
					      res[i].reason);
	}
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != KSFT_PASS &&
				   WEXITSTATUS(status) != KSFT_SKIP)) {
		ksft_print_msg("uffd-unit-tests ended with status %#x\n", status);
		ksft_exit_fail();
	}
	ksft_finished();
}
