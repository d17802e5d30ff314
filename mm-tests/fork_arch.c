// SPDX-License-Identifier: GPL-2.0
/*
 * fork_arch: what x86's arch_dup_mmap() hands the child (the x86_64
 * target: UML has no LDT and no protection keys).
 *
 * dup_mmap() ends with arch_dup_mmap(). On x86 it gives the child
 * its own copy of the parent's LDT (ldt_dup_context(): init_new_context()
 * has just left the child none) and of the parent's protection-key
 * allocation map (arch_dup_pkeys(): init_new_context() reset it to key 0
 * only). Neither is a page table, and no other row looks at them.
 *
 * The parent's LDT has its first entry and its last (LDT_ENTRIES - 1):
 * 64 KiB, more than a page (vmalloc'd; under PTI, map_ldt_struct() maps
 * it page by page into the child's LDT slot; run.list boots with
 * pti=on, which QEMU's AMD-like CPU would not turn on by itself).
 *
 *   row                                 a wrong kernel
 *   1 LDT copied                        the child has no LDT (modify_ldt(0)
 *                                       reads nothing), or a shorter one
 *                                       (its last entry missing), or other
 *                                       entries
 *   2 LDT usable by the child           the child's %gs, loaded with the
 *                                       parent's first or last selector,
 *                                       faults (no descriptor, or not
 *                                       mapped in its LDT slot: SIGSEGV),
 *                                       or reads through another base
 *   3 LDT the child's own after fork    a change after fork shows on the
 *                                       other side; the two share one LDT
 *                                       struct, which the first write frees
 *                                       under the other: the kernel's taint
 *                                       (BUG, WARN) or the parent's own
 *                                       selector after the child's exit
 *   4 pkeys allocated in the parent     the child's map is key 0 only, or
 *     are the child's                   all keys: its pkey_alloc() is not
 *                                       the lowest key the parent left
 *                                       free; the execute-only key not
 *                                       copied: the child's PROT_EXEC-only
 *                                       mprotect() gets another key, and
 *                                       it may pkey_free() the parent's
 *                                       (skipped without PKU: the x86_64
 *                                       target's CPU is qemu64,+pku)
 */
#include <asm/ldt.h>
#include <sys/mman.h>

#include "forklab.h"

/* The entries the parent installs, and the one the child adds. */
#define PARENT_ENTRY	0
#define LAST_ENTRY	(LDT_ENTRIES - 1)
#define CHILD_ENTRY	1
#define LDT_BYTES	(LDT_ENTRIES * LDT_ENTRY_SIZE)
#define TAINTED		"/proc/sys/kernel/tainted"
#define SELECTOR(entry)	((entry) << 3 | 4 | 3)	/* TI: the LDT; RPL 3 */

/* What a selector of the LDT reads at offset 0: these, by its base. */
static volatile uint32_t through_first = 0x5eed0001;
static volatile uint32_t through_second = 0x5eed0002;
static volatile uint32_t through_last = 0x5eed0003;

static int modify_ldt(int func, void *ptr, unsigned long bytes)
{
	return syscall(SYS_modify_ldt, func, ptr, bytes);
}

/* A flat 32-bit data segment based at @base (below 4 GiB: a static binary). */
static void set_entry(unsigned int entry, const volatile void *base)
{
	struct user_desc desc = {
		.entry_number = entry,
		.base_addr = (uint32_t)(uintptr_t)base,
		.limit = 0xfffff,
		.seg_32bit = 1,
		.contents = 0,		/* data */
		.limit_in_pages = 1,
		.useable = 1,
	};

	if ((uintptr_t)base > UINT32_MAX)
		ksft_exit_fail_msg("LDT: %p is above 4 GiB\n", base);
	if (modify_ldt(1, &desc, sizeof(desc)))
		ksft_exit_fail_msg("modify_ldt(1): %s\n", strerror(errno));
}

/* The raw LDT, every descriptor (zero where none). */
static void read_ldt(uint8_t *raw)
{
	memset(raw, 0, LDT_BYTES);
	if (modify_ldt(0, raw, LDT_BYTES) < 0)
		ksft_exit_fail_msg("modify_ldt(0): %s\n", strerror(errno));
}

static bool entry_empty(const uint8_t *raw, unsigned int entry)
{
	static const uint8_t none[LDT_ENTRY_SIZE];

	return !memcmp(raw + entry * LDT_ENTRY_SIZE, none, LDT_ENTRY_SIZE);
}

/*
 * %gs loaded with @selector, the 32-bit word at %gs:0 read through it:
 * a selector without a descriptor faults here (SIGSEGV).
 */
