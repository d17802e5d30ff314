// SPDX-License-Identifier: GPL-2.0
/*
 * fork_uffd: what dup_userfaultfd() hands the child of a process with
 * userfaultfd-registered ranges (MODE_MISSING: UML has no uffd-wp; the
 * uffd-wp rows are the x86_64 target's). Two ranges, both registered
 * with one uffd U, never touched:
 *
 *   parent  [ range A: PAGES pages ] ... [ range B: PAGES pages ]   U
 *              |  fork()
 *   child   without UFFD_FEATURE_EVENT_FORK: ordinary vmas (no "um" in
 *           smaps' VmFlags); reads map the zero page
 *           with it: both registered with one new uffd U', which the
 *           parent's monitor gets in one UFFD_EVENT_FORK message and
 *           serves: the child reads what the monitor put there
 *           (UFFDIO_COPY)
 *
 * Rows, and the kernel each catches:
 *
 *   1. without EVENT_FORK: a fork that kept the parent's context in the
 *      child's vmas shows "um" there (and the child's first fault would
 *      meet handle_userfault()'s BUG_ON(ctx->mm != mm)); one that made
 *      a context of its own blocks the fork until someone reads an
 *      event no one waits for (the run's timeout).
 *   2. with EVENT_FORK: a fork that reset the context (as if without
 *      the feature) gives the child zeros and no "um", and U no event;
 *      one that made a context per vma, not per parent context, sends
 *      U two fork events (the monitor takes and counts the second, so
 *      that the fork ends).
 *   3. EVENT_FORK without CAP_SYS_PTRACE: a process that dropped to an
 *      unprivileged uid must get EPERM from UFFDIO_API, as since
 *      3c1c24d91ffd (a fork event's read() installs a new fd in the
 *      reader's file table); a kernel without the check accepts it.
 *   4. while a fork waits for its event (U's mmap_changing raised, from
 *      dup_userfaultfd() until the event is read), each ioctl that
 *      fills U's memory fails with EAGAIN and writes -EAGAIN to its
 *      output field (.copy, .zeropage, .mapped, .updated, .move), as
 *      since 95567729173e: a kernel without it (6.1.192) returns EAGAIN
 *      and leaves the field as the caller left it, so a monitor that
 *      reads the field (as the ABI says it may) takes garbage for a
 *      count of bytes done. One row per ioctl; each forks once. After
 *      the fork a UFFDIO_COPY on U must work again: a kernel that left
 *      mmap_changing raised would fail every later ioctl with EAGAIN.
 *   9. a page poisoned with UFFDIO_POISON (no EVENT_FORK: the child's
 *      vma is an ordinary one, its pte the marker fork copied): a load
 *      of it gets SIGBUS in the parent, then in the child, then in the
 *      parent again. A kernel that
 *      does not copy the marker (before 7e3ce3f8d2d2, museum 05) lets
 *      the child read zeros; UML without forklab's patches/0013 panics
 *      at the parent's load (its fault handler BUG()s on
 *      VM_FAULT_HWPOISON).
 *
 * The monitor is a thread: fork() waits in dup_userfaultfd_complete()
 * until someone reads the fork event, so the forking thread cannot. It
 * must not malloc() or print: glibc's fork() holds malloc's and stdio's
 * locks across the syscall, which waits for the monitor.
 */
#include <grp.h>
#include <linux/capability.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include "mappings.h"

#define PAGES		4
#define RANGES		2
#define CHILD_ALARM	10	/* s: a fault no one serves ends the child */
#define MONITOR_WAIT	10000	/* ms */
#define POLL_STEP	20	/* ms */
#define NOBODY		65534
/* what the caller leaves in an ioctl's output field: neither -EAGAIN nor a count */
#define UNWRITTEN	0x5a5a5a5a5a5a5a5aLL

static uint32_t test_id;

