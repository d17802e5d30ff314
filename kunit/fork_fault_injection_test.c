// SPDX-License-Identifier: GPL-2.0
/*
 * forklab_fork_fault_injection: dup_mm()'s error paths. One parent maps
 * every row of forklab_fork's table (fork_test.c) at once, each in a page
 * table of its own (slot_addr()); then
 *
 *   dup_mm_fault_injection      fails the N-th fault-injection check of
 *                               dup_mm(), N = 1, 2, ... until a dup_mm()
 *                               makes fewer than N, and holds each
 *                               injection point, named by its call site,
 *                               to its rule (fail_nth_sites.h);
 *   anon_vma_clone_retry_fails  fails both of anon_vma_clone()'s tries,
 *                               which one fail-nth failure cannot.
 *
 * A failed fork must leave the parent as it was: its ptes, pages, page
 * references, rss, page tables, commit charge and anon_vma_chains. The
 * child of a tolerated failure must be that of a fork without one.
 *
 * Kconfig: FAULT_INJECTION_DEBUG_FS, FAILSLAB and FAIL_PAGE_ALLOC make
 * fork's allocations fail; FAULT_INJECTION_NTH_SITE (patches/0009) names
 * the site of each failure; FAULT_INJECTION_STACKTRACE_FILTER and
 * KALLSYMS confine failslab to anon_vma_clone().
 */

#include <kunit/test.h>
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/file.h>
#include <linux/kallsyms.h>
#include <linux/mm.h>
#include <linux/rmap.h>
#include <linux/swap.h>

#include "../internal.h"
#include "fail_nth_sites.h"
#include "forklab_mm.h"

/*
 * Fault injection. By default failslab and fail_page_alloc ignore exactly
 * the allocations fork makes (GFP_KERNEL may sleep; order 0; highmem), and
 * print a stack per failure. Make them eligible and quiet for this test;
 * put each knob back afterwards. There is no user space to write debugfs
 * from, so reach the values through the files' i_private, which is where
 * debugfs_create_bool() and friends keep a pointer to the variable.
 */

struct saved_knob {
	struct fail_nth_knob knob;	/* a copy: the caller's table may be on its stack */
	void *value;
	unsigned long old;
};

static unsigned long knob_swap(const struct fail_nth_knob *knob, void *p,
			       unsigned long value)
{
	unsigned long old;

	switch (knob->type) {
	case FAIL_NTH_BOOL:
		old = *(bool *)p;
		*(bool *)p = value;
		break;
	case FAIL_NTH_U32:
		old = *(u32 *)p;
		*(u32 *)p = value;
		break;
	default:
		old = *(unsigned long *)p;
		*(unsigned long *)p = value;
	}
	return old;
}

static void restore_knob(void *data)
{
	struct saved_knob *saved = data;

	knob_swap(&saved->knob, saved->value, saved->old);
}

static void set_fault_knob(struct kunit *test, const struct fail_nth_knob *knob)
{
	struct saved_knob *saved = kunit_kzalloc(test, sizeof(*saved), GFP_KERNEL);
	struct dentry *dir, *file;

	KUNIT_ASSERT_NOT_NULL(test, saved);
	dir = debugfs_lookup(knob->dir, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, dir, "debugfs %s", knob->dir);
	file = debugfs_lookup(knob->name, dir);
	dput(dir);
	KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, file, "debugfs %s/%s",
					 knob->dir, knob->name);
	saved->knob = *knob;
	saved->value = d_inode(file)->i_private;
	dput(file);
	saved->old = knob_swap(knob, saved->value, knob->value);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, restore_knob, saved));
}

/* What of the parent a failed fork must leave exactly as it was. */
struct parent_state {
	struct pte_census census[NR_FORK_CASES];
	unsigned int refs[NR_FORK_CASES][FORK_PAGES];
	s64 rss[NR_MM_COUNTERS];
	unsigned long pgtables_bytes;
	unsigned long pagetables;	/* NR_PAGETABLE: exact on !SMP */
	unsigned long committed;	/* what VM_ACCOUNT vmas charged */
	unsigned int avcs[NR_FORK_CASES];	/* see rmap_links() */
};

