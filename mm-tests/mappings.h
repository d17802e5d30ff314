/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mapping kinds fork must get right, each set up as a process would,
 * and what a child forked afterwards must find in it. fork_mappings forks
 * once per kind; fork_fail_nth holds them all at once while it fails each
 * of fork's allocations in turn.
 *
 * Each mapping is MAPPING_PAGES pages; the files live in /tmp (tmpfs
 * inside UML):
 *
 *   addr                                          addr + MAPPING_SIZE
 *   |<- page 0 ->|<- page 1 ->| ... |<- page MAPPING_PAGES - 1 ->|
 */
#ifndef FORKLAB_MAPPINGS_H
#define FORKLAB_MAPPINGS_H

#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>

#include "forklab.h"

#define MAPPING_PAGES	8
#define MAPPING_SIZE	(MAPPING_PAGES * page_size())

enum pattern { FILE_PATTERN = 0x11, PARENT_PATTERN = 0x5a, CHILD_PATTERN = 0xc3 };

enum mapping_kind {
	PRIVATE_ANON, SYSV_SHM, SHARED_ANON, SHARED_FILE, SHARED_FILE_RDONLY,
	PRIVATE_FILE, REMAPPED_FILE,
};
enum parent_access { NO_ACCESS, READS, WRITES };
enum child_view { PARENT_BYTES, FILE_BYTES, ZEROES, UNMAPPED, REVERSED_FILE };

struct mapping {
	const char *desc;
	enum mapping_kind kind;
	enum parent_access access;
	int advice;			/* madvise() before fork, or 0 */
	bool mlocked;
	bool lazy_copies;		/* upstream copies it (anon_vma) */
	enum child_view child_sees;
	uint8_t *addr;			/* set up by map_one() */
	size_t parent_present;		/* ptes right before fork */
};

/*
 * The table. A row's comment says what the child would see if fork got
 * it wrong.
 */
static const struct mapping mapping_table[] = {
	/* Skipped, the child would read zeros where the parent wrote. */
	{ "private anon, written", PRIVATE_ANON, WRITES, 0, false, true,
	  PARENT_BYTES },
	/* Nothing to copy: a fault gives the child the zero page. */
	{ "private anon, never touched", PRIVATE_ANON, NO_ACCESS, 0, false,
	  false, ZEROES },
	/* Ray Fucillo's case: faults bring the same shm pages back. */
	{ "SysV shm, written", SYSV_SHM, WRITES, 0, false, false,
	  PARENT_BYTES },
	{ "MAP_SHARED anon, written", SHARED_ANON, WRITES, 0, false, false,
	  PARENT_BYTES },
	{ "MAP_SHARED tmpfs file, written", SHARED_FILE, WRITES, 0, false,
	  false, PARENT_BYTES },
	/* VM_MAYSHARE without VM_SHARED: skipped like any shared mapping. */
	{ "MAP_SHARED PROT_READ, read-only file", SHARED_FILE_RDONLY, READS,
	  0, false, false, FILE_BYTES },
	/* Every page is still the page cache's. */
	{ "MAP_PRIVATE file, read", PRIVATE_FILE, READS, 0, false, false,
	  FILE_BYTES },
	/* Skipped (Andi Kleen, 2005), the child would read the file. */
	{ "MAP_PRIVATE file, written", PRIVATE_FILE, WRITES, 0, false, true,
	  PARENT_BYTES },
	/* Kept, the child could read what the parent hid from it. */
	{ "MADV_DONTFORK", PRIVATE_ANON, WRITES, MADV_DONTFORK, false, true,
	  UNMAPPED },
	/* Copied, the child would read the parent's data, not zeros. */
	{ "MADV_WIPEONFORK", PRIVATE_ANON, WRITES, MADV_WIPEONFORK, false,
	  true, ZEROES },
	/*
	 * Paged out: the data lives in swap, its address only in the
	 * parent's ptes. Skipped, the child would read zeros; fork copies
	 * the swap entries (copy_nonpresent_pte()), not pages.
	 */
	{ "private anon, paged out to swap", PRIVATE_ANON, WRITES,
	  MADV_PAGEOUT, false, true, PARENT_BYTES },
	/* VM_LOCKED inherited, the child would pin memory it never locked. */
	{ "mlocked private anon", PRIVATE_ANON, WRITES, 0, true, true,
	  PARENT_BYTES },
	/*
	 * remap_file_pages(): page i shows file page N-1-i. If the child
	 * refaulted by linear offsets, it would read the file in order.
	 */
	{ "remap_file_pages, reversed", REMAPPED_FILE, READS, 0, false,
	  false, REVERSED_FILE },
};