static int new_uffd(uint64_t features)
{
	int uffd = open_uffd(features);

	/*
	 * No userfaultfd (CONFIG_USERFAULTFD), or EVENT_FORK without
	 * CAP_SYS_PTRACE: skip. EINVAL: a feature every kernel here has
	 * was refused.
	 */
	if (uffd < 0 && errno != EINVAL)
		ksft_exit_skip("userfaultfd: %s (CONFIG_USERFAULTFD? root?)\n",
			       strerror(errno));
	if (uffd < 0)
		ksft_exit_fail_msg("UFFDIO_API: %s\n", strerror(errno));
	return uffd;
}

/*
 * RANGES ranges of PAGES untouched private anon pages, a guard page
 * apart (two vmas), each registered with @uffd; the first page's address.
 */
static uint8_t *registered_ranges(int uffd)
{
	size_t ps = page_size(), stride = (PAGES + 1) * ps, i;
	uint8_t *p = mmap(NULL, RANGES * stride, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	for (i = 0; i < RANGES; i++) {
		if (mprotect(p + i * stride + PAGES * ps, ps, PROT_NONE))
			ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
		reg.range.start = (uintptr_t)(p + i * stride);
		reg.range.len = PAGES * ps;
		if (ioctl(uffd, UFFDIO_REGISTER, &reg))
			ksft_exit_fail_msg("UFFDIO_REGISTER: %s\n", strerror(errno));
		/* else the child's check of the flag could not fail */
		if (vma_has_flag(p + i * stride, "um") != 1)
			ksft_exit_fail_msg("a registered vma without VM_UFFD_MISSING\n");
	}
	return p;
}

static size_t range_offset(size_t range)
{
	return range * (PAGES + 1) * page_size();
}

/*
 * In the child: are the ranges ordinary vmas (@registered false) or
 * registered ones, and does every page read as @side's (0: zeros)?
 */
static void child_reads(const uint8_t *p, bool registered, enum side side)
{
	size_t ps = page_size(), r, i;
	const uint8_t *range;

	alarm(CHILD_ALARM);
	for (r = 0; r < RANGES; r++) {
		range = p + range_offset(r);
		if (vma_has_flag(range, "um") != registered) {
			ksft_print_msg("child: range %zu: VM_UFFD_MISSING %s\n", r,
				       registered ? "lost" : "kept without the feature");
			_exit(1);
		}
		for (i = 0; i < PAGES * ps; i++)
			if (range[i] != (side ? page_byte(side, test_id, r * PAGES + i / ps,
							  i % ps) : 0)) {
				ksft_print_msg("child: range %zu: wrong byte at %zu\n",
					       r, i);
				_exit(1);
			}
	}
	_exit(0);
}

static void without_event_fork(void)
{
	int uffd = new_uffd(0), rc;
	uint8_t *p;
	pid_t pid;

	row_begin("without UFFD_FEATURE_EVENT_FORK the child's vma is not registered");
	test_id = mapping_id("without EVENT_FORK");
	p = registered_ranges(uffd);
	pid = fork_or_fail();
	if (pid == 0)
		child_reads(p, false, 0);
	rc = wait_child(pid);
	if (rc == 128 + SIGALRM)
		ksft_print_msg("the child blocked in a fault on a uffd\n");
	row_result(!rc && vma_has_flag(p, "um") == 1);
	munmap(p, RANGES * (PAGES + 1) * page_size());
	close(uffd);
}

struct monitor {
	int uffd;
	uint8_t *range;
	uint8_t *page;		/* what UFFDIO_COPY copies from */
	const char *wrong;	/* NULL: it served the child's ranges */
	int fork_events, faults;
	bool forked;		/* fork() returned in the parent */
};

/* Serve one fault of the child's: the page's CHILD_SIDE bytes. */
static bool serve(struct monitor *mon, int uffd, const struct uffd_msg *msg)
{
	size_t ps = page_size();
	uintptr_t addr = msg->arg.pagefault.address & ~(uintptr_t)(ps - 1);
	size_t off = addr - (uintptr_t)mon->range;
	struct uffdio_copy copy = { .dst = addr, .src = (uintptr_t)mon->page,
				    .len = ps };

	/* page n of range r is pattern page r * PAGES + n */
	fill(mon->page, CHILD_SIDE, test_id,
	     off / ((PAGES + 1) * ps) * PAGES + off % ((PAGES + 1) * ps) / ps, ps);
	if (ioctl(uffd, UFFDIO_COPY, &copy)) {
		mon->wrong = "UFFDIO_COPY into the child failed";
		return false;
	}
	mon->faults++;
	return true;
}

/*
 * Take the fork events on U and serve the child's faults on the uffds
 * they bring, until every page is served or nothing comes for
 * MONITOR_WAIT ms.
 */
static void *monitor(void *arg)
{
	struct monitor *mon = arg;
	struct pollfd fds[1 + RANGES] = { { .fd = mon->uffd, .events = POLLIN } };
	struct uffd_msg msg;
	int nfds = 1, i, waited;

	while (mon->faults < RANGES * PAGES && !mon->wrong) {
		if (poll(fds, nfds, MONITOR_WAIT) <= 0)
			break;
		for (i = 0; i < nfds; i++) {
			if (!(fds[i].revents & POLLIN) ||
			    read(fds[i].fd, &msg, sizeof(msg)) != sizeof(msg))
				continue;
			if (i == 0 && msg.event == UFFD_EVENT_FORK &&
			    nfds < 1 + RANGES) {
				mon->fork_events++;
				fds[nfds].fd = msg.arg.fork.ufd;
				fds[nfds++].events = POLLIN;
			} else if (i > 0 && msg.event == UFFD_EVENT_PAGEFAULT) {
				serve(mon, fds[i].fd, &msg);
			} else {
				mon->wrong = i ? "an event other than a fault on the child's uffd" :
					     "an event other than a fork on the parent's uffd";
			}
		}
	}
	/*
	 * A fork that never returns waits killable (for its event to be
	 * taken): no alarm of the row's ends that, this thread's exit does.
	 * But its return is not this loop's end: the child and this thread
	 * may take every fault between the fork event's read() and the
	 * forking thread's next run (UML's one CPU, a loaded host). So the
	 * fork has MONITOR_WAIT ms more to return.
	 */
	for (waited = 0; !__atomic_load_n(&mon->forked, __ATOMIC_ACQUIRE); waited += POLL_STEP) {
		if (waited >= MONITOR_WAIT)
			row_timed_out("the fork to return, its events taken",
				      MONITOR_WAIT / 1000);
		usleep(POLL_STEP * 1000);
	}
	if (!mon->fork_events)
		mon->wrong = "no UFFD_EVENT_FORK on the parent's uffd";
	for (i = 1; i < nfds; i++)
		close(fds[i].fd);
	return NULL;
}

static void with_event_fork(void)
{
	struct monitor mon = { .uffd = new_uffd(UFFD_FEATURE_EVENT_FORK) };
	pthread_t thread;
	int rc;
	pid_t pid;

	row_begin("with UFFD_FEATURE_EVENT_FORK the child's faults reach its own uffd");
	test_id = mapping_id("with EVENT_FORK");
	mon.range = registered_ranges(mon.uffd);
	mon.page = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mon.page == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	if (pthread_create(&thread, NULL, monitor, &mon))
		ksft_exit_fail_msg("pthread_create failed\n");
	pid = fork_or_fail();
	if (pid == 0)
		child_reads(mon.range, true, CHILD_SIDE);
	__atomic_store_n(&mon.forked, true, __ATOMIC_RELEASE);
	rc = wait_child(pid);
	pthread_join(thread, NULL);
	if (mon.wrong)
		ksft_print_msg("monitor: %s\n", mon.wrong);
	if (mon.fork_events != 1)
		ksft_print_msg("%d fork events for one parent uffd, want 1\n",
			       mon.fork_events);
	if (rc == 128 + SIGALRM)
		ksft_print_msg("the child blocked in a fault no one served\n");
	ksft_test_result(!rc && !mon.wrong && mon.fork_events == 1 &&
			 mon.faults == RANGES * PAGES,
			 "with UFFD_FEATURE_EVENT_FORK the child's faults reach its own uffd (%d of %d)\n",
			 mon.faults, RANGES * PAGES);
	munmap(mon.range, RANGES * (PAGES + 1) * page_size());
	munmap(mon.page, page_size());
	close(mon.uffd);
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

/*
 * In a child dropped to NOBODY (no capabilities): UFFDIO_API with
 * EVENT_FORK on a UFFD_USER_MODE_ONLY uffd, which anyone may create.
 * Exit 0: EPERM; 1: accepted or another error; 3: the setup failed.
 */
static void unprivileged_event_fork(void)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_EVENT_FORK };
	int uffd;

	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY) || any_capability()) {
		ksft_print_msg("child: cannot drop every capability\n");
		_exit(3);
	}
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (uffd < 0) {
		ksft_print_msg("child: userfaultfd: %s\n", strerror(errno));
		_exit(3);
	}
	if (!ioctl(uffd, UFFDIO_API, &api)) {
		ksft_print_msg("child: uid %d got UFFD_FEATURE_EVENT_FORK\n", NOBODY);
		_exit(1);
	}
	if (errno != EPERM) {
		ksft_print_msg("child: UFFDIO_API: %s, want EPERM\n", strerror(errno));
		_exit(1);
	}
	_exit(0);
}