/*
 * The anon_vma_chains linked into the anon_vmas that the vma at @addr
 * hangs off: a failed anon_vma_clone() that leaves a chain of the child's
 * vma copy behind in one of them, which rmap would then walk into a
 * freed vma, raises the count.
 */
static unsigned int rmap_links(struct mm_struct *mm, unsigned long addr)
{
	struct anon_vma_chain *avc, *link;
	struct vm_area_struct *vma;
	unsigned int n = 0;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, addr);
	if (vma && vma->anon_vma) {
		anon_vma_lock_read(vma->anon_vma);
		list_for_each_entry(avc, &vma->anon_vma_chain, same_vma)
			anon_vma_interval_tree_foreach(link, &avc->anon_vma->rb_root,
						       0, ULONG_MAX)
				n++;
		anon_vma_unlock_read(vma->anon_vma);
	}
	mmap_read_unlock(mm);
	return n;
}

/*
 * Each row in a page table of its own: the child's copy of every copied
 * vma then allocates a pte table, which the injection fails in turn, so
 * that each vma's copy_page_range() fails once (a VM_PFNMAP one under x86
 * PAT must then undo track_pfn_copy(), dc84bc2aba85).
 *
 *   FORK_ADDR   + PMD_SIZE    + 2 * PMD_SIZE    ...
 *   |row 0|     |row 1|       |row 2|
 */
static unsigned long slot_addr(unsigned int i)
{
	return FORK_ADDR + i * PMD_SIZE;
}

static void snapshot(struct mm_struct *mm, struct parent_state *state)
{
	unsigned int i, j;

	/*
	 * A kthread's fput() is deferred to a workqueue; the last one of a
	 * shmem file (an earlier case's) unaccounts its size from the
	 * committed memory whenever that work runs. Run it now.
	 */
	flush_delayed_fput();
	lru_add_drain();
	for (i = 0; i < NR_FORK_CASES; i++) {
		state->census[i] = forklab_take_census(mm, slot_addr(i));
		for (j = 0; j < FORK_PAGES; j++)
			state->refs[i][j] = state->census[i].pages[j] ?
				page_ref_count(state->census[i].pages[j]) : 0;
	}
	for (i = 0; i < NR_FORK_CASES; i++)
		state->avcs[i] = rmap_links(mm, slot_addr(i));
	for (i = 0; i < NR_MM_COUNTERS; i++)
		state->rss[i] = forklab_mm_counter_sum(mm, i);
	state->pgtables_bytes = mm_pgtables_bytes(mm);
	state->pagetables = IS_ENABLED(CONFIG_SMP) ? 0 :
		global_node_page_state(NR_PAGETABLE);
	state->committed = vm_memory_committed();
}

/* Compare all but the pte write bits: a failed fork may leave COW ptes
 * write-protected, which costs the parent a fault, not data.
 */
/* What differs between two states of the parent, or NULL if nothing. */
static const char *state_change(const struct parent_state *a,
				const struct parent_state *b)
{
	unsigned int i;

	for (i = 0; i < NR_FORK_CASES; i++) {
		if (a->census[i].present != b->census[i].present ||
		    memcmp(a->census[i].pages, b->census[i].pages,
			   sizeof(a->census[i].pages)))
			return "present ptes or pages";
		if (memcmp(a->refs[i], b->refs[i], sizeof(a->refs[i])))
			return "page references";
		if (a->avcs[i] != b->avcs[i])
			return "anon_vma_chains in its anon_vmas";
	}
	if (memcmp(a->rss, b->rss, sizeof(a->rss)))
		return "rss";
	if (a->pgtables_bytes != b->pgtables_bytes)
		return "pgtables_bytes";
	if (a->pagetables != b->pagetables)
		return "NR_PAGETABLE";
	if (a->committed != b->committed)
		return "committed memory";
	return NULL;
}