static uint32_t read_through(uint16_t selector)
{
	uint32_t word;

	asm volatile("mov %w1, %%gs\n\t"
		     "movl %%gs:0, %0"
		     : "=r" (word) : "r" (selector) : "memory");
	return word;
}

/* What the child found, for the parent's report. */
struct ldt_view {
	bool copied;		/* its LDT right after fork is the parent's */
	bool entry0_empty;
	bool last_empty;
	uint32_t read, read_last;	/* through the parent's selectors */
	bool kept_entry0;	/* its entry 0 after the parent's change */
	bool has_own;		/* the entry it added */
};

static uint8_t before[LDT_BYTES], seen[LDT_BYTES];

/*
 * Rows 1-3. The parent installs entries 0 (based at through_first) and
 * LAST_ENTRY (through_last), forks; the child reads its LDT and through
 * both selectors, adds entry 1; the parent moves entry 0 to
 * through_second; the child reads its LDT again; after its exit the
 * parent reads through its own selector, and the taint is unchanged.
 */
static void ldt_rows(void)
{
	long long tainted = read_number(TAINTED);
	struct ldt_view v;
	struct lockstep ls;
	int report[2];
	bool own;
	char word;
	pid_t pid;

	row_begin("LDT: the child has the parent's entries");
	set_entry(PARENT_ENTRY, &through_first);
	set_entry(LAST_ENTRY, &through_last);
	read_ldt(before);
	if (entry_empty(before, PARENT_ENTRY) || entry_empty(before, LAST_ENTRY))
		ksft_exit_fail_msg("LDT: the parent's entries read back empty\n");
	lockstep_init(&ls);
	if (pipe(report))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork_or_fail();
	if (pid == 0) {
		memset(&v, 0, sizeof(v));
		read_ldt(seen);
		v.copied = !memcmp(seen, before, LDT_BYTES);
		v.entry0_empty = entry_empty(seen, PARENT_ENTRY);
		v.last_empty = entry_empty(seen, LAST_ENTRY);
		/* Reported first: a fault below still leaves rows 1 and 3. */
		if (write(report[1], &v, sizeof(v)) != sizeof(v))
			_exit(1);
		v.read = read_through(SELECTOR(PARENT_ENTRY));
		v.read_last = read_through(SELECTOR(LAST_ENTRY));
		set_entry(CHILD_ENTRY, &through_second);
		say(ls.to_parent[1]);
		hear(ls.to_child[0]);
		read_ldt(seen);
		v.kept_entry0 = !memcmp(seen, before, LDT_ENTRY_SIZE);
		v.has_own = !entry_empty(seen, CHILD_ENTRY);
		if (write(report[1], &v, sizeof(v)) != sizeof(v))
			_exit(1);
		_exit(0);
	}
	if (!read_report(report[0], &v, sizeof(v)))
		ksft_exit_fail_msg("LDT: no report from the child\n");
	if (!v.copied)
		ksft_print_msg("LDT: the child's LDT is not the parent's (entry 0 %s, entry %d %s)\n",
			       v.entry0_empty ? "empty" : "there", LAST_ENTRY,
			       v.last_empty ? "empty" : "there");
	row_result(v.copied);

	/*
	 * The child's word that it read through the selectors, or the end
	 * of the pipe: it died loading one.
	 */
	row_begin("LDT: the child loads the parent's selector and reads through it");
	close(ls.to_parent[1]);
	ls.to_parent[1] = -1;
	if (!read_report(ls.to_parent[0], &word, 1)) {
		ksft_print_msg("LDT: the child died loading the parent's selectors (status %d)\n",
			       wait_child(pid));
		row_result(false);
		ksft_test_result_skip("LDT: a change after fork is one side's only (the child died)\n");
		goto out;
	}
	set_entry(PARENT_ENTRY, &through_second);
	read_ldt(seen);
	say(ls.to_child[1]);
	if (!read_report(report[0], &v, sizeof(v)))
		ksft_exit_fail_msg("LDT: no second report from the child\n");
	if (v.read != through_first || v.read_last != through_last)
		ksft_print_msg("LDT: the child read %#x and %#x through the selectors, want %#x and %#x\n",
			       v.read, v.read_last, through_first, through_last);
	row_result(v.read == through_first && v.read_last == through_last);
	row_begin("LDT: a change after fork is one side's only");
	own = true;
	if (!memcmp(seen, before, LDT_ENTRY_SIZE)) {
		ksft_print_msg("LDT: the parent's change of entry 0 did not take\n");
		own = false;
	}
	if (!v.kept_entry0) {
		ksft_print_msg("LDT: the parent's change after fork shows in the child\n");
		own = false;
	}
	if (!v.has_own) {
		ksft_print_msg("LDT: the child's own new entry is not in its LDT\n");
		own = false;
	}
	if (!entry_empty(seen, CHILD_ENTRY)) {
		ksft_print_msg("LDT: the child's new entry shows in the parent\n");
		own = false;
	}
	if (wait_child(pid)) {
		ksft_print_msg("LDT: the child failed\n");
		own = false;
	}
	/* The parent's LDT after the child's is gone: still its own. */
	if (read_through(SELECTOR(PARENT_ENTRY)) != through_second ||
	    read_through(SELECTOR(LAST_ENTRY)) != through_last) {
		ksft_print_msg("LDT: the parent reads through its selectors wrong after the child's exit\n");
		own = false;
	}
	if (read_number(TAINTED) != tainted) {
		ksft_print_msg("LDT: the kernel's taint changed: %#llx, was %#llx\n",
			       read_number(TAINTED), tainted);
		own = false;
	}
	row_result(own);
out:
	close(report[0]);
	close(report[1]);
	lockstep_close(&ls);	/* to_parent[1]: -1, EBADF */
}

