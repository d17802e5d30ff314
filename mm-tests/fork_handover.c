// SPDX-License-Identifier: GPL-2.0
/*
 * fork_handover: what dup_mmap() hands the child besides vmas and ptes,
 * each checked while the child lives, from the side that would notice.
 *
 *   dup_mmap() line                  what a wrong kernel looks like       row
 *   dup_mm_exe_file()                the child has no /proc/self/exe      1 (mutant 20)
 *   tmp->vm_ops->open(tmp)           a SysV segment's shm_nattch misses   2 (mutant 21)
 *                                    the child's attach: IPC_RMID would
 *                                    free it under the parent
 *   vma_interval_tree_insert_after() truncate() cannot find the child's   3
 *                                    file ptes: the child reads pages
 *                                    the file no longer has
 *   mapping_allow_writable()         F_SEAL_WRITE succeeds while the      4, 5 (mutant 22)
 *   if vma_is_shared_maywrite()      child still maps the memfd shared
 *                                    writable (or PROT_READ with
 *                                    VM_MAYWRITE: mprotect() can make it
 *                                    writable), and the child writes a
 *                                    sealed file
 *
 * and what mm_init() takes over from the parent's mm and what it must not:
 *
 *   mm->flags = mmf_init_flags()     the child loses prctl()'s            6-10
 *                                    PR_SET_THP_DISABLE, MEMORY_MERGE     (mutant 30)
 *                                    or MDWE, its coredump_filter or
 *                                    dumpable; or keeps MDWE that
 *                                    PR_MDWE_NO_INHERIT said not to
 *   mm->def_flags & VM_INIT_DEF_MASK mlockall(MCL_FUTURE), and with       11, 12
 *                                    MCL_ONFAULT, is inherited:           (mutant 31)
 *                                    every mapping the child makes is
 *                                    locked
 *
 * Parent and child step together over two pipes: the child says
 * "ready" once it holds what it was handed, the parent acts (or reads),
 * then says "go"; the child's exit status is its verdict.
 */
#include <sys/prctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>

#include "forklab.h"

#define PAGES	8

/* 1: the child's /proc/self/exe is the parent's executable. */
static void exe_file(void)
{
	char parent[512], child[512];
	ssize_t len = readlink("/proc/self/exe", parent, sizeof(parent) - 1);
	pid_t pid;

	row_begin("the child's /proc/self/exe is the parent's");
	if (len < 0)
		ksft_exit_fail_msg("readlink /proc/self/exe: %s\n", strerror(errno));
	parent[len] = '\0';
	pid = fork_or_fail();
	if (pid == 0) {
		len = readlink("/proc/self/exe", child, sizeof(child) - 1);
		if (len < 0) {
			ksft_print_msg("child: readlink /proc/self/exe: %s\n",
				       strerror(errno));
			_exit(1);
		}
		child[len] = '\0';
		_exit(strcmp(child, parent) != 0);
	}
	row_result(!wait_child(pid));
}

static unsigned long nattch(int id)
{
	struct shmid_ds ds;

	if (shmctl(id, IPC_STAT, &ds))
		ksft_exit_fail_msg("shmctl IPC_STAT: %s\n", strerror(errno));
	return ds.shm_nattch;
}

/* 2: shm_open() through vm_ops->open counts the child's attach. */
static void shm_attach_count(void)
{
	unsigned long alone, with_child, after;
	struct lockstep ls;
	uint8_t *seg;
	pid_t pid;
	int id;

	row_begin("SysV shm: shm_nattch counts the child's attach while it lives");
	id = shmget(IPC_PRIVATE, PAGES * page_size(), IPC_CREAT | 0600);
	if (id < 0)
		ksft_exit_fail_msg("shmget: %s\n", strerror(errno));
	seg = shmat(id, NULL, 0);
	if (seg == (void *)-1)
		ksft_exit_fail_msg("shmat: %s\n", strerror(errno));
	memset(seg, 0x5a, PAGES * page_size());
	alone = nattch(id);
	lockstep_init(&ls);
	pid = fork_or_fail();
	if (pid == 0) {
		say(ls.to_parent[1]);
		hear(ls.to_child[0]);
		_exit(seg[0] != 0x5a);
	}
	hear(ls.to_parent[0]);
	with_child = nattch(id);
	say(ls.to_child[1]);
	if (wait_child(pid))
		ksft_exit_fail_msg("shm: the child failed\n");
	after = nattch(id);
	shmdt(seg);
	shmctl(id, IPC_RMID, NULL);
	ksft_print_msg("shm_nattch: %lu alone, %lu with the child, %lu after\n",
		       alone, with_child, after);
	row_result(alone == 1 && with_child == 2 && after == 1);
}

/*
 * 3: truncate() after fork reaches the child's ptes of the file, which
 * it finds through the file's i_mmap tree. The parent reads every page
 * of a MAP_PRIVATE file mapping and writes page 0 (an anon_vma: fork
 * copies the vma's ptes, file pages 1..7 among them); the child checks
 * it has them, the parent truncates the file to nothing, and every page
 * of the child's mapping must then be beyond EOF: SIGBUS.
 */