/* What a child holds right after fork: per row, its ptes and bytes. */
struct child_image {
	unsigned int present[NR_FORK_CASES];
	bool mapped[NR_FORK_CASES];
	u8 bytes[NR_FORK_CASES][FORK_SIZE];
};

static void take_child_image(struct kunit *test, struct mm_struct *child,
			     struct child_image *image)
{
	unsigned int i;

	for (i = 0; i < NR_FORK_CASES; i++)
		image->present[i] = forklab_take_census(child, slot_addr(i)).present;
	for (i = 0; i < NR_FORK_CASES; i++) {
		mmap_read_lock(child);
		image->mapped[i] = find_vma_intersection(child, slot_addr(i),
							 slot_addr(i) + FORK_SIZE);
		mmap_read_unlock(child);
		if (image->mapped[i])
			forklab_read_vma_at(test, child, slot_addr(i), image->bytes[i]);
	}
	forklab_use_mm(NULL);
}

/*
 * Each injection point by its call site (patches/0009 keeps the stack of
 * the check fail-nth failed; fail_nth_sites.h says how to read it), with
 * how often a failure there failed dup_mm() and how often dup_mm() went on.
 */
#define MAX_FAIL_SITES	32

struct fail_site {
	char name[64];
	enum fail_nth_via via;
	bool nowarn;
	unsigned int failed, tolerated;
};

struct fail_sites {
	struct fail_site site[MAX_FAIL_SITES];
	unsigned int nr;
	struct fault_nth_site rec;
	char sym[KSYM_SYMBOL_LEN];
};

/* The site of the last injection: its caller outside the allocator. */
static struct fail_site *injection_site(struct kunit *test,
					struct fail_sites *sites)
{
	struct fault_nth_site *rec = &sites->rec;
	struct fail_site *site, key = {};
	unsigned int i;

	key.nowarn = rec->flags & FAULT_NOWARN;
	strscpy(key.name, "?", sizeof(key.name));
	for (i = 0; i < rec->nr_entries; i++) {
		sprint_symbol_no_offset(sites->sym, rec->entries[i]);
		sites->sym[strcspn(sites->sym, ".")] = '\0';	/* .constprop.0 */
		key.via = fail_nth_via_of(sites->sym, key.via);
		if (!fail_nth_is_alloc_frame(sites->sym)) {
			strscpy(key.name, sites->sym, sizeof(key.name));
			break;
		}
	}
	for (i = 0; i < sites->nr; i++) {
		site = &sites->site[i];
		if (!strcmp(site->name, key.name) && site->via == key.via &&
		    site->nowarn == key.nowarn)
			return site;
	}
	KUNIT_ASSERT_LT_MSG(test, sites->nr, MAX_FAIL_SITES, "too many sites");
	sites->site[sites->nr] = key;
	return &sites->site[sites->nr++];
}

/*
 * Hold the N-th injection to its site's rule: a site with a fallback
 * (fail_nth_fallback()) is tolerated, every other fails dup_mm().
 */
static void check_injection(struct kunit *test, struct fail_sites *sites,
			    unsigned long seq, unsigned int n, bool tolerated)
{
	struct fail_site *site;
	const char *why;

	fault_nth_site(&sites->rec);
	KUNIT_ASSERT_EQ_MSG(test, sites->rec.seq, seq + 1,
			    "N=%u: no record of the injection", n);
	KUNIT_ASSERT_EQ(test, sites->rec.pid, task_pid_nr(current));
	site = injection_site(test, sites);
	why = fail_nth_fallback(site->name, site->via, site->nowarn,
				!FORKLAB_LINUX_6_1);
	kunit_info(test, "injection %u: %s%s%s: %s\n", n, site->name,
		   fail_nth_via_names[site->via],
		   site->nowarn ? ", no-warn" : "",
		   tolerated ? "tolerated" : "failed cleanly");
	if (fail_nth_either_way(site->name)) {
		if (tolerated)
			site->tolerated++;
		else
			site->failed++;
		return;
	}
	if (tolerated) {
		site->tolerated++;
		KUNIT_EXPECT_NOT_NULL_MSG(test, why,
					  "N=%u: dup_mm() went on after a failure in %s%s, which has no fallback",
					  n, site->name, fail_nth_via_names[site->via]);
	} else {
		site->failed++;
		KUNIT_EXPECT_NULL_MSG(test, why,
				      "N=%u: a failure in %s failed dup_mm(), although %s",
				      n, site->name, why);
	}
}

