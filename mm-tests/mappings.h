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

enum mapping_kind {
	PRIVATE_ANON, SYSV_SHM, SHARED_ANON, SHARED_FILE, SHARED_FILE_RDONLY,
	PRIVATE_FILE, REMAPPED_FILE,
};
enum parent_access {
	NO_ACCESS, READS, WRITES, WRITES_HALF,
	WRITES_PAIRS,	/* pages 2k and 2k + 1 both get the parent's page k */
};
enum child_view {
	PARENT_BYTES, FILE_BYTES, ZEROES, UNMAPPED, REVERSED_FILE,
	PARENT_THEN_FILE,	/* the first half the parent's, the rest the file's */
	PARENT_THEN_ZEROES,	/* the first half the parent's, the rest zeros */
	PARENT_PAIRS,		/* as WRITES_PAIRS wrote them */
};
/* What the parent does to the vma after writing it, before fork. */
enum reshape {
	AS_MAPPED,
	MOVED,		/* mremap() to another address: vm_pgoff no longer addr */
	SPLIT,		/* mprotect() of the middle: three vmas, one anon_vma */
	DOFORK_AGAIN,	/* MADV_DONTFORK, then MADV_DOFORK */
};

struct mapping {
	const char *desc;
	enum mapping_kind kind;
	enum parent_access access;
	int advice;			/* madvise() before fork, or 0 */
	enum reshape reshape;
	bool mlocked;
	bool lock_on_fault;		/* mlock2(MLOCK_ONFAULT), not mlock() */
	bool lazy_copies;		/* upstream copies it (anon_vma) */
	enum child_view child_sees;
	uint32_t id;			/* set up by map_one(): desc's hash */
	uint8_t *addr;			/* set up by map_one() */
	size_t parent_present;		/* ptes right before fork */
};

/*
 * The table. A row's comment says what the child would see if fork got
 * it wrong.
 */
