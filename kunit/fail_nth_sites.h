/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How forklab names a fail-nth injection point, and which may be
 * tolerated. Shared by kunit/fork_test.c (in the kernel, from
 * fault_nth_site()) and mm-tests/fork_fail_nth.c (user space, from
 * /sys/kernel/debug/fail_nth_site): both see the stack of the failed
 * check, innermost frame first, as function names.
 *
 * The site of an injection is the first frame that is not the
 * allocator's own: the function that asked for the memory
 * (vm_area_dup, anon_vma_clone, __pte_alloc, ...). A page that a slab
 * needed to serve that request is the same site's "slab refill".
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
 *   radix_tree_node_alloc,    a node without blocking (alloc_pid()'s idr
 *   no-warn                   after idr_preload()); it takes one from
 *                             the per-CPU preload
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
 * comes from a per-CPU cache of freed stacks or from vmalloc (three or
 * four checks more), whose preload is made only when its per-CPU spare
 * is gone. So in user space the same N can name another site from one
 * boot to the next: the suites check each injection by its site, and
 * print sites, not only counts. dup_mm() alone, as KUnit calls it, makes
 * the same checks on every boot (make repeat).
 */
#ifndef FORKLAB_FAIL_NTH_SITES_H
#define FORKLAB_FAIL_NTH_SITES_H

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
 * Why the fork may go on after a failure at this site, or NULL if it
 * must fail. @site: the caller's name; @refill: a slab's own page;
 * @nowarn: the allocation asked for no warning (FAULT_NOWARN).
 */
static inline const char *fail_nth_fallback(const char *site, int refill,
					    int nowarn)
{
	if (!nowarn)
		return NULL;
	if (refill)
		return "a slab's higher-order page: allocate_slab() falls back to the minimum order";
	/* anon_vma_chain_alloc() if the compiler did not inline it */
	if (fail_nth_frame_is(site, "anon_vma_clone") ||
	    fail_nth_frame_is(site, "anon_vma_chain_alloc"))
		return "anon_vma_clone()'s GFP_NOWAIT try: it retries with GFP_KERNEL";
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
