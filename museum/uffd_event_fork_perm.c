// SPDX-License-Identifier: GPL-2.0
/*
 * uffd_event_fork_perm: may a process without CAP_SYS_PTRACE ask for
 * UFFD_FEATURE_EVENT_FORK? Exhibit 04, 3c1c24d91ffd ("userfaultfd:
 * require CAP_SYS_PTRACE for UFFD_FEATURE_EVENT_FORK", 2019).
 *
 * A fork event is delivered by read() on the parent's userfaultfd, and
 * that read() installs a new file descriptor, the child's userfaultfd,
 * in the file table of whoever reads: a privileged reader handed such a
 * uffd can be made to take a descriptor it did not ask for. The fix
 * makes UFFDIO_API refuse the feature with EPERM to a caller without
 * CAP_SYS_PTRACE. The commit gives no program; this is the smallest one
 * that shows the check from user space:
 *
 *   1. as root, UFFDIO_API with UFFD_FEATURE_EVENT_FORK succeeds (the
 *      feature is there, so a refusal below is about the capability);
 *   2. in a child that dropped to uid/gid 65534 and so has no
 *      capabilities left, a userfaultfd (UFFD_USER_MODE_ONLY: allowed
 *      to anyone whatever vm.unprivileged_userfaultfd says) takes
 *      UFFDIO_API without features;
 *   3. another one of that child's, UFFDIO_API with
 *      UFFD_FEATURE_EVENT_FORK, fails with EPERM (without the fix: it
 *      succeeds).
 */
#include <grp.h>
#include <linux/capability.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "forklab.h"

#define NOBODY	65534

/* UFFDIO_API on a new userfaultfd: 0, or the errno it failed with. */
static int uffd_api(int flags, uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC | flags), err = 0;

	if (uffd < 0)
		ksft_exit_skip("userfaultfd: %s (CONFIG_USERFAULTFD?)\n",
			       strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		err = errno;
	close(uffd);
	return err;
}

/* Does this process have any effective capability left? (capget()) */
static bool any_capability(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (syscall(__NR_capget, &hdr, data))
		return true;
	return data[0].effective || data[1].effective;
}

/* In a child: drop to nobody, with no capabilities left. */
static void drop_privileges(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
		ksft_print_msg("cannot drop to uid %d: %s\n", NOBODY,
			       strerror(errno));
		_exit(3);
	}
	if (any_capability()) {
		ksft_print_msg("uid %d still has capabilities\n", NOBODY);
		_exit(3);
	}
}

/* Run uffd_api() as nobody: its result, or -1 when the child failed. */
static int unprivileged_uffd_api(uint64_t features)
{
	int status;
	pid_t pid = fork_or_fail();

	if (pid == 0) {
		drop_privileges();
		_exit(uffd_api(UFFD_USER_MODE_ONLY, features));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) == 3)
		return -1;
	return WEXITSTATUS(status);
}

int main(void)
{
	int err;

	ksft_print_header();
	if (geteuid())
		ksft_exit_skip("not root: nothing to drop\n");
	ksft_set_plan(3);

	err = uffd_api(0, UFFD_FEATURE_EVENT_FORK);
	ksft_test_result(!err, "root: UFFDIO_API with EVENT_FORK: %s\n",
			 strerror(err));

	err = unprivileged_uffd_api(0);
	if (err < 0)
		ksft_exit_fail_msg("the unprivileged child failed\n");
	ksft_test_result(!err, "uid %d: UFFDIO_API without features: %s\n",
			 NOBODY, strerror(err));

	err = unprivileged_uffd_api(UFFD_FEATURE_EVENT_FORK);
	if (err < 0)
		ksft_exit_fail_msg("the unprivileged child failed\n");
	ksft_test_result(err == EPERM,
			 "uid %d without CAP_SYS_PTRACE: UFFDIO_API with EVENT_FORK: %s\n",
			 NOBODY, err ? strerror(err) : "accepted");
	ksft_finished();
}