static const struct mapping mapping_table[] = {
	/* Skipped, the child would read zeros where the parent wrote. */
	{ .desc = "private anon, written",
	  .kind = PRIVATE_ANON,
	  .access = WRITES,
	  .lazy_copies = true,
	  .child_sees = PARENT_BYTES },
	/* Nothing to copy: a fault gives the child the zero page. */
	{ .desc = "private anon, never touched",
	  .kind = PRIVATE_ANON,
	  .access = NO_ACCESS,
	  .child_sees = ZEROES },
	/*
	 * Read whole, half written: written pages and zero-page ptes in one
	 * copied vma. The zero page is in no rss counter and is never
	 * COW-shared: a fork that counted it, or gave the child the parent's
	 * page for it, shows in the child's figures or bytes.
	 */
	{ .desc = "private anon, half written, half read (zero page)",
	  .kind = PRIVATE_ANON,
	  .access = WRITES_HALF,
	  .lazy_copies = true,
	  .child_sees = PARENT_THEN_ZEROES },
	/* Ray Fucillo's case: faults bring the same shm pages back. */
	{ .desc = "SysV shm, written",
	  .kind = SYSV_SHM,
	  .access = WRITES,
	  .child_sees = PARENT_BYTES },
	{ .desc = "MAP_SHARED anon, written",
	  .kind = SHARED_ANON,
	  .access = WRITES,
	  .child_sees = PARENT_BYTES },
	{ .desc = "MAP_SHARED tmpfs file, written",
	  .kind = SHARED_FILE,
	  .access = WRITES,
	  .child_sees = PARENT_BYTES },
	/* VM_MAYSHARE without VM_SHARED: skipped like any shared mapping. */
	{ .desc = "MAP_SHARED PROT_READ, read-only file",
	  .kind = SHARED_FILE_RDONLY,
	  .access = READS,
	  .child_sees = FILE_BYTES },
	/* Every page is still the page cache's. */
	{ .desc = "MAP_PRIVATE file, read",
	  .kind = PRIVATE_FILE,
	  .access = READS,
	  .child_sees = FILE_BYTES },
	/* Skipped (Andi Kleen, 2005), the child would read the file. */
	{ .desc = "MAP_PRIVATE file, written",
	  .kind = PRIVATE_FILE,
	  .access = WRITES,
	  .lazy_copies = true,
	  .child_sees = PARENT_BYTES },
	/*
	 * Read whole, half written: an anon_vma, so fork copies every pte,
	 * half of them mapping the tmpfs file's page-cache pages (shmem:
	 * the child's RssShmem). A fork that counted those in MM_FILEPAGES
	 * would get the child's RssFile and RssShmem wrong.
	 */
	{ .desc = "MAP_PRIVATE tmpfs file, half written",
	  .kind = PRIVATE_FILE,
	  .access = WRITES_HALF,
	  .lazy_copies = true,
	  .child_sees = PARENT_THEN_FILE },
	/* Kept, the child could read what the parent hid from it. */
	{ .desc = "MADV_DONTFORK",
	  .kind = PRIVATE_ANON,
	  .access = WRITES,
	  .advice = MADV_DONTFORK,
	  .lazy_copies = true,
	  .child_sees = UNMAPPED },
	/* Copied, the child would read the parent's data, not zeros. */
	{ .desc = "MADV_WIPEONFORK",
	  .kind = PRIVATE_ANON,
	  .access = WRITES,
	  .advice = MADV_WIPEONFORK,
	  .lazy_copies = true,
	  .child_sees = ZEROES },
	/*
	 * Paged out: the data lives in swap, its address only in the
	 * parent's ptes. Skipped, the child would read zeros; fork copies
	 * the swap entries (copy_nonpresent_pte()), not pages.
	 */
	{ .desc = "private anon, paged out to swap",
	  .kind = PRIVATE_ANON,
	  .access = WRITES,
	  .advice = MADV_PAGEOUT,
	  .lazy_copies = true,
	  .child_sees = PARENT_BYTES },
	/* VM_LOCKED inherited, the child would pin memory it never locked. */
	{ .desc = "mlocked private anon",
	  .kind = PRIVATE_ANON,
	  .access = WRITES,
	  .mlocked = true,
	  .lazy_copies = true,
	  .child_sees = PARENT_BYTES },
	/*
	 * The same with VM_LOCKONFAULT: a dup_mmap() that cleared only
	 * VM_LOCKED would leave the child locking each page it faults in.
	 */
	{ .desc = "mlock2(MLOCK_ONFAULT) private anon",
	  .kind = PRIVATE_ANON,
	  .access = WRITES,
	  .mlocked = true,
	  .lock_on_fault = true,
	  .lazy_copies = true,
	  .child_sees = PARENT_BYTES },
	/*
	 * Moved by mremap(): its anon pages keep their index (vm_pgoff of
	 * the old address), which rmap and the child's faults must use; a
	 * fork that copied by the new address would give the child the
	 * wrong pages or none.
	 */
	{ .desc = "private anon, moved by mremap()",
	  .kind = PRIVATE_ANON,
	  .access = WRITES,
	  .reshape = MOVED,
	  .lazy_copies = true,
	  .child_sees = PARENT_BYTES },
	/*
	 * Split in three by mprotect() of the middle pages: three vmas on
	 * one anon_vma. A fork that copied only the first would leave the
	 * child zeros (or nothing) in the rest.
	 */
	{ .desc = "private anon, split by mprotect()",
	  .kind = PRIVATE_ANON,
	  .access = WRITES,
	  .reshape = SPLIT,
	  .lazy_copies = true,
	  .child_sees = PARENT_BYTES },
	/*
	 * MADV_DOFORK undoes MADV_DONTFORK: a kernel that kept
	 * VM_DONTCOPY would leave the child without the vma.
	 */
	{ .desc = "MADV_DONTFORK, then MADV_DOFORK",
	  .kind = PRIVATE_ANON,
	  .access = WRITES,
	  .advice = MADV_DONTFORK,
	  .reshape = DOFORK_AGAIN,
	  .lazy_copies = true,
	  .child_sees = PARENT_BYTES },
	/*
	 * KSM: each pair of equal pages merged into one write-protected
	 * KSM page before fork (MADV_MERGEABLE; ksm_merge()). Fork shares
	 * it like any anon page; a fork that handed the child a KSM page as
	 * its own exclusive one would let the child's write reach the
	 * parent and the pair's other page. ksm_fork() enters the child in
	 * ksmd's list with no merged pages of its own: fork_mappings' child
	 * checks its ksm_stat and has its own pairs merged.
	 */
	{ .desc = "KSM-merged private anon",
	  .kind = PRIVATE_ANON,
	  .access = WRITES_PAIRS,
	  .advice = MADV_MERGEABLE,
	  .lazy_copies = true,
	  .child_sees = PARENT_PAIRS },
	/*
	 * remap_file_pages(): page i shows file page N-1-i. If the child
	 * refaulted by linear offsets, it would read the file in order.
	 */
	{ .desc = "remap_file_pages, reversed",
	  .kind = REMAPPED_FILE,
	  .access = READS,
	  .child_sees = REVERSED_FILE },
};