static void truncate_reaches_child(void)
{
	size_t ps = page_size(), i, present;
	unsigned int sum = 0;
	uint8_t *map;
	struct lockstep ls;
	pid_t pid;
	int fd;

	row_begin("truncate() after fork: the child's file pages are gone (SIGBUS)");
	fd = tmp_fd("truncate", PAGES * ps);
	map = mmap(NULL, PAGES * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	for (i = 0; i < PAGES; i++)
		sum += load_or_sigbus(map + i * ps);
	map[0] = sum;
	lockstep_init(&ls);
	pid = fork_or_fail();
	if (pid == 0) {
		present = present_pages(map, PAGES * ps);
		say(ls.to_parent[1]);
		hear(ls.to_child[0]);
		if (present != PAGES) {
			ksft_print_msg("truncate: the child has %zu of %d ptes: nothing to reach\n",
				       present, PAGES);
			_exit(2);
		}
		for (i = 1; i < PAGES; i++) {
			int byte = load_or_sigbus(map + i * ps);

			if (byte < 0)
				continue;	/* SIGBUS: the page is gone */
			ksft_print_msg("truncate: the child still reads page %zu (%d)\n",
				       i, byte);
			_exit(1);
		}
		_exit(0);
	}
	hear(ls.to_parent[0]);
	if (ftruncate(fd, 0))
		ksft_exit_fail_msg("ftruncate: %s\n", strerror(errno));
	say(ls.to_child[1]);
	row_result(!wait_child(pid));
	munmap(map, PAGES * ps);
	close(fd);
}

/*
 * 4: a memfd that the child maps shared and writable cannot take
 * F_SEAL_WRITE, although the parent unmapped it: dup_mmap() counted the
 * child's mapping in the file's i_mmap_writable. Once the child is gone
 * it can (else this row could not fail either way).
 */
static void memfd_seal_while_child_maps(int prot, const char *row)
{
	size_t size = PAGES * page_size();
	int busy, after, fd;
	struct lockstep ls;
	uint8_t *map;
	pid_t pid;

	row_begin("%s", row);
	fd = memfd_create("forklab", MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, size))
		ksft_exit_fail_msg("memfd_create: %s\n", strerror(errno));
	map = mmap(NULL, size, prot, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	lockstep_init(&ls);
	pid = fork_or_fail();
	if (pid == 0) {
		say(ls.to_parent[1]);
		hear(ls.to_child[0]);
		_exit(0);
	}
	hear(ls.to_parent[0]);
	munmap(map, size);
	busy = fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) ? errno : 0;
	say(ls.to_child[1]);
	if (wait_child(pid))
		ksft_exit_fail_msg("memfd: the child failed\n");
	after = fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) ? errno : 0;
	close(fd);
	ksft_print_msg("F_SEAL_WRITE: %s while the child maps it, %s after\n",
		       busy ? strerror(busy) : "sealed", after ? strerror(after) : "sealed");
	ksft_test_result(busy == EBUSY && !after, "%s\n", row);
}

/*
 * A setter's status for a prctl the kernel does not know (EINVAL): 6.1
 * has no PR_SET_MEMORY_MERGE (6.4) and no PR_SET_MDWE (6.3). The row
 * skips; configs/expected says where that is expected.
 */
#define NO_SUCH_PRCTL	5

static int prctl_status(int rc)
{
	return !rc ? 0 : errno == EINVAL ? NO_SUCH_PRCTL : 4;
}

/*
 * Rows 6-9 set a process-wide property that cannot be undone (MDWE) or
 * that would change every later row (mlockall()): each runs in a process
 * of its own, @setter's, which forks a child that runs @check. The
 * setter's own check proves the child's could fail.
 */
static void in_own_process(const char *row, int (*setter)(void),
			   int (*check)(bool in_child))
{
	pid_t pid = fork_or_fail(), child;
	int rc;

	row_begin("%s", row);
	if (pid == 0) {
		rc = setter();
		if (!rc && check(false))
			rc = 2;		/* the setting did not take */
		if (!rc) {
			child = fork_flushed();
			if (child == 0)
				_exit(check(true));
			rc = child < 0 ? 3 : wait_child(child);
		}
		_exit(rc);
	}
	rc = wait_child(pid);
	if (rc == NO_SUCH_PRCTL) {
		skip_named(row, "this kernel has no such prctl");
		return;
	}
	if (rc == 2)
		ksft_print_msg("%s: the setting did not take in the parent\n", row);
	else if (rc)
		ksft_print_msg("%s: %d\n", row, rc);
	ksft_test_result(!rc, "%s\n", row);
}

static int set_thp_disable(void)
{
	return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) ? 4 : 0;
}

static int thp_disabled(bool in_child)
{
	return prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1 ? 0 : 1;
}