static bool cpu_has_pku(void)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		ksft_exit_fail_msg("/proc/cpuinfo: %s\n", strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "flags", 5) && strstr(line, " ospke");
	fclose(f);
	return found;
}

/* The protection key of the vma at @addr (smaps' ProtectionKey:), -1: none. */
static int vma_pkey(const void *addr)
{
	unsigned long start, end, at = (unsigned long)addr;
	char line[512];
	bool here = false;
	int key = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		ksft_exit_fail_msg("/proc/self/smaps: %s\n", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, ' ') > strchr(line, '-'))
			here = start <= at && at < end;
		else if (here && !strncmp(line, "ProtectionKey:", 14)) {
			key = atoi(line + 14);
			break;
		}
	}
	fclose(f);
	return key;
}

/*
 * Row 4. The parent's execute-only key (a PROT_EXEC-only mprotect()
 * allocates it) and two keys it allocated are the child's: the child's
 * pkey_alloc() returns the lowest key the parent left free, its
 * PROT_EXEC-only mprotect() gets the same execute-only key, and
 * pkey_free() of that key fails (no interface frees it).
 */
static void pkeys_row(void)
{
	size_t ps = page_size();
	int first, second, exec_only, lowest_free;
	uint8_t *pages;
	pid_t pid;

	row_begin("pkeys: the parent's allocated keys are the child's");
	if (!cpu_has_pku()) {
		row_skip("the guest's CPU has no PKU (ospke)");
		return;
	}
	pages = mmap(NULL, 2 * ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED || mprotect(pages, ps, PROT_EXEC))
		ksft_exit_fail_msg("mmap, mprotect(PROT_EXEC): %s\n", strerror(errno));
	exec_only = vma_pkey(pages);
	first = syscall(SYS_pkey_alloc, 0, 0);
	second = syscall(SYS_pkey_alloc, 0, 0);
	if (exec_only <= 0 || first < 0 || second < 0)
		ksft_exit_fail_msg("pkeys: execute-only key %d, pkey_alloc() %d, %d: %s\n",
				   exec_only, first, second, strerror(errno));
	for (lowest_free = 1; lowest_free == exec_only || lowest_free == first ||
	     lowest_free == second; lowest_free++)
		;
	pid = fork_or_fail();
	if (pid == 0) {
		int third = syscall(SYS_pkey_alloc, 0, 0);
		bool ok = true;

		if (third != lowest_free) {
			ksft_print_msg("pkeys: the child's pkey_alloc() returned %d, want %d (parent: %d, %d, execute-only %d)\n",
				       third, lowest_free, first, second, exec_only);
			ok = false;
		}
		if (mprotect(pages + ps, ps, PROT_EXEC) || vma_pkey(pages + ps) != exec_only) {
			ksft_print_msg("pkeys: the child's PROT_EXEC-only page has key %d, want the parent's execute-only %d\n",
				       vma_pkey(pages + ps), exec_only);
			ok = false;
		}
		if (!syscall(SYS_pkey_free, exec_only)) {
			ksft_print_msg("pkeys: the child freed the execute-only key %d\n", exec_only);
			ok = false;
		}
		if (syscall(SYS_pkey_free, first) || syscall(SYS_pkey_free, second)) {
			ksft_print_msg("pkeys: the child cannot free the parent's keys: %s\n",
				       strerror(errno));
			ok = false;
		}
		_exit(ok ? 0 : 1);
	}
	row_result(!wait_child(pid));
	if (syscall(SYS_pkey_free, first) || syscall(SYS_pkey_free, second))
		ksft_exit_fail_msg("pkey_free in the parent: %s\n", strerror(errno));
	munmap(pages, 2 * ps);
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(4);
	ldt_rows();
	pkeys_row();
	ksft_finished();
}