#define NR_MAPPINGS	ARRAY_SIZE(mapping_table)

/* A row's id: its description's FNV-1a hash (rows are told by it). */
static inline uint32_t mapping_id(const char *desc)
{
	uint32_t h = 2166136261u;

	while (*desc)
		h = (h ^ (uint8_t)*desc++) * 16777619u;
	return h;
}

/* Byte @i of page @page of mapping @id as @side wrote it (page_word()). */
static inline uint8_t page_byte(enum side side, uint32_t id, size_t page,
				size_t i)
{
	return page_word(side, id, page, i / 8) >> (8 * (i % 8));
}

/* Fill @len bytes (whole pages) from page @first of mapping @id as @side. */
static inline void fill(uint8_t *p, enum side side, uint32_t id,
			size_t first, size_t len)
{
	fill_words(p - first * page_size(), side, id, first, len / page_size());
}

/* Pages 2k and 2k + 1 of @p both get page k's bytes of @side. */
static inline void fill_pairs(uint8_t *p, enum side side, uint32_t id)
{
	size_t ps = page_size(), i;

	for (i = 0; i < MAPPING_PAGES; i++)
		fill(p + i * ps, side, id, i / 2, ps);
}

/* The bytes a child must read at offset @i of the mapping. */
static inline uint8_t expected_byte(const struct mapping *m, size_t i)
{
	size_t ps = page_size(), page = i / ps;

	switch (m->child_sees) {
	case PARENT_BYTES:
		return page_byte(PARENT_SIDE, m->id, page, i % ps);
	case FILE_BYTES:
		return page_byte(FILE_SIDE, m->id, page, i % ps);
	case REVERSED_FILE:
		return page_byte(FILE_SIDE, m->id, MAPPING_PAGES - 1 - page,
				 i % ps);
	case PARENT_THEN_FILE:
		return page_byte(page < MAPPING_PAGES / 2 ? PARENT_SIDE : FILE_SIDE,
				 m->id, page, i % ps);
	case PARENT_THEN_ZEROES:
		return page < MAPPING_PAGES / 2 ?
		       page_byte(PARENT_SIDE, m->id, page, i % ps) : 0;
	case PARENT_PAIRS:
		return page_byte(PARENT_SIDE, m->id, page / 2, i % ps);
	default:
		return 0;
	}
}

static inline bool is_shared(const struct mapping *m)
{
	return m->kind != PRIVATE_ANON && m->kind != PRIVATE_FILE;
}

/* The pages reshape() made read-only (SPLIT's middle), by index. */
#define SPLIT_FIRST_RO	2
#define SPLIT_RO_PAGES	2

