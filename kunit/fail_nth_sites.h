/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How forklab names a fail-nth injection point, and which may be
 * tolerated. Shared by kunit/fork_fault_injection_test.c (in the
 * kernel, from fault_nth_site()) and mm-tests/fork_fail_nth.c (user
 * space, from /sys/kernel/debug/fail_nth_site): both see the stack of
 * the failed check, innermost frame first, as function names.
 *
 * The site of an injection is the first frame that is not the
 * allocator's own: the function that asked for the memory
 * (vm_area_dup, anon_vma_clone, __pte_alloc, ...). How the failed
 * check was reached says which of the site's allocations it was: a page
 * that a slab needed to serve the request is the site's "slab refill";
 * a try of the bulk page allocator is its "bulk" try.
 *
 * Each site fails the same way every time: the fork fails cleanly,
 * unless the site has a fallback, when the fork goes on without it.
 * These have one, and must be tolerated (a failure there is a fallback
 * that did not run):
 *
 *   anon_vma_clone, no-warn   its GFP_NOWAIT try under the anon_vma
 *                             lock; it drops the lock and retries with
 *                             GFP_KERNEL (the next check)
 *   slab refill, no-warn      a slab's higher-order page (NORETRY);
 *                             allocate_slab() falls back to the
 *                             minimum order (the next check)
 *
 *   vmalloc's pages, bulk,    the bulk allocator's try for a vmalloc
 *   no-warn                   area's pages (fork's thread stack);
 *                             vm_area_alloc_pages() goes on one page at
 *                             a time (each such page is a check of its
 *                             own, and must fail the fork)
 *
 *   mas_store_gfp, no-warn    the maple tree's GFP_NOWAIT try for the
 *                             nodes of a store (dup_mmap() clearing a
 *                             VM_DONTCOPY range); mas_nomem() allocates
 *                             them with the caller's gfp and retries
 *   radix_tree_node_alloc,    a node without blocking (alloc_pid()'s idr
 *   no-warn                   after idr_preload()); it takes one from
 *                             the per-CPU preload
 *
 *   __ksm_enter               the child's slot in ksmd's list, when the
 *                             parent has MADV_MERGEABLE vmas: ksm_fork()
 *                             ignores the failure ("best effort"); the
 *                             child's pages are then never merged (6.12;
 *                             6.1's ksm_fork() fails the fork)
 *
 *   alloc_slab_obj_exts       a slab's objcg vector (6.1:
 *                             memcg_alloc_slab_cgroups()), made with a
 *                             new slab of a SLAB_ACCOUNT cache, or at the
 *                             first object charged to a memcg from an
 *                             older slab: without it the slab's objects
 *                             are left uncharged (fork_fail_nth_memcg)
 *
 * and, in the sanitizer build (make check SANITIZE=1), the bookkeeping
 * nested in each allocation: kmemleak's metadata (from its memory pool
 * instead) and KASAN's stack depot pages (the stack goes unsaved).
 *
 * One site may go either way, because its stack cannot tell two
 * allocations apart:
 *
 *   alloc_vmap_area           the vmap_area of a new vmalloc area (the
 *                             fork needs it) and, from the inlined
 *                             preload_this_cpu_lock(), a spare for the
 *                             per-CPU preload (it goes on without it)
 *
 * Either outcome is right there; like every other, a failed fork must
 * be clean and the child of a tolerated one right.
 *
 * Which checks a fork makes depends on what ran before: a slab refill
 * happens where a cache runs out of free objects; fork's thread stack
 * comes from a per-CPU cache of freed stacks or from vmalloc (four or
 * five checks more), and exited tasks refill that cache from RCU
 * callbacks. Either would move every later check to another N from one
 * attempt to the next. dup_mm() alone, as KUnit calls it, makes the same
 * checks on every boot (make repeat); mm-tests/fork_fail_nth leaves
 * those checks out of its walk with the knobs' stack filter, so that its
 * N-th check, too, is the same on every attempt and boot. The rules for
 * them stay here for any walk that meets them.
 */
#ifndef FORKLAB_FAIL_NTH_SITES_H
#define FORKLAB_FAIL_NTH_SITES_H

/*
 * The knobs both walks set first, under /sys/kernel/debug: by default
 * failslab and fail_page_alloc ignore exactly the allocations fork makes
 * (they may sleep; order 0; highmem) and print a stack per failure. The
 * type is the debugfs file's: KUnit writes the variable behind it, user
 * space the file ("%lu" of the value).
 */
