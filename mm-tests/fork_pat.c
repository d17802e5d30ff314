// SPDX-License-Identifier: GPL-2.0
/*
 * fork_pat: x86 PAT's memory-type reservation of a pfnmap of device
 * memory, at fork (the x86_64 target: UML has no PAT).
 *
 * remap_pfn_range() of memory that is not RAM reserves its memory type
 * (track_pfn_remap(): a reservation in PAT's memtype tree, one line of
 * /sys/kernel/debug/x86/pat_memtype_list) and marks the vma VM_PAT
 * (smaps' VmFlags "ar"). A VM_PFNMAP vma is always copied at fork
 * (vma_needs_copy()), and copy_page_range() reserves the range again for
 * the child (track_pfn_copy(), which sets the child's VM_PAT); the child's
 * exit frees that reservation (untrack_pfn()), the parent's stays. For
 * RAM, as the other pfnmap rows map (KUnit's), PAT keeps no reservation
 * and none of this shows. A fork that fails after the reservation must
 * free it: museum exhibit 28, KUnit's dup_mm_fault_injection.
 *
 * The pfnmap: /dev/mem at PFNMAP_PHYS, a stretch of the PCI window no
 * device of the QEMU guest claims (not RAM, not claimed exclusively:
 * STRICT_DEVMEM allows it; museum/pat_fork_fail_nth.c maps the same).
 *
 * Each row checks both sides: with the child alive, and after it.
 *
 *   row                                 a wrong kernel
 *   1 MAP_SHARED                        the child's copy not reserved
 *                                       (one line, not two), reserved with
 *                                       another type, or its vma without
 *                                       VM_PAT; its exit freeing the
 *                                       parent's reservation (no line
 *                                       left) or not its own (two)
 *   2 MAP_PRIVATE (a COW pfnmap), its   the same for a private vma, whose
 *     second page written               written page is an anon page the
 *                                       child shares: the child reads the
 *                                       parent's bytes there, device memory
 *                                       on the first
 *   3 MAP_PRIVATE, its first page       fork passes: PAT takes the range and
 *     written                           its type from the first pte, an anon
 *                                       page's now, so fork must fail
 *                                       (get_pat_info()'s -EINVAL, which
 *                                       copy_mm() makes -ENOMEM; 04c35ab3bdae:
 *                                       before it, PAT took the anon page's
 *                                       RAM for the range, and a munmap()
 *                                       left the range reserved), reserving
 *                                       nothing
 */
#include <sys/mman.h>

#include "forklab.h"

#define DEVMEM		"/dev/mem"
#define PFNMAP_PHYS	0x50000000UL
#define PFNMAP_PAGES	16UL
#define WRITTEN_BYTE	0x3c
#define TAINTED		"/proc/sys/kernel/tainted"
#define TAINT_WARN	(1UL << 9)

struct pat_case {
	const char *desc;
	bool private;
	long written;		/* the page written before fork, -1: none */
};

static const struct pat_case pat_cases[] = {
	{ .desc = "MAP_SHARED device memory: the child reserves its memory type again, VM_PAT, frees it at exit",
	  .written = -1 },
	{ .desc = "MAP_PRIVATE device memory, page 1 written: the child reserves it again and shares the page",
	  .private = true, .written = 1 },
	{ .desc = "MAP_PRIVATE device memory, page 0 written: fork fails, nothing reserved",
	  .private = true, .written = 0 },
};

/* What the child saw, its parent waiting. */
struct child_view {
	long reservations;
	char type[32];
	int pat;		/* vma_has_flag() of "ar": VM_PAT */
	bool bytes_right;
};

static unsigned long pfnmap_size(void)
{
	return PFNMAP_PAGES * page_size();
}

static long reservations(char *type)
{
	return pat_reservations(PFNMAP_PHYS, pfnmap_size(), type);
}

static unsigned long tainted(void)
{
	return read_number(TAINTED);
}

/*
 * Pages 0 and 1 read as before fork: the written page is the parent's
 * anon copy (its byte), the other device memory.
 */
static bool reads_as_before(const uint8_t *p, const struct pat_case *row,
			    uint8_t device_byte)
{
	long i;

	for (i = 0; i < 2; i++)
		if (p[i * page_size()] != (i == row->written ? WRITTEN_BYTE : device_byte))
			return false;
	return true;
}

/* The child: what it sees, then it waits for the parent's word. */
static void child(uint8_t *p, const struct pat_case *row, uint8_t device_byte,
		  int report, int go)
{
	struct child_view v = {
		.reservations = reservations(v.type),
		.pat = vma_has_flag(p, "ar"),
		.bytes_right = reads_as_before(p, row, device_byte),
	};

	if (write(report, &v, sizeof(v)) != sizeof(v))
		_exit(1);
	hear(go);
	_exit(0);
}