/* May the child write page @page of @m? */
static inline bool page_writable(const struct mapping *m, size_t page)
{
	if (m->kind == SHARED_FILE_RDONLY || m->child_sees == UNMAPPED)
		return false;
	return m->reshape != SPLIT || page < SPLIT_FIRST_RO ||
	       page >= SPLIT_FIRST_RO + SPLIT_RO_PAGES;
}

/* Does fork copy this mapping's ptes under the running policy? */
static inline bool fork_copies(const struct mapping *m)
{
	if ((m->advice == MADV_DONTFORK && m->reshape != DOFORK_AGAIN) ||
	    m->advice == MADV_WIPEONFORK)
		return false;
	return m->lazy_copies || policy_copies_skipped(is_shared(m));
}

/* A /tmp file of mapping @id's FILE_SIDE bytes, reopened @open_flags. */
static inline int tmp_file(const char *name, uint32_t id, int open_flags,
			   mode_t mode)
{
	uint8_t *buf = malloc(MAPPING_SIZE);
	int fd = tmp_fd(name, 0), reopened;
	char path[64];

	if (!buf)
		ksft_exit_fail_msg("malloc: %s\n", strerror(errno));
	fill(buf, FILE_SIDE, id, 0, MAPPING_SIZE);
	if (write(fd, buf, MAPPING_SIZE) != (ssize_t)MAPPING_SIZE)
		ksft_exit_fail_msg("write %s file: %s\n", name, strerror(errno));
	free(buf);
	if (fchmod(fd, mode))
		ksft_exit_fail_msg("chmod %s file: %s\n", name, strerror(errno));
	/* the file is unlinked: open it again through its fd */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	reopened = open(path, open_flags);
	if (reopened < 0)
		ksft_exit_fail_msg("open %s: %s\n", path, strerror(errno));
	close(fd);
	return reopened;
}

static inline uint8_t *mmap_or_fail(int prot, int flags, int fd)
{
	uint8_t *p = mmap(NULL, MAPPING_SIZE, prot, flags, fd, 0);

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	return p;
}

/*
 * Move, split or re-advise @m as its row says (the data stays):
 *
 *   MOVED:  [ old, written ] ...... [ reserved, PROT_NONE ]
 *           mremap(MREMAP_FIXED) -> [ the same pages ]   (old is gone)
 *   SPLIT:  [ rw | rw | r- | r- | rw | rw | rw | rw ]   (three vmas)
 */