static void event_fork_needs_ptrace(void)
{
	pid_t pid;

	row_begin("without CAP_SYS_PTRACE UFFD_FEATURE_EVENT_FORK is refused");
	if (geteuid()) {
		ksft_test_result_skip("not root: no capabilities to drop\n");
		return;
	}
	pid = fork_or_fail();
	if (pid == 0)
		unprivileged_event_fork();
	row_result(!wait_child(pid));
}

/*
 * The ioctls of row 4, each with the offset of its output field. Those a
 * tree's uapi headers lack (6.1: UFFDIO_POISON came in 6.6, UFFDIO_MOVE
 * in 6.8) skip.
 */
union uffdio_arg {
	struct uffdio_copy copy;
	struct uffdio_zeropage zeropage;
	struct uffdio_continue cont;
#ifdef UFFDIO_POISON
	struct uffdio_poison poison;
#endif
#ifdef UFFDIO_MOVE
	struct uffdio_move move;
#endif
};

struct fill_ioctl {
	const char *name;
	unsigned long cmd;	/* 0: not in this tree's headers */
	size_t field;		/* offset of the __s64 it must write */
	const char *field_name;
};

#define FILL_IOCTL(_cmd, _member, _field) \
	{ #_cmd, _cmd, offsetof(union uffdio_arg, _member._field), "." #_field }

static const struct fill_ioctl fill_ioctls[] = {
	FILL_IOCTL(UFFDIO_COPY, copy, copy),
	FILL_IOCTL(UFFDIO_ZEROPAGE, zeropage, zeropage),
	FILL_IOCTL(UFFDIO_CONTINUE, cont, mapped),
#ifdef UFFDIO_POISON
	FILL_IOCTL(UFFDIO_POISON, poison, updated),
#else
	{ "UFFDIO_POISON", 0, 0, ".updated" },
#endif
#ifdef UFFDIO_MOVE
	FILL_IOCTL(UFFDIO_MOVE, move, move),
#else
	{ "UFFDIO_MOVE", 0, 0, ".move" },
#endif
};

struct waiting_fork {
	pid_t pid;
	int err;
	bool returned;		/* fork() returned in the parent */
};

/* A second thread's fork(): it returns once the main thread reads U. */
static void *fork_and_reap(void *arg)
{
	struct waiting_fork *wf = arg;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	__atomic_store_n(&wf->returned, true, __ATOMIC_RELEASE);
	wf->pid = pid;
	if (pid < 0)
		wf->err = errno;
	else if (wait_child(pid))
		wf->err = ECHILD;
	return NULL;
}

/*
 * Read U's fork events until the fork returns, at most MONITOR_WAIT ms:
 * how many came. A kernel that sends more than one (a context per vma)
 * would keep the fork waiting for the next; one whose fork never returns
 * ends the program here, by name, not at the runner's timeout.
 */
static int read_fork_events(int uffd, struct waiting_fork *wf, const char *name)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct timespec now, deadline;
	struct uffd_msg msg;
	int events = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += MONITOR_WAIT / 1000;
	while (!__atomic_load_n(&wf->returned, __ATOMIC_ACQUIRE)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > deadline.tv_sec ||
		    (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec))
			ksft_exit_fail_msg("%s: the fork did not return within %d ms of its events\n",
					   name, MONITOR_WAIT);
		if (poll(&pfd, 1, POLL_STEP) != 1 ||
		    read(uffd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		if (msg.event == UFFD_EVENT_FORK) {
			events++;
			close(msg.arg.fork.ufd);
		}
	}
	return events;
}

/*
 * After the fork: a UFFDIO_COPY into @dst works again (a kernel that left
 * U's mmap_changing raised fails every later ioctl with EAGAIN).
 */
static bool copy_works_after_fork(int uffd, uint8_t *dst, const uint8_t *src)
{
	struct uffdio_copy copy = { .dst = (uintptr_t)dst, .src = (uintptr_t)src,
				    .len = page_size(), .copy = UNWRITTEN };

	if (ioctl(uffd, UFFDIO_COPY, &copy) || copy.copy != (int64_t)page_size()) {
		ksft_print_msg("after the fork: UFFDIO_COPY on U: %s, .copy %lld (mmap_changing left raised?)\n",
			       strerror(errno), (long long)copy.copy);
		return false;
	}
	return true;
}

/*
 * @fi on U while a fork waits for its event: 0 when it failed with
 * EAGAIN and wrote -EAGAIN, and U works after the fork; else says what
 * it did. Nothing is printed while the fork waits (glibc's fork() holds
 * stdio's locks): what went wrong is kept in @why until it returned.
 */
static int fill_while_forking(const struct fill_ioctl *fi)
{
	int uffd = new_uffd(UFFD_FEATURE_EVENT_FORK), ret, err, events;
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct waiting_fork wf = { 0 };
	union uffdio_arg arg;
	int64_t *field = (int64_t *)((char *)&arg + fi->field);
	size_t ps = page_size();
	char why[192] = "";
	pthread_t thread;
	uint8_t *p, *src;
	int bad = 1;

	p = registered_ranges(uffd);
	/*
	 * The source: a written page no uffd watches, so that a kernel that
	 * lets the ioctl through copies it (or fails it), never faults on U,
	 * which only this thread reads.
	 */
	src = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (src == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(src, 0x5a, ps);
	/*
	 * A copy of @src into the first range: the others read what they
	 * need of it. Each checks mmap_changing before its argument.
	 */
	memset(&arg, 0, sizeof(arg));
	arg.copy.dst = (uintptr_t)p;
	arg.copy.src = (uintptr_t)src;
	arg.copy.len = ps;
	*field = UNWRITTEN;
	fflush(stdout);
	if (pthread_create(&thread, NULL, fork_and_reap, &wf))
		ksft_exit_fail_msg("pthread_create failed\n");
	/*
	 * The event is queued after dup_userfaultfd() raised mmap_changing,
	 * which stays raised until the forking thread, woken by the read
	 * below, lowers it: the ioctl runs in between.
	 */
	if (poll(&pfd, 1, MONITOR_WAIT) != 1) {
		snprintf(why, sizeof(why), "no UFFD_EVENT_FORK on U within %d ms",
			 MONITOR_WAIT);
	} else {
		ret = ioctl(uffd, fi->cmd, &arg);
		err = errno;
		if (ret == 0 || err != EAGAIN)
			snprintf(why, sizeof(why), "during a fork: %s, want EAGAIN",
				 ret ? strerror(err) : "done");
		else if (*field != -EAGAIN)
			snprintf(why, sizeof(why), "EAGAIN, %s left %#llx (want -EAGAIN: 95567729173e)",
				 fi->field_name, (long long)*field);
		else
			bad = 0;
	}
	events = read_fork_events(uffd, &wf, fi->name);
	pthread_join(thread, NULL);
	if (why[0])
		ksft_print_msg("%s: %s\n", fi->name, why);
	if (events != 1) {
		ksft_print_msg("%s: %d fork events, want 1\n", fi->name, events);
		bad = 1;
	}
	if (wf.err) {
		ksft_print_msg("%s: the waiting fork: %s\n", fi->name, strerror(wf.err));
		bad = 1;
	}
	/* the first range's second page: the first may hold the copy */
	if (!copy_works_after_fork(uffd, p + ps, src))
		bad = 1;
	munmap(src, ps);
	munmap(p, RANGES * (PAGES + 1) * ps);
	close(uffd);
	return bad;
}

static void fill_during_fork(const struct fill_ioctl *fi)
{
	char name[96];

	snprintf(name, sizeof(name), "%s during a fork: EAGAIN, -EAGAIN in %s",
		 fi->name, fi->field_name);
	row_begin("%s", name);
	if (!fi->cmd) {
		row_skip("not in this kernel's uapi headers");
		return;
	}
	row_result(!fill_while_forking(fi));
}

#ifdef UFFDIO_POISON
static bool poisoned_loads_fault(void)
{
	int uffd = new_uffd(UFFD_FEATURE_POISON);
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_poison poison = { 0 };
	size_t ps = page_size();
	uint8_t *p = mmap(NULL, ps, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool parent, faulted;
	pid_t pid;

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	reg.range.start = poison.range.start = (uintptr_t)p;
	reg.range.len = poison.range.len = ps;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) || ioctl(uffd, UFFDIO_POISON, &poison))
		ksft_exit_fail_msg("UFFDIO_REGISTER, UFFDIO_POISON: %s\n", strerror(errno));
	/* a load that a lost marker leaves waiting on the uffd: the limit */
	wait_limit(WAIT_LIMIT_S, "a load of the poisoned page to fault");
	parent = load_or_sigbus(p) < 0;
	wait_done();
	if (!parent)
		ksft_print_msg("parent: a load of the poisoned page did not fault\n");
	pid = fork_or_fail();
	if (pid == 0)
		_exit(load_or_sigbus(p) < 0 ? 0 : 1);
	if (wait_child(pid)) {
		ksft_print_msg("child: a load of the poisoned page did not fault (no marker?)\n");
		parent = false;
	}
	/* fork must leave the parent's marker as it was */
	wait_limit(WAIT_LIMIT_S, "a load of the poisoned page to fault, after the fork");
	faulted = load_or_sigbus(p) < 0;
	wait_done();
	if (!faulted) {
		ksft_print_msg("parent, after the fork: a load of the poisoned page did not fault\n");
		parent = false;
	}
	munmap(p, ps);
	close(uffd);
	return parent;
}
#endif

static void poisoned_page_after_fork(void)
{
	const char *name = "UFFDIO_POISON: a load of the poisoned page gets SIGBUS, in the parent and the child";

	row_begin("%s", name);
#ifdef UFFDIO_POISON
	ksft_test_result(poisoned_loads_fault(), "%s\n", name);
#else
	skip_named(name, "not in this kernel's uapi headers");
#endif
}

int main(void)
{
	size_t i;

	ksft_print_header();
	ksft_set_plan(4 + ARRAY_SIZE(fill_ioctls));
	without_event_fork();
	with_event_fork();
	event_fork_needs_ptrace();
	for (i = 0; i < ARRAY_SIZE(fill_ioctls); i++)
		fill_during_fork(&fill_ioctls[i]);
	poisoned_page_after_fork();
	ksft_finished();
}