#define NR_MAPPINGS	(sizeof(mapping_table) / sizeof(mapping_table[0]))

static inline uint8_t pattern_byte(uint8_t seed, size_t i)
{
	return seed ^ (uint8_t)(i * 7 + i / 4096);
}

static inline void fill(uint8_t *p, uint8_t seed, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern_byte(seed, i);
}

/* The bytes a child must read at offset @i of the mapping. */
static inline uint8_t expected_byte(const struct mapping *m, size_t i)
{
	size_t ps = page_size(), page = i / ps;

	switch (m->child_sees) {
	case PARENT_BYTES:
		return pattern_byte(PARENT_PATTERN, i);
	case FILE_BYTES:
		return pattern_byte(FILE_PATTERN, i);
	case REVERSED_FILE:
		return pattern_byte(FILE_PATTERN,
				    (MAPPING_PAGES - 1 - page) * ps + i % ps);
	default:
		return 0;
	}
}

static inline bool is_shared(const struct mapping *m)
{
	return m->kind != PRIVATE_ANON && m->kind != PRIVATE_FILE;
}

/* Does fork copy this mapping's ptes under the running policy? */
static inline bool fork_copies(const struct mapping *m)
{
	if (m->advice == MADV_DONTFORK || m->advice == MADV_WIPEONFORK)
		return false;
	return m->lazy_copies || policy_copies_skipped(is_shared(m));
}

static inline int tmp_file(const char *name, int open_flags, mode_t mode)
{
	char path[64];
	uint8_t *buf = malloc(MAPPING_SIZE);
	int fd;

	snprintf(path, sizeof(path), "/tmp/forklab-%s-%d", name, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || !buf)
		ksft_exit_fail_msg("create %s: %s\n", path, strerror(errno));
	fill(buf, FILE_PATTERN, MAPPING_SIZE);
	if (write(fd, buf, MAPPING_SIZE) != (ssize_t)MAPPING_SIZE)
		ksft_exit_fail_msg("write %s: %s\n", path, strerror(errno));
	free(buf);
	close(fd);
	if (chmod(path, mode))
		ksft_exit_fail_msg("chmod %s: %s\n", path, strerror(errno));
	fd = open(path, open_flags);
	if (fd < 0)
		ksft_exit_fail_msg("open %s: %s\n", path, strerror(errno));
	unlink(path);
	return fd;
}

static inline uint8_t *mmap_or_fail(int prot, int flags, int fd)
{
	uint8_t *p = mmap(NULL, MAPPING_SIZE, prot, flags, fd, 0);

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	return p;
}