static void report_sites(struct kunit *test, const struct fail_sites *sites)
{
	unsigned int i;

	for (i = 0; i < sites->nr; i++) {
		const struct fail_site *site = &sites->site[i];

		kunit_info(test, "site %s%s%s: %u failed cleanly, %u tolerated\n",
			   site->name, fail_nth_via_names[site->via],
			   site->nowarn ? ", no-warn" : "", site->failed,
			   site->tolerated);
	}
}

/*
 * For N = 1, 2, ...: fail the N-th fault-injection check inside dup_mm()
 * of a parent holding every mapping kind of the table. Each failure must
 * come back as NULL (-ENOMEM) with the parent's ptes, pages, page
 * references, rss and page tables as they were: a leak or a half-undone
 * copy on an error path shows here. Once N passes the number of checks,
 * dup_mm() succeeds without an injection and the test stops.
 */
static void dup_mm_fault_injection(struct kunit *test)
{
	struct file *files[NR_FORK_CASES];
	struct parent_state *before, *after;
	struct child_image *want, *got;
	unsigned int i, n, failed = 0, tolerated = 0, left;
	const char *change;
	struct mm_struct *parent, *child;
	u8 *buf, *bytes;
	struct fail_sites *sites = kunit_kzalloc(test, sizeof(*sites), GFP_KERNEL);
	unsigned long seq;

	KUNIT_ASSERT_NOT_NULL(test, sites);

	buf = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);
	bytes = kunit_kmalloc_array(test, NR_FORK_CASES, FORK_SIZE,
				    GFP_KERNEL);
	before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	after = kunit_kzalloc(test, sizeof(*after), GFP_KERNEL);
	want = kunit_kzalloc(test, sizeof(*want), GFP_KERNEL);
	got = kunit_kzalloc(test, sizeof(*got), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_NOT_NULL(test, got);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, bytes);
	KUNIT_ASSERT_NOT_NULL(test, before);
	KUNIT_ASSERT_NOT_NULL(test, after);

	for (i = 0; i < NR_FORK_CASES; i++)
		files[i] = forklab_row_file(test, &forklab_fork_cases[i]);
	parent = forklab_new_mm(test);
	for (i = 0; i < NR_FORK_CASES; i++)
		forklab_map_row(test, parent, &forklab_fork_cases[i], files[i], slot_addr(i), buf);
	for (i = 0; i < NR_FORK_CASES; i++)
		forklab_read_vma_at(test, parent, slot_addr(i), bytes + i * FORK_SIZE);
	forklab_use_mm(NULL);
	snapshot(parent, before);

	for (i = 0; i < ARRAY_SIZE(fail_nth_knobs); i++)
		set_fault_knob(test, &fail_nth_knobs[i]);

	/*
	 * The same checks in the same order on every boot: each failed
	 * dup_mm() frees its maple nodes through RCU, so without a barrier
	 * whether the next one can find free nodes or refills the slab (a page
	 * allocation that the N-th injection may hit, tolerated through
	 * allocate_slab()'s fallback to a lower order) depends on when a
	 * grace period ended. One uninjected dup_mm() first fills every
	 * cache that a whole fork takes objects from; its child is what
	 * the child of every tolerated injection must look like.
	 */
	child = dup_mm(current, parent);
	KUNIT_ASSERT_NOT_NULL(test, child);
	take_child_image(test, child, want);
	mmput(child);
	for (n = 1; n < 100000; n++) {
		rcu_barrier();
		fault_nth_site(&sites->rec);
		seq = sites->rec.seq;
		WRITE_ONCE(current->fail_nth, n);
		child = dup_mm(current, parent);
		left = READ_ONCE(current->fail_nth);
		WRITE_ONCE(current->fail_nth, 0);
		if (!left)
			check_injection(test, sites, seq, n, child);
		if (child) {
			if (left) {
				mmput(child);
				break;	/* fewer than n checks: done */
			}
			/*
			 * The failure had a fallback: the child must be the
			 * child of a fork without injection, row by row.
			 */
			take_child_image(test, child, got);
			forklab_expect_rss_counters(test, child);
			mmput(child);
			for (i = 0; i < NR_FORK_CASES; i++) {
				KUNIT_EXPECT_EQ_MSG(test, got->present[i], want->present[i],
						    "N=%u, row %u: child's present ptes", n, i);
				KUNIT_EXPECT_EQ_MSG(test, got->mapped[i], want->mapped[i],
						    "N=%u, row %u: child's vma", n, i);
				if (got->mapped[i] && want->mapped[i])
					KUNIT_EXPECT_MEMEQ_MSG(test, got->bytes[i], want->bytes[i],
							       FORK_SIZE,
							       "N=%u, row %u: child's bytes",
							       n, i);
			}
			tolerated++;
			continue;
		}
		failed++;
		KUNIT_ASSERT_EQ_MSG(test, left, 0U,
				    "dup_mm() failed at N=%u with no injection", n);
		snapshot(parent, after);
		change = state_change(before, after);
		KUNIT_ASSERT_TRUE_MSG(test, !change,
				      "parent's %s changed by a fork failed at N=%u",
				      change, n);
	}
	KUNIT_ASSERT_LT(test, n, 100000U);

	for (i = 0; i < NR_FORK_CASES; i++) {
		forklab_read_vma_at(test, parent, slot_addr(i), buf);
		KUNIT_EXPECT_MEMEQ_MSG(test, buf, bytes + i * FORK_SIZE, FORK_SIZE,
				       "row %u: %s", i, forklab_fork_cases[i].desc);
	}
	forklab_use_mm(NULL);
	kunit_info(test, "dup_mm(): %u injection points, %u failed cleanly, %u tolerated; parent intact after each\n",
		   n - 1, failed, tolerated);
	report_sites(test, sites);
	KUNIT_EXPECT_GT(test, failed, 0U);
}