static inline void reshape(struct mapping *m)
{
	size_t ps = page_size();
	uint8_t *reserve, *moved;

	switch (m->reshape) {
	case AS_MAPPED:
		break;
	case MOVED:
		reserve = mmap_or_fail(PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
		moved = mremap(m->addr, MAPPING_SIZE, MAPPING_SIZE,
			       MREMAP_MAYMOVE | MREMAP_FIXED, reserve);
		if (moved == MAP_FAILED)
			ksft_exit_fail_msg("mremap: %s\n", strerror(errno));
		m->addr = moved;
		break;
	case SPLIT:
		if (mprotect(m->addr + SPLIT_FIRST_RO * ps, SPLIT_RO_PAGES * ps,
			     PROT_READ))
			ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
		break;
	case DOFORK_AGAIN:
		if (madvise(m->addr, MAPPING_SIZE, MADV_DOFORK))
			ksft_exit_fail_msg("madvise: %s\n", strerror(errno));
		break;
	}
}

/* Map @m as its row says and do what the parent does before fork. */
static inline void map_one(struct mapping *m)
{
	size_t ps = page_size(), i;
	volatile uint8_t sum = 0;
	int fd, id;

	m->id = mapping_id(m->desc);
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
		fd = tmp_file("shared", m->id, O_RDWR, 0600);
		m->addr = mmap_or_fail(PROT_READ | PROT_WRITE, MAP_SHARED, fd);
		close(fd);
		break;
	case SHARED_FILE_RDONLY:
		fd = tmp_file("rdonly", m->id, O_RDONLY, 0444);
		m->addr = mmap_or_fail(PROT_READ, MAP_SHARED, fd);
		close(fd);
		break;
	case PRIVATE_FILE:
		fd = tmp_file("private", m->id, O_RDWR, 0600);
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
	if (m->access == READS || m->access == WRITES_HALF)
		for (i = 0; i < MAPPING_SIZE; i += ps)
			sum += m->addr[i];
	if (m->access == WRITES)
		fill(m->addr, PARENT_SIDE, m->id, 0, MAPPING_SIZE);
	else if (m->access == WRITES_HALF)
		fill(m->addr, PARENT_SIDE, m->id, 0, MAPPING_SIZE / 2);
	else if (m->access == WRITES_PAIRS)
		fill_pairs(m->addr, PARENT_SIDE, m->id);
	if (m->advice && madvise(m->addr, MAPPING_SIZE, m->advice))
		ksft_exit_fail_msg("madvise: %s\n", strerror(errno));
	reshape(m);
	if (m->advice == MADV_MERGEABLE && ksm_merge(MAPPING_PAGES) != MAPPING_PAGES)
		ksft_exit_fail_msg("%s: ksmd did not merge the pairs\n", m->desc);
	if (m->advice == MADV_PAGEOUT &&
	    swapped_pages(m->addr, MAPPING_SIZE) != MAPPING_PAGES)
		ksft_exit_skip("MADV_PAGEOUT left pages in memory: no swap?\n");
	if (m->mlocked && (m->lock_on_fault ?
			   mlock2(m->addr, MAPPING_SIZE, MLOCK_ONFAULT) :
			   mlock(m->addr, MAPPING_SIZE)))
		ksft_exit_fail_msg("mlock: %s\n", strerror(errno));
	/* else the child's checks of VM_LOCKED_MASK could not fail */
	if (m->mlocked && (vma_has_flag(m->addr, "lo") != 1 ||
			   (smaps_shows_lock_on_fault() &&
			    vma_has_flag(m->addr, "lf") != m->lock_on_fault)))
		ksft_exit_fail_msg("%s: mlock() left other flags\n", m->desc);
}

/* The parent's bytes are still its own: what it wrote or the file's. */
static inline bool parent_intact(const struct mapping *m)
{
	size_t i;

	for (i = 0; i < MAPPING_SIZE; i++) {
		uint8_t want = m->access == WRITES ?
			page_byte(PARENT_SIDE, m->id, i / page_size(),
				  i % page_size()) :
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
	/* dup_mmap() clears VM_LOCKED; mm_init() zeroes locked_vm */
	if (m->mlocked && vma_has_flag(m->addr, "lo"))
		return "the child's vma kept VM_LOCKED (smaps VmFlags: lo)";
	if (m->mlocked && smaps_shows_lock_on_fault() &&
	    vma_has_flag(m->addr, "lf"))
		return "the child's vma kept VM_LOCKONFAULT (smaps VmFlags: lf)";
	if (m->mlocked && proc_value("/proc/self/status", "VmLck") != 0)
		return "the child starts with locked_vm (VmLck != 0)";
	/* ksm_fork(): the parent's merges are its rmap_items, not ours */
	if (m->advice == MADV_MERGEABLE &&
	    (ksm_merged_pages() != 0 ||
	     proc_value("/proc/self/ksm_stat", "ksm_rmap_items") != 0))
		return "the child starts with the parent's KSM figures (ksm_merging_pages, ksm_stat)";
	/*
	 * Count the mapping's faults only: expected_byte()'s first call
	 * reads a page of the program's own for the first time since fork
	 * (its switch's jump table), which costs a fault of its own under
	 * fork_copy=always (measured: 9 faults for 8 pages without this);
	 * the first minor_faults() may COW its stack.
	 */
	(void)expected_byte(m, 0);
	before = minor_faults();
	before = minor_faults();
	for (i = 0; i < MAPPING_SIZE; i++)
		if (m->addr[i] != expected_byte(m, i))
			return "wrong bytes in the child";
	*faults = minor_faults() - before;
	return NULL;
}

#endif /* FORKLAB_MAPPINGS_H */
