// SPDX-License-Identifier: GPL-2.0
/*
 * pinned: fork with anonymous pages pinned for I/O.
 *
 * io_uring's IORING_REGISTER_BUFFERS pins a buffer's pages (FOLL_PIN |
 * FOLL_LONGTERM) so the kernel can read into them at any time. fork must
 * not share such a page with the child: if it did, the parent's next
 * write would COW the parent onto a new page, and I/O into the pinned
 * one would land in memory only the child still maps (CVE-2020-29374;
 * 70e806e4e645 copies pinned anon pages at fork instead).
 *
 * Checked through /proc/self/pagemap pfns (root only): right after fork,
 * an unpinned page is the same page in both processes (the control, so
 * that the test can tell), a pinned page is a different one in the child,
 * and after the parent writes, its page is still the pinned one.
 *
 * The child's early-COW copy takes the child's vma protection: a pinned
 * page of a vma made PROT_READ after pinning is copied read-only, and the
 * child's write to it raises SIGSEGV.
 */
#include <signal.h>
#include <sys/mman.h>

#include "forklab.h"

#define PAGES	4

struct child_view {
	unsigned long pfn[PAGES];
	bool bytes_ok;
};

/* Fork; the child reports its pfns of @buf and whether it read @seed. */
static struct child_view fork_and_look(uint8_t *buf, uint8_t seed)
{
	size_t ps = page_size(), i;
	struct child_view view = { .bytes_ok = true };
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0) {
		for (i = 0; i < PAGES; i++)
			view.pfn[i] = page_pfn(buf + i * ps);
		for (i = 0; i < PAGES * ps; i++)
			if (buf[i] != seed)
				view.bytes_ok = false;
		_exit(write(fds[1], &view, sizeof(view)) != sizeof(view));
	}
	close(fds[1]);
	if (!read_report(fds[0], &view, sizeof(view)) || wait_child(pid))
		ksft_exit_fail_msg("no report from the child\n");
	close(fds[0]);
	return view;
}

/*
 * The early-COW copy of a pinned page is mapped as the child's vma allows:
 * copy_present_page() gives it maybe_mkwrite(pte_mkdirty(pte)), writable
 * only with VM_WRITE. Pinned (FOLL_WRITE), then mprotect(PROT_READ), the
 * child's copy must be read-only: its write raises SIGSEGV. A fork that
 * mapped the copy writable whatever the vma allowed, as hugetlb's did
 * (4eae4efa2c29, fixed by d8fd84dd4ce7), lets the child's write through
 * into a PROT_READ mapping. The child's pfn must differ from the
 * parent's: a child that shared the parent's page got no copy, its
 * SIGSEGV would be the vma's alone, and the row would prove nothing.
 */
static void pinned_read_only(void)
{
	const char *desc = "pinned, PROT_READ: the child's copy is read-only";
	unsigned long pfn, child_pfn = 0;
	size_t ps = page_size();
	volatile uint8_t *v;
	int ring, status, fds[2];
	uint8_t *p;
	pid_t pid;

	row_begin("%s", desc);
	p = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(p, 0x5a, ps);
	ring = io_uring_pin(p, ps);
	if (ring < 0)
		ksft_exit_fail_msg("%s: io_uring: %s\n", desc, strerror(errno));
	/* After the pin: FOLL_LONGTERM may migrate it out of ZONE_MOVABLE */
	pfn = page_pfn(p);
	if (mprotect(p, ps, PROT_READ))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	if (pipe(fds))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork_or_fail();
	if (pid == 0) {
		child_pfn = page_pfn(p);
		if (write(fds[1], &child_pfn, sizeof(child_pfn)) !=
		    sizeof(child_pfn) || p[0] != 0x5a)
			_exit(2);
		v = p;
		v[0] = 0xc3;
		_exit(0);
	}
	close(fds[1]);
	if (!read_report(fds[0], &child_pfn, sizeof(child_pfn)))
		child_pfn = 0;
	close(fds[0]);
	status = wait_child(pid);
	if (!child_pfn || child_pfn == pfn)
		ksft_print_msg("%s: no early-COW copy: pfn %#lx, parent's %#lx\n",
			       desc, child_pfn, pfn);
	if (status != 128 + SIGSEGV)
		ksft_print_msg("%s: the child's write %s (status %d)\n", desc,
			       status == 0 ? "succeeded" : "ended otherwise",
			       status);
	ksft_test_result(child_pfn && child_pfn != pfn &&
			 status == 128 + SIGSEGV, "%s\n", desc);
	close(ring);
	munmap(p, ps);
}

int main(void)
{
	size_t ps = page_size(), i, shared = 0, copied = 0, kept = 0;
	unsigned long pfn[PAGES];
	struct child_view view;
	uint8_t *buf;
	int ring;

	ksft_print_header();
	ksft_set_plan(5);

	buf = mmap(NULL, PAGES * ps, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memset(buf, 0x5a, PAGES * ps);
	for (i = 0; i < PAGES; i++)
		pfn[i] = page_pfn(buf + i * ps);
	if (!pfn[0])
		ksft_exit_skip("pagemap shows no pfns: not root\n");

	row_begin("unpinned: the child shares all %d pages", PAGES);
	view = fork_and_look(buf, 0x5a);
	for (i = 0; i < PAGES; i++)
		shared += view.pfn[i] == pfn[i];
	ksft_test_result(shared == PAGES && view.bytes_ok,
			 "unpinned: the child shares all %d pages (%zu)\n",
			 PAGES, shared);

	ring = io_uring_pin(buf, PAGES * ps);
	if (ring < 0)
		ksft_exit_skip("io_uring: %s: no pinning path (CONFIG_IO_URING)\n",
			       strerror(errno));

	row_begin("pinned: the child got its own copy of all %d pages", PAGES);
	view = fork_and_look(buf, 0x5a);
	for (i = 0; i < PAGES; i++)
		copied += view.pfn[i] && view.pfn[i] != pfn[i];
	ksft_test_result(copied == PAGES,
			 "pinned: the child got its own copy of all %d pages (%zu)\n",
			 PAGES, copied);
	ksft_test_result(view.bytes_ok, "pinned: the child reads the parent's bytes\n");

	memset(buf, 0x3c, PAGES * ps);
	for (i = 0; i < PAGES; i++)
		kept += page_pfn(buf + i * ps) == pfn[i];
	ksft_test_result(kept == PAGES,
			 "pinned: after writing, the parent still maps the pinned pages (%zu of %d)\n",
			 kept, PAGES);

	syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0);
	close(ring);
	pinned_read_only();
	ksft_finished();
}