/*
 * fail-nth fails one check, so the fallback of a site that has one is
 * never made to fail with it: anon_vma_clone() tries GFP_NOWAIT under
 * the anon_vma lock, then drops it and retries with GFP_KERNEL. Fail
 * both, with failslab itself (probability 100, times 2, this task only,
 * only under anon_vma_clone() by the stacktrace filter, after letting
 * @passes chain entries through by its "space"), forking the child of a
 * fork, whose anon vmas hang off two anon_vmas each:
 *
 *   origin --fork--> parent --fork (injected)--> child
 *   vma: anon_vma A  vma: A, B                   vma: A ok, B fails
 *
 * dup_mm() must fail through dup_mmap()'s anon_vma_fork() error path and
 * leave the parent as it was: its ptes, page references, rss, page
 * tables, the commit charge, and the chains in A and B (an
 * anon_vma_clone() that forgets to unlink the entry it already made, or
 * unlocks A's root twice, shows here). A leaked vma copy (mutant 13)
 * leaves no trace in the parent: fork_fail_nth counts vm_area_struct
 * objects.
 */
struct clone_failure {
	const char *desc;
	unsigned int passes;	/* chain entries cloned before the failure */
};

static const struct clone_failure clone_failures[] = {
	{ "the first chain entry fails", 0 },
	{ "the second chain entry fails", 1 },
};

KUNIT_ARRAY_PARAM_DESC(clone_failures, clone_failures, desc);

static void clear_make_it_fail(void *unused)
{
	current->make_it_fail = 0;
}