#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE		67
#define PR_GET_MEMORY_MERGE		68
#endif

static int set_memory_merge(void)
{
	return prctl_status(prctl(PR_SET_MEMORY_MERGE, 1, 0, 0, 0));
}

static int merges_any(bool in_child)
{
	return prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) == 1 ? 0 : 1;
}

#ifndef PR_SET_MDWE
#define PR_SET_MDWE			65
#define PR_GET_MDWE			66
#define PR_MDWE_REFUSE_EXEC_GAIN	(1UL << 0)
#define PR_MDWE_NO_INHERIT		(1UL << 1)
#endif

static int set_mdwe(void)
{
	return prctl_status(prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0));
}

static int set_mdwe_no_inherit(void)
{
	return prctl_status(prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN |
				  PR_MDWE_NO_INHERIT, 0, 0, 0));
}

/* The parent has MDWE; the child has it unless NO_INHERIT said not. */
static int mdwe_as_set(bool in_child, bool inherit)
{
	int mdwe = prctl(PR_GET_MDWE, 0, 0, 0, 0);

	if (!in_child || inherit)
		return mdwe & PR_MDWE_REFUSE_EXEC_GAIN ? 0 : 1;
	return mdwe == 0 ? 0 : 1;
}

static int mdwe_inherited(bool in_child)
{
	return mdwe_as_set(in_child, true);
}

static int mdwe_not_inherited(bool in_child)
{
	return mdwe_as_set(in_child, false);
}

static int set_mlockall_future(void)
{
	return mlockall(MCL_FUTURE) ? 4 : 0;
}

static int set_mlockall_future_onfault(void)
{
	return mlockall(MCL_FUTURE | MCL_ONFAULT) ? 4 : 0;
}

/*
 * A new mapping has VmFlags @flag in the parent (def_flags), not in the
 * child: 0 if so.
 */
static int new_mapping_has_as_set(bool in_child, const char *flag)
{
	void *p = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int has;

	if (p == MAP_FAILED)
		return 5;
	has = vma_has_flag(p, flag);
	munmap(p, page_size());
	return has == !in_child ? 0 : 1;
}

static int new_mapping_locked_as_set(bool in_child)
{
	return new_mapping_has_as_set(in_child, "lo");
}

static int new_mapping_locks_on_fault_as_set(bool in_child)
{
	return new_mapping_has_as_set(in_child, "lo") ||
	       (smaps_shows_lock_on_fault() &&
		new_mapping_has_as_set(in_child, "lf"));
}

/* coredump_filter: bits 0-6 of the mm's flags (MMF_DUMP_FILTER_MASK). */
#define DUMP_FILTER	"0x5d"

static int set_coredump_filter(void)
{
	int fd = open("/proc/self/coredump_filter", O_WRONLY);
	int rc = fd < 0 || write(fd, DUMP_FILTER, strlen(DUMP_FILTER)) < 0 ? 4 : 0;

	if (fd >= 0)
		close(fd);
	return rc;
}

static int dump_filter_as_set(bool in_child)
{
	char buf[32] = "";
	int fd = open("/proc/self/coredump_filter", O_RDONLY);
	ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return len > 0 && strtoul(buf, NULL, 16) == strtoul(DUMP_FILTER, NULL, 16) &&
	       prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1 ? 0 : 1;
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(12);
	exe_file();
	shm_attach_count();
	truncate_reaches_child();
	memfd_seal_while_child_maps(PROT_READ | PROT_WRITE,
				    "memfd: F_SEAL_WRITE fails (EBUSY) while the child maps it shared writable");
	/* VM_MAYWRITE, not VM_WRITE, is what counts: mprotect() could add it */
	memfd_seal_while_child_maps(PROT_READ,
				    "memfd: F_SEAL_WRITE fails (EBUSY) while the child maps it shared PROT_READ from an O_RDWR fd");
	in_own_process("mm flags: prctl(PR_SET_THP_DISABLE) is inherited",
		       set_thp_disable, thp_disabled);
	in_own_process("mm flags: prctl(PR_SET_MEMORY_MERGE) is inherited",
		       set_memory_merge, merges_any);
	in_own_process("mm flags: prctl(PR_SET_MDWE) is inherited",
		       set_mdwe, mdwe_inherited);
	in_own_process("mm flags: PR_MDWE_NO_INHERIT keeps MDWE from the child",
		       set_mdwe_no_inherit, mdwe_not_inherited);
	in_own_process("mm flags: coredump_filter and dumpable are inherited",
		       set_coredump_filter, dump_filter_as_set);
	in_own_process("def_flags: mlockall(MCL_FUTURE) is not inherited",
		       set_mlockall_future, new_mapping_locked_as_set);
	in_own_process("def_flags: mlockall(MCL_FUTURE | MCL_ONFAULT) is not inherited",
		       set_mlockall_future_onfault,
		       new_mapping_locks_on_fault_as_set);
	ksft_finished();
}