static void run_row(int fd, const struct pat_case *row)
{
	char type[32] = "";
	unsigned long taint = tainted();
	long before, after;
	struct child_view v = {};
	struct lockstep ls;
	uint8_t device_byte;
	bool ok = true;
	int report[2], err;
	uint8_t *p;
	pid_t pid;

	row_begin("%s", row->desc);
	p = mmap(NULL, pfnmap_size(), PROT_READ | (row->private ? PROT_WRITE : 0),
		 row->private ? MAP_PRIVATE : MAP_SHARED, fd, PFNMAP_PHYS);
	if (p == MAP_FAILED)
		ksft_exit_skip("mmap %s at %#lx: %s\n", DEVMEM, PFNMAP_PHYS,
			       strerror(errno));
	if (vma_has_flag(p, "pf") != 1 || vma_has_flag(p, "ar") != 1)
		ksft_exit_skip("%s is not a VM_PFNMAP mapping with VM_PAT here\n",
			       DEVMEM);
	device_byte = p[2 * page_size()];
	if (row->written >= 0)
		p[row->written * page_size()] = WRITTEN_BYTE;	/* a COW: an anon page */
	before = reservations(type);

	lockstep_init(&ls);
	if (pipe(report))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork_flushed();
	err = errno;
	if (pid == 0)
		child(p, row, device_byte, report[1], ls.to_child[0]);
	if (pid > 0) {
		if (!read_report(report[0], &v, sizeof(v)))
			ksft_exit_fail_msg("%s: no report from the child\n", row->desc);
		say(ls.to_child[1]);
		if (wait_child(pid))
			ksft_exit_fail_msg("%s: the child failed\n", row->desc);
	}
	after = reservations(NULL);

	if (row->written == 0) {
		if (pid >= 0 || err != ENOMEM) {
			ksft_print_msg("%s: fork %s, want ENOMEM\n", row->desc,
				       pid >= 0 ? "passed" : strerror(err));
			ok = false;
		}
	} else if (pid < 0) {
		ksft_print_msg("%s: fork failed: %s\n", row->desc, strerror(err));
		ok = false;
	} else {
		if (v.reservations != 2 || strcmp(v.type, type)) {
			ksft_print_msg("%s: %ld reservation(s) with the child (its %s), want 2 of %s\n",
				       row->desc, v.reservations, v.type, type);
			ok = false;
		}
		if (v.pat != 1) {
			ksft_print_msg("%s: the child's vma has no VM_PAT\n", row->desc);
			ok = false;
		}
		if (!v.bytes_right) {
			ksft_print_msg("%s: the child reads other bytes than the parent's\n",
				       row->desc);
			ok = false;
		}
	}
	if (before != 1 || after != 1 || vma_has_flag(p, "ar") != 1 ||
	    !reads_as_before(p, row, device_byte)) {
		ksft_print_msg("%s: the parent's reservation: %ld before fork (%s), %ld after; its vma %s VM_PAT\n",
			       row->desc, before, type, after,
			       vma_has_flag(p, "ar") == 1 ? "has" : "lost");
		ok = false;
	}
	if (tainted() & ~taint & TAINT_WARN) {
		ksft_print_msg("%s: the kernel warned (see the console)\n", row->desc);
		ok = false;
	}
	close(report[0]);
	close(report[1]);
	lockstep_close(&ls);
	munmap(p, pfnmap_size());
	if (reservations(NULL))
		ksft_exit_fail_msg("%s: the range is still reserved after munmap()\n",
				   row->desc);
	row_result(ok);
}

int main(void)
{
	size_t i;
	int fd;

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(pat_cases));
	ksft_print_msg("fork_copy=%s\n", fork_copy_policy_name());
	if (on_uml())
		ksft_exit_skip("UML has no PAT\n");
	fd = open(DEVMEM, O_RDWR | O_SYNC);
	if (fd < 0)
		ksft_exit_skip("%s: %s (CONFIG_DEVMEM?)\n", DEVMEM, strerror(errno));
	if (access(PAT_MEMTYPE_LIST, R_OK))
		ksft_exit_skip("%s: %s (x86 PAT off?)\n", PAT_MEMTYPE_LIST,
			       strerror(errno));
	for (i = 0; i < ARRAY_SIZE(pat_cases); i++)
		run_row(fd, &pat_cases[i]);
	close(fd);
	ksft_finished();
}