/* Map @m as its row says and do what the parent does before fork. */
static inline void map_one(struct mapping *m)
{
	size_t ps = page_size(), i;
	volatile uint8_t sum = 0;
	int fd, id;

	switch (m->kind) {
	case PRIVATE_ANON:
		m->addr = mmap_or_fail(PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1);
		break;
	case SHARED_ANON:
		m->addr = mmap_or_fail(PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1);
		break;
	case SYSV_SHM:
		id = shmget(IPC_PRIVATE, MAPPING_SIZE, IPC_CREAT | 0600);
		if (id < 0)
			ksft_exit_fail_msg("shmget: %s\n", strerror(errno));
		m->addr = shmat(id, NULL, 0);
		if (m->addr == (void *)-1)
			ksft_exit_fail_msg("shmat: %s\n", strerror(errno));
		shmctl(id, IPC_RMID, NULL);
		break;
	case SHARED_FILE:
	case REMAPPED_FILE:
		fd = tmp_file("shared", O_RDWR, 0600);
		m->addr = mmap_or_fail(PROT_READ | PROT_WRITE, MAP_SHARED, fd);
		close(fd);
		break;
	case SHARED_FILE_RDONLY:
		fd = tmp_file("rdonly", O_RDONLY, 0444);
		m->addr = mmap_or_fail(PROT_READ, MAP_SHARED, fd);
		close(fd);
		break;
	case PRIVATE_FILE:
		fd = tmp_file("private", O_RDWR, 0600);
		m->addr = mmap_or_fail(PROT_READ | PROT_WRITE, MAP_PRIVATE, fd);
		close(fd);
		break;
	}
	if (m->kind == REMAPPED_FILE)
		for (i = 0; i < MAPPING_PAGES; i++)
			if (remap_file_pages(m->addr + i * ps, ps, 0,
					     MAPPING_PAGES - 1 - i, 0))
				ksft_exit_fail_msg("remap_file_pages: %s\n",
						   strerror(errno));
	if (m->access == WRITES)
		fill(m->addr, PARENT_PATTERN, MAPPING_SIZE);
	else if (m->access == READS)
		for (i = 0; i < MAPPING_SIZE; i += ps)
			sum += m->addr[i];
	if (m->advice && madvise(m->addr, MAPPING_SIZE, m->advice))
		ksft_exit_fail_msg("madvise: %s\n", strerror(errno));
	if (m->advice == MADV_PAGEOUT &&
	    swapped_pages(m->addr, MAPPING_SIZE) != MAPPING_PAGES)
		ksft_exit_skip("MADV_PAGEOUT left pages in memory: no swap?\n");
	if (m->mlocked && mlock(m->addr, MAPPING_SIZE))
		ksft_exit_fail_msg("mlock: %s\n", strerror(errno));
}

/* The parent's bytes are still its own: what it wrote or the file's. */
static inline bool parent_intact(const struct mapping *m)
{
	size_t i;

	for (i = 0; i < MAPPING_SIZE; i++) {
		uint8_t want = m->access == WRITES ?
			pattern_byte(PARENT_PATTERN, i) :
			m->child_sees == ZEROES ? 0 : expected_byte(m, i);

		if (m->addr[i] != want)
			return false;
	}
	return true;
}

/* Is @addr mapped at all in this process? (msync() fails with ENOMEM.) */
static inline bool is_mapped(const void *addr)
{
	return !msync((void *)((uintptr_t)addr & ~(page_size() - 1)),
		      page_size(), MS_ASYNC) || errno != ENOMEM;
}

/*
 * In the child: what fork gave it. Returns NULL if right, else what is
 * wrong. Reads the whole mapping, so it costs the child its faults.
 */
static inline const char *child_check(const struct mapping *m, long *faults)
{
	size_t i;
	long before;

	*faults = 0;
	if (m->child_sees == UNMAPPED)
		return is_mapped(m->addr) ? "MADV_DONTFORK vma is in the child" :
					    NULL;
	if (!is_mapped(m->addr))
		return "vma missing in the child";
	if (m->mlocked && proc_value("/proc/self/status", "VmLck") != 0)
		return "the child inherited VM_LOCKED (VmLck != 0)";
	before = minor_faults();
	before = minor_faults();
	for (i = 0; i < MAPPING_SIZE; i++)
		if (m->addr[i] != expected_byte(m, i))
			return "wrong bytes in the child";
	*faults = minor_faults() - before;
	return NULL;
}

#endif /* FORKLAB_MAPPINGS_H */
