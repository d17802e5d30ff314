// SPDX-License-Identifier: GPL-2.0
/*
 * fork_mappings: one fork per mapping kind of mappings.h, as real
 * processes. Per kind, the child checks right after fork
 *
 *   - its present ptes there (/proc/self/pagemap): the parent's count if
 *     the running fork_copy= policy copies the kind, else 0;
 *   - the bytes (the parent's, the file's, zeros, or no vma at all);
 *   - its minor faults to read them: none when all ptes came with fork
 *     (on UML, one per copied page: see forklab.h);
 *   - that VM_LOCKED did not come along, and that swap entries did;
 *
 * then writes the whole mapping (a pattern unique to the mapping, the
 * page and the child), which the parent must read whole through a shared
 * mapping, and must not see a byte of through a private one. The
 * paged-out row is still in swap on both sides then: each swaps its
 * pages in, the child to write, the parent to read.
 */
#include "mappings.h"

static void check_child(const struct mapping *m)
{
	size_t present = present_pages(m->addr, MAPPING_SIZE);
	size_t want = fork_copies(m) ? m->parent_present : 0;
	const char *wrong;
	long faults;
	size_t i;

	if (m->child_sees != UNMAPPED && present != want) {
		ksft_print_msg("%s: child has %zu present ptes, want %zu\n",
			       m->desc, present, want);
		_exit(1);
	}
	/* Every page the parent had swapped out is a swap entry here too. */
	if (m->advice == MADV_PAGEOUT &&
	    swapped_pages(m->addr, MAPPING_SIZE) + present != MAPPING_PAGES) {
		ksft_print_msg("%s: child has %zu swap entries and %zu ptes of %d\n",
			       m->desc, swapped_pages(m->addr, MAPPING_SIZE),
			       present, MAPPING_PAGES);
		_exit(1);
	}
	wrong = child_check(m, &faults);
	if (wrong) {
		ksft_print_msg("%s: %s\n", m->desc, wrong);
		_exit(1);
	}
	if (m->child_sees != UNMAPPED &&
	    !faults_as_expected(faults, present, MAPPING_PAGES)) {
		ksft_print_msg("%s: %ld faults with %zu of %d ptes present\n",
			       m->desc, faults, present, MAPPING_PAGES);
		_exit(1);
	}
	for (i = 0; i < MAPPING_PAGES; i++)
		if (page_writable(m, i))
			fill(m->addr + i * page_size(), CHILD_SIDE, m->id, i,
			     page_size());
	/*
	 * ksm_fork() entered this mm in ksmd's list: its own pairs merge
	 * without a madvise() of its own. A fork that left it out (it is
	 * "best effort") leaves them apart.
	 */
	if (m->advice == MADV_MERGEABLE) {
		fill_pairs(m->addr, CHILD_SIDE, m->id);
		if (ksm_merge(MAPPING_PAGES) != MAPPING_PAGES) {
			ksft_print_msg("%s: ksmd did not merge the child's pairs\n",
				       m->desc);
			_exit(1);
		}
	}
	ksft_print_msg("%s: child: %zu ptes present, %ld faults to read %d pages\n",
		       m->desc, present, faults, MAPPING_PAGES);
	_exit(0);
}

/*
 * Does the parent read what it should after the child wrote the whole
 * mapping: the child's bytes through a shared mapping, its own through
 * a private one (parent_intact())? The paged-out row's pages come back
 * from swap on both sides here: the child's writes must not reach the
 * page the parent swaps in.
 */
static bool parent_right_after_child_wrote(const struct mapping *m)
{
	size_t ps = page_size(), i;

	if (!is_shared(m) || !page_writable(m, 0))
		return parent_intact(m);
	for (i = 0; i < MAPPING_SIZE; i++)
		if (m->addr[i] != page_byte(CHILD_SIDE, m->id, i / ps, i % ps)) {
			ksft_print_msg("%s: the parent reads %#x at %zu after the child wrote\n",
				       m->desc, m->addr[i], i);
			return false;
		}
	return true;
}

static void test_mapping(const struct mapping *row)
{
	struct mapping m = *row;
	pid_t pid;
	int rc;

	row_begin("%s (fork_copy=%s)", m.desc, fork_copy_policy_name());
	map_one(&m);
	m.parent_present = present_pages(m.addr, MAPPING_SIZE);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0)
		check_child(&m);
	rc = wait_child(pid);
	/* a swap entry the child's exit freed: the parent's fault retried */
	wait_limit(WAIT_LIMIT_S, "the parent's reads of its own pages");
	if (!rc && !parent_right_after_child_wrote(&m)) {
		ksft_print_msg("%s: the child's writes reached the parent, or did not\n",
			       m.desc);
		rc = 1;
	}
	wait_done();
	row_result(!rc);
	munlock(m.addr, MAPPING_SIZE);
	if (m.kind == SYSV_SHM)
		shmdt(m.addr);
	else
		munmap(m.addr, MAPPING_SIZE);
}

int main(void)
{
	size_t i;

	ksft_print_header();
	ksft_set_plan(NR_MAPPINGS);
	for (i = 0; i < NR_MAPPINGS; i++)
		test_mapping(&mapping_table[i]);
	ksft_finished();
}
