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
 *   row                                 a wrong kernel
 *   1 LDT copied                        the child has no LDT (modify_ldt(0)
 *                                       reads nothing), or other entries
 *   2 LDT usable by the child           the child's %gs, loaded with the
 *                                       parent's selector, faults (no
 *                                       descriptor: SIGSEGV), or reads
 *                                       through another base
 *   3 LDT the child's own after fork    the two share one LDT: the
 *                                       parent's change after fork shows in
 *                                       the child, the child's new entry in
 *                                       the parent (and the second exit
 *                                       frees it again)
 *   4 pkeys allocated in the parent     the child's map is key 0 only: its
 *     are the child's                   pkey_alloc() hands out a key the
 *                                       parent allocated, its pkey_free()
 *                                       of one fails (skipped without PKU:
 *                                       QEMU's default CPU has none)
 */
#include <asm/ldt.h>
#include <sys/mman.h>

#include "forklab.h"

/* The entry the parent installs, and the one the child adds. */
#define PARENT_ENTRY	0
#define CHILD_ENTRY	1
#define LDT_BYTES	(2 * LDT_ENTRY_SIZE)
#define SELECTOR(entry)	((entry) << 3 | 4 | 3)	/* TI: the LDT; RPL 3 */

/* What a selector of the LDT reads at offset 0: these, by its base. */
static volatile uint32_t through_first = 0x5eed0001;
static volatile uint32_t through_second = 0x5eed0002;

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

/* The raw LDT, its first two descriptors (zero where none). */
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
	uint8_t raw[LDT_BYTES];		/* right after fork */
	uint32_t read;			/* through the parent's selector */
	uint8_t raw_after[LDT_BYTES];	/* after the parent's change */
};

/*
 * Rows 1-3. The parent installs entry 0 (based at through_first),
 * forks; the child reads its LDT and through the selector, adds
 * entry 1; the parent moves entry 0 to through_second; the child reads
 * its LDT again.
 */
static void ldt_rows(void)
{
	uint8_t before[LDT_BYTES], parent_after[LDT_BYTES];
	struct ldt_view v;
	struct lockstep ls;
	int report[2];
	bool copied, own;
	char word;
	pid_t pid;

	set_entry(PARENT_ENTRY, &through_first);
	read_ldt(before);
	if (entry_empty(before, PARENT_ENTRY))
		ksft_exit_fail_msg("LDT: the parent's entry reads back empty\n");
	lockstep_init(&ls);
	if (pipe(report))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork_or_fail();
	if (pid == 0) {
		memset(&v, 0, sizeof(v));
		read_ldt(v.raw);
		/* Reported first: a fault below still leaves rows 1 and 3. */
		if (write(report[1], &v, sizeof(v)) != sizeof(v))
			_exit(1);
		v.read = read_through(SELECTOR(PARENT_ENTRY));
		set_entry(CHILD_ENTRY, &through_second);
		say(ls.to_parent[1]);
		hear(ls.to_child[0]);
		read_ldt(v.raw_after);
		if (write(report[1], &v, sizeof(v)) != sizeof(v))
			_exit(1);
		_exit(0);
	}
	if (read(report[0], &v, sizeof(v)) != sizeof(v))
		ksft_exit_fail_msg("LDT: no report from the child\n");
	copied = !memcmp(v.raw, before, LDT_BYTES);
	if (!copied)
		ksft_print_msg("LDT: the child's entry 0 %s the parent's\n",
			       entry_empty(v.raw, PARENT_ENTRY) ? "is empty, not" : "differs from");
	ksft_test_result(copied, "LDT: the child has the parent's entries\n");

	/*
	 * The child's word that it read through the selector, or the end
	 * of the pipe: it died loading it.
	 */
	close(ls.to_parent[1]);
	ls.to_parent[1] = -1;
	if (read(ls.to_parent[0], &word, 1) != 1) {
		ksft_print_msg("LDT: the child died loading the parent's selector (status %d)\n",
			       wait_child(pid));
		ksft_test_result_fail("LDT: the child loads the parent's selector and reads through it\n");
		ksft_test_result_skip("LDT: a change after fork is one side's only (the child died)\n");
		goto out;
	}
	set_entry(PARENT_ENTRY, &through_second);
	read_ldt(parent_after);
	say(ls.to_child[1]);
	if (read(report[0], &v, sizeof(v)) != sizeof(v))
		ksft_exit_fail_msg("LDT: no second report from the child\n");
	if (v.read != through_first)
		ksft_print_msg("LDT: the child read %#x through the selector, want %#x\n",
			       v.read, through_first);
	ksft_test_result(v.read == through_first,
			 "LDT: the child loads the parent's selector and reads through it\n");
	own = true;
	if (memcmp(v.raw_after, before, LDT_ENTRY_SIZE)) {
		ksft_print_msg("LDT: the parent's change after fork shows in the child\n");
		own = false;
	}
	if (entry_empty(v.raw_after, CHILD_ENTRY)) {
		ksft_print_msg("LDT: the child's own new entry is not in its LDT\n");
		own = false;
	}
	if (!entry_empty(parent_after, CHILD_ENTRY)) {
		ksft_print_msg("LDT: the child's new entry shows in the parent\n");
		own = false;
	}
	if (wait_child(pid)) {
		ksft_print_msg("LDT: the child failed\n");
		own = false;
	}
	ksft_test_result(own, "LDT: a change after fork is one side's only\n");
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

/*
 * Row 4. Two keys allocated in the parent are allocated in the child:
 * its pkey_alloc() returns another, its pkey_free() of them succeeds.
 */
static void pkeys_row(void)
{
	const char *desc = "pkeys: the parent's allocated keys are the child's";
	int first, second;
	pid_t pid;

	if (!cpu_has_pku()) {
		skip_named(desc, "the guest's CPU has no PKU (ospke)");
		return;
	}
	first = syscall(SYS_pkey_alloc, 0, 0);
	second = syscall(SYS_pkey_alloc, 0, 0);
	if (first < 0 || second < 0)
		ksft_exit_fail_msg("pkey_alloc: %s\n", strerror(errno));
	pid = fork_or_fail();
	if (pid == 0) {
		int third = syscall(SYS_pkey_alloc, 0, 0);

		if (third == first || third == second) {
			ksft_print_msg("pkeys: the child's pkey_alloc() returned %d, the parent's key\n",
				       third);
			_exit(1);
		}
		if (syscall(SYS_pkey_free, first) || syscall(SYS_pkey_free, second)) {
			ksft_print_msg("pkeys: the child cannot free the parent's keys: %s\n",
				       strerror(errno));
			_exit(1);
		}
		_exit(0);
	}
	ksft_test_result(!wait_child(pid), "%s\n", desc);
	if (syscall(SYS_pkey_free, first) || syscall(SYS_pkey_free, second))
		ksft_exit_fail_msg("pkey_free in the parent: %s\n", strerror(errno));
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(4);
	ldt_rows();
	pkeys_row();
	ksft_finished();
}