static void anon_vma_clone_retry_fails(struct kunit *test)
{
	const struct clone_failure *param = test->param_value;
	unsigned long start = (unsigned long)anon_vma_clone, size, offset, reject;
	struct fail_nth_knob knobs[] = {
		{ "failslab", "task-filter", FAIL_NTH_BOOL, 1 },
		{ "failslab", "stacktrace-depth", FAIL_NTH_ULONG, 32 },
		{ "failslab", "require-start", FAIL_NTH_ULONG, start },
		{ "failslab", "require-end", FAIL_NTH_ULONG, 0 },
		{ "failslab", "reject-start", FAIL_NTH_ULONG, 0 },
		{ "failslab", "reject-end", FAIL_NTH_ULONG, 0 },
		{ "failslab", "space", FAIL_NTH_U32, 0 },
		{ "failslab", "interval", FAIL_NTH_ULONG, 1 },
		{ "failslab", "times", FAIL_NTH_U32, 2 },
		{ "failslab", "probability", FAIL_NTH_ULONG, 100 },
	};
	struct file *files[NR_FORK_CASES];
	struct mm_struct *origin, *parent, *child;
	struct parent_state *before, *after;
	const char *change;
	unsigned int i;
	u8 *buf;

	KUNIT_ASSERT_TRUE(test, kallsyms_lookup_size_offset(start, &size, &offset));
	knobs[3].value = start + size;
	/*
	 * kmemleak allocates an object of its own inside every allocation
	 * (make check SANITIZE=1), under anon_vma_clone() too; it has a
	 * fallback, and is not what this case fails: keep it out.
	 */
	reject = IS_ENABLED(CONFIG_DEBUG_KMEMLEAK) ?
		 kallsyms_lookup_name("__alloc_object") : 0;
	if (reject && kallsyms_lookup_size_offset(reject, &size, &offset)) {
		knobs[4].value = reject;
		knobs[5].value = reject + size;
	}
	/* "space" lets allocations through while it exceeds their size */
	if (param->passes)
		knobs[6].value = param->passes * sizeof(struct anon_vma_chain) + 1;
	buf = kunit_kmalloc(test, FORK_SIZE, GFP_KERNEL);
	before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	after = kunit_kzalloc(test, sizeof(*after), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, before);
	KUNIT_ASSERT_NOT_NULL(test, after);

	for (i = 0; i < NR_FORK_CASES; i++)
		files[i] = forklab_row_file(test, &forklab_fork_cases[i]);
	origin = forklab_new_mm(test);
	for (i = 0; i < NR_FORK_CASES; i++)
		forklab_map_row(test, origin, &forklab_fork_cases[i], files[i], slot_addr(i), buf);
	forklab_use_mm(NULL);
	parent = dup_mm(current, origin);
	KUNIT_ASSERT_NOT_NULL(test, parent);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, forklab_mmput_action, parent));
	snapshot(parent, before);

	for (i = 0; i < ARRAY_SIZE(fail_nth_knobs); i++)
		set_fault_knob(test, &fail_nth_knobs[i]);
	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		set_fault_knob(test, &knobs[i]);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, clear_make_it_fail, NULL));
	current->make_it_fail = 1;
	child = dup_mm(current, parent);
	current->make_it_fail = 0;
	if (child)
		mmput(child);
	KUNIT_EXPECT_NULL_MSG(test, child,
			      "dup_mm() went on although both of anon_vma_clone()'s tries failed");
	snapshot(parent, after);
	change = state_change(before, after);
	KUNIT_EXPECT_TRUE_MSG(test, !change,
			      "parent's %s changed by a fork that failed in anon_vma_clone()",
			      change);
}

static struct kunit_case fork_fault_injection_test_cases[] = {
	KUNIT_CASE_SLOW(dup_mm_fault_injection),
	KUNIT_CASE_PARAM(anon_vma_clone_retry_fails, clone_failures_gen_params),
	{}
};

static struct kunit_suite fork_fault_injection_test_suite = {
	.name = "forklab_fork_fault_injection",
	.test_cases = fork_fault_injection_test_cases,
};

kunit_test_suite(fork_fault_injection_test_suite);

MODULE_DESCRIPTION("KUnit tests of dup_mm()'s error paths, by fault injection");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