enum fail_nth_knob_type { FAIL_NTH_BOOL, FAIL_NTH_U32, FAIL_NTH_ULONG };

struct fail_nth_knob {
	const char *dir, *name;
	enum fail_nth_knob_type type;
	unsigned long value;
};

static const struct fail_nth_knob fail_nth_knobs[] = {
	{ "failslab", "ignore-gfp-wait", FAIL_NTH_BOOL, 0 },
	{ "failslab", "verbose", FAIL_NTH_ULONG, 0 },
	{ "fail_page_alloc", "ignore-gfp-wait", FAIL_NTH_BOOL, 0 },
	{ "fail_page_alloc", "ignore-gfp-highmem", FAIL_NTH_BOOL, 0 },
	{ "fail_page_alloc", "min-order", FAIL_NTH_U32, 0 },
	{ "fail_page_alloc", "verbose", FAIL_NTH_ULONG, 0 },
};

/*
 * Prefixes of the functions between a caller and should_fail_ex(), and
 * of those that took the stack (UML's save_stack_trace()).
 */
static const char *const fail_nth_alloc_frames[] = {
	"save_stack_trace", "__save_stack_trace", "stack_trace_save",
	"arch_stack_walk", "dump_trace",
	"record_nth_site", "should_fail", "__should_fail",
	"kmem_cache_alloc", "__kmem_cache_alloc", "kmalloc", "__kmalloc",
	"kzalloc", "slab_alloc", "__slab_alloc", "___slab_alloc",
	"new_slab", "allocate_slab", "alloc_slab_page",
	"alloc_pages", "__alloc_pages", "alloc_frozen_pages",
	"__alloc_frozen_pages", "folio_alloc", "__folio_alloc",
	"vma_alloc_folio", "get_free_pages", "__get_free_pages",
	"get_zeroed_page", "pagetable_alloc", "__pagetable_alloc",
	"mt_alloc", "mas_alloc", "mas_node_count", "mas_dup_alloc",
	"prepare_alloc_pages",
};

/* How the failed check was reached from its site. */
enum fail_nth_via {
	FAIL_NTH_DIRECT,	/* what the site asked for */
	FAIL_NTH_SLAB_REFILL,	/* a slab's own page, to serve the site */
	FAIL_NTH_BULK,		/* a try of the bulk page allocator */
};

static const char *const fail_nth_via_names[] = {
	[FAIL_NTH_DIRECT] = "",
	[FAIL_NTH_SLAB_REFILL] = ", slab refill",
	[FAIL_NTH_BULK] = ", bulk",
};

static inline int fail_nth_frame_is(const char *frame, const char *prefix)
{
	while (*prefix)
		if (*frame++ != *prefix++)
			return 0;
	return 1;
}

/*
 * The frames that tell a slab's own page from the object asked for
 * (allocate_slab() may be inlined into new_slab(), and that into
 * ___slab_alloc(), as the sanitizer build does).
 */
static inline int fail_nth_is_refill_frame(const char *frame)
{
	return fail_nth_frame_is(frame, "allocate_slab") ||
	       fail_nth_frame_is(frame, "new_slab") ||
	       fail_nth_frame_is(frame, "alloc_slab_page") ||
	       fail_nth_frame_is(frame, "___slab_alloc");
}

/*
 * The bulk page allocator (alloc_pages_bulk_noprof() and its array
 * wrappers, which vm_area_alloc_pages() calls); its own single-page
 * path (__alloc_pages_noprof() under it) is the same try.
 */
static inline int fail_nth_is_bulk_frame(const char *frame)
{
	return fail_nth_frame_is(frame, "alloc_pages_bulk") ||
	       fail_nth_frame_is(frame, "__alloc_pages_bulk");
}

/* What an allocator frame of the stack says of the check's way in. */
static inline enum fail_nth_via fail_nth_via_of(const char *frame,
						enum fail_nth_via via)
{
	if (fail_nth_is_refill_frame(frame))
		return FAIL_NTH_SLAB_REFILL;
	if (via == FAIL_NTH_DIRECT && fail_nth_is_bulk_frame(frame))
		return FAIL_NTH_BULK;
	return via;
}

static inline int fail_nth_is_alloc_frame(const char *frame)
{
	unsigned int i;

	for (i = 0; i < sizeof(fail_nth_alloc_frames) /
			sizeof(fail_nth_alloc_frames[0]); i++)
		if (fail_nth_frame_is(frame, fail_nth_alloc_frames[i]))
			return 1;
	return 0;
}

/*
 * Is this a check that one attempt makes and the next, the same fork
 * again, may not? A new slab of an accounted cache gets its objcg vector
 * when it is made: the attempt that made the slab made the check, the
 * next finds the slab there. The check after it would then move to this
 * N: a walk tries the same N again rather than step over it.
 */
static inline int fail_nth_site_moves(const char *site)
{
	return fail_nth_frame_is(site, "alloc_slab_obj_exts") ||
	       fail_nth_frame_is(site, "memcg_alloc_slab_cgroups");
}

/*
 * Why the fork may go on after a failure at this site, or NULL if it
 * must fail. @site: the caller's name; @via: how the check was reached;
 * @nowarn: the allocation asked for no warning (FAULT_NOWARN);
 * @ksm_best_effort: ksm_fork() ignores __ksm_enter()'s failure, as 6.12's
 * does (6.1's returns it, and dup_mmap() fails the fork).
 */
static inline const char *fail_nth_fallback(const char *site,
					    enum fail_nth_via via, int nowarn,
					    int ksm_best_effort)
{
	/* mm_slot_alloc(), inlined or not */
	if (via == FAIL_NTH_DIRECT && ksm_best_effort &&
	    (fail_nth_frame_is(site, "__ksm_enter") ||
	     fail_nth_frame_is(site, "mm_slot_alloc")))
		return "ksm_fork(): entering ksmd's list is best effort";
	if (via == FAIL_NTH_DIRECT && fail_nth_site_moves(site))
		return "a slab's objcg vector: without it, the object is charged to no memcg";
	if (!nowarn)
		return NULL;
	if (via == FAIL_NTH_SLAB_REFILL)
		return "a slab's higher-order page: allocate_slab() falls back to the minimum order";
	/* vm_area_alloc_pages(), if the compiler did not inline it */
	if (via == FAIL_NTH_BULK &&
	    (fail_nth_frame_is(site, "vm_area_alloc_pages") ||
	     fail_nth_frame_is(site, "__vmalloc_area_node") ||
	     fail_nth_frame_is(site, "__vmalloc_node_range")))
		return "vmalloc's bulk try: vm_area_alloc_pages() goes on one page at a time";
	if (via == FAIL_NTH_BULK)
		return NULL;
	/* anon_vma_chain_alloc() if the compiler did not inline it */
	if (fail_nth_frame_is(site, "anon_vma_clone") ||
	    fail_nth_frame_is(site, "anon_vma_chain_alloc"))
		return "anon_vma_clone()'s GFP_NOWAIT try: it retries with GFP_KERNEL";
	/* the maple tree's first try of a store (mas_node_count()) */
	if (fail_nth_frame_is(site, "mas_store_gfp"))
		return "mas_store_gfp()'s GFP_NOWAIT try: mas_nomem() retries with the caller's gfp";
	/* a non-blocking idr/radix tree node: from the per-CPU preload */
	if (fail_nth_frame_is(site, "radix_tree_node_alloc"))
		return "radix_tree_node_alloc(): it takes a node from its per-CPU preload";
	/* the sanitizer build's own bookkeeping, nested in an allocation */
	if (fail_nth_frame_is(site, "mem_pool_alloc") ||
	    fail_nth_frame_is(site, "__alloc_object") ||
	    fail_nth_frame_is(site, "__create_object") ||
	    fail_nth_frame_is(site, "create_object"))
		return "kmemleak's metadata: it falls back to its memory pool";
	if (fail_nth_frame_is(site, "stack_depot_save") ||
	    fail_nth_frame_is(site, "__stack_depot_save"))
		return "a stack depot page: without it, the stack is not saved";
	return NULL;
}

/* Why a failure at this site may fail the fork or not, or NULL. */
static inline const char *fail_nth_either_way(const char *site)
{
	if (fail_nth_frame_is(site, "alloc_vmap_area"))
		return "alloc_vmap_area(): the area's vmap_area, or preload_this_cpu_lock()'s spare";
	return NULL;
}

#endif /* FORKLAB_FAIL_NTH_SITES_H */
