# SPDX-License-Identifier: GPL-2.0
"""judge/console-scan: fail a run on every kernel complaint in its console log.

Prints each complaint in CONSOLE (kunit.py's test.log, a UML boot's console,
a QEMU serial log; PATTERNS below says what counts; printk timestamps, KTAP
results and '#' diagnostics are skipped) as 'judge/console-scan: CONSOLE:LINENO:
KIND: TEXT', at most 20, and exits 1; 0 when clean, 2 on bad arguments or
an unreadable CONSOLE (one error line).

A complaint is what the kernel's reports print: __warn()'s 'WARNING: CPU: N
PID: N at ...', lockdep's, BUG:, Oops, KASAN, ... A printk notice that starts
'WARNING:' too (the deprecated 'mand' mount option's) is none: NOTICES below
lists those of the kernel, which the scan knowingly leaves alone.

--check-tree TREE: instead of scanning, check PATTERNS and NOTICES against
a kernel tree: each line that its printk calls (printk, printk_deferred,
pr_*(), and a file's macros around them) start with 'WARNING:' must be a
complaint or a listed notice. Prints each that is neither and exits 1;
notes the listed notices TREE lacks; ends with the counts.

--taint: CONSOLE must carry init's 'forklab: tainted N' (the last counts),
N with no bit outside --taint-allow (default TAINT_TEST, 'N': KUnit sets it).

--ktap OUT: a copy of CONSOLE in which each complaint fails the KTAP test
that was running, for kunit.py parse: the next result line becomes 'not ok
... # kernel complaint' after '# kernel complaint: KIND: TEXT', and so do
its enclosing groups. Before a group's result line (kunit.py counts leaves
only) a failed leaf 'kernel complaint' is added to the group; outside any
test, and for --taint, a top-level leaf 'boot'. Plans are raised to match.
"""

import argparse
import bisect
import os
import re
import subprocess
import sys

import forklab
from forklab import table

# Messages start with the tool's path below tools/.
PROG = 'judge/console-scan'

# (kind, pattern) searched in each line's message: the text after the printk
# timestamp, blanks stripped. The first match wins: specific kinds first.
# Anchored at the start of the message wherever the kernel prints it there,
# so that "traps: P[1] general protection fault" (user space) or a test
# quoting "BUG:" mid-line does not count.
PATTERNS = [
	('rss-counter', r'^BUG: Bad rss-counter state'),	# check_mm(), kernel/fork.c
	('bad-page-map', r'^BUG: Bad page map'),		# print_bad_pte(), mm/memory.c
	('bad-page', r'^BUG: Bad page state'),			# bad_page(), mm/page_alloc.c
	('pgtables-bytes', r'^BUG: non-zero pgtables_bytes'),	# check_mm()
	# mm/kasan/report.c; kasan_non_canonical_hook()'s "KASAN: ... in range"
	('kasan', r'^(BUG: )?KASAN: '),
	# the lockup detectors, kernel/watchdog.c (pr_fmt "watchdog: ")
	('soft-lockup', r'^(watchdog: )?BUG: soft lockup'),
	('hard-lockup', r'^(watchdog: )?Watchdog detected hard LOCKUP'),
	# any other: sleeping in atomic context, NULL dereference, UML's BUG()
	('bug', r'^BUG: '),
	('kernel-bug', r'^kernel BUG at '),	# BUG() with GENERIC_BUG: x86, arm64
	# die(): x86 "Oops: 0002 [#1] SMP", "[Oops: ]general protection fault",
	# arm64 "Internal error: Oops:"; kernel-mode faults on arm/arm64/riscv
	('oops', r'^(Internal error: )?Oops[: ]'),
	('oops', r'^general protection fault'),
	('oops', r'^Unable to handle kernel '),
	('panic', r'^Kernel panic - not syncing'),	# panic(), kernel/panic.c
	('ubsan', r'^UBSAN: '),				# ubsan_prologue(), lib/ubsan.c
	('kmemleak', r'^kmemleak: \d+ new suspected memory leak'),	# its scan thread
	# kernel/locking/lockdep.c's reports, by their headlines ("WARNING: ..."
	# since 4.x, "[ INFO: ... ]" before): print_circular_bug_header(),
	# print_deadlock_bug(), print_usage_bug(), print_irq_inversion_bug(),
	# print_bad_irq_dependency(), print_unlock_imbalance_bug(),
	# print_freed_lock_bug(), print_held_locks_bug(), lockdep_sys_exit(),
	# lockdep_rcu_suspicious() (RCU's), print_collision(),
	# print_lock_nested_lock_not_held(), print_lock_contention_bug()
	('lockdep', r'^(\[ )?(WARNING|INFO): (possible (circular|recursive) locking|'
	 r'inconsistent lock state|possible irq lock inversion|bad unlock balance|'
	 r'held lock freed|lock held when returning to user space|suspicious RCU usage|'
	 r'\S+-safe -> \S+-unsafe lock order|.+/\d+ still has locks held|'
	 r'chain_key collision|Nested lock was not taken|bad contention)'),
	# print_lock_invalid_wait_context(): a lock taken where its wait type
	# may not be
	('lockdep', r'^\[ BUG: Invalid wait context \]'),
	# __warn(), kernel/panic.c: WARN(), WARN_ON(), ... ("... at FILE:LINE
	# FUNC+OFF/LEN", or "... at FUNC+OFF/LEN" without the file). Not any
	# "WARNING:": the printk notices of NOTICES below start so too.
	('warning', r'^WARNING: CPU: \d+ PID: \d+ at \S'),
	('hung-task', r'^INFO: task .* blocked for more than'),	# kernel/hung_task.c
	# slab_bug(), mm/slub.c: "BUG kmalloc-64 (Tainted: G  B): Poison overwritten"
	('slub', r'^BUG \S+ \([^)]*\): '),
	# _swap_info_get() and friends, mm/swapfile.c: no prefix, no taint
	('swap-entry', r'^\S+: (Unused|Bad) swap (offset|file) entry'),
	# lockdep's assign_lock_key(): a lock with no static key
	('lockdep', r'^INFO: trying to register non-static key'),
	# RCU CPU stall warnings, kernel/rcu/tree_stall.h (pr_fmt "rcu: ")
	('rcu-stall', r'^(rcu: )?INFO: .*detected (expedited )?stall'),
]
PATTERNS = [(kind, re.compile(p)) for kind, p in PATTERNS]

# What the scan knowingly ignores: the kernel's printk notices that start a
# line with "WARNING:" as __warn() does, but are advice (a deprecated option,
# firmware or hardware trouble, an unwinder giving up on a frame): no WARN(),
# no taint, no report. Each as its printk format prints the line, with the
# function that prints it: every one in the trees forklab builds, 6.12's
# and 6.1's, all arches (a notice of code forklab never builds matches
# nothing either). A third field names the only tree that has it (default
# 6.12). None may match PATTERNS: main() refuses to scan if one does, and
# --check-tree checks the list against a tree's printk calls.
NOTICES = [
	# fs/, init/, kernel/, security/
	('WARNING: The mand mount option has been deprecated and', 'fs/namespace.c:warn_mandlock'),
	("WARNING: 'bootconfig' found on the kernel command line but CONFIG_BOOT_CONFIG is not set.",
	 'init/main.c:warn_bootconfig'),
	('WARNING: Flushing system-wide workqueues will be prohibited in near future.',
	 'kernel/workqueue.c:__warn_flushing_systemwide_wq'),
	("WARNING: Domain '%s' has too many ACLs to hold. Stopped learning mode.",
	 'security/tomoyo/util.c:tomoyo_domain_quota_is_ok'),
	# drivers/, sound/
	('WARNING: found both current and init_task canaries nearby?!',
	 'drivers/misc/lkdtm/bugs.c:__lkdtm_REPORT_STACK_CANARY'),
	('WARNING: driver %s did not remove its interrupt handler!',
	 'drivers/mmc/core/sdio_bus.c:sdio_bus_remove'),
	('WARNING: Support for NFTL with UnitSizeFactor 0x%02x is experimental',
	 'drivers/mtd/nftlmount.c:find_boot_record'),
	('WARNING: could not remove merge_entry from hashtable',
	 'drivers/net/ethernet/netronome/nfp/flower/conntrack.c:nfp_del_tc_merge_entry'),
	('WARNING: IOV space overlaps local config and interrupt message, truncating',
	 'drivers/parisc/sba_iommu.c:sba_ioc_init_pluto'),
	('WARNING: check, if the bios geometry is correct.',
	 'drivers/scsi/initio.c:i91u_biosparam'),
	('WARNING: Using fallback SPROM failed (err %d)', 'drivers/ssb/pci.c:ssb_pci_sprom_get'),
	('WARNING: Multiple EXTIFs found', 'drivers/ssb/scan.c:ssb_bus_scan'),
	('WARNING: Multiple ChipCommon found', 'drivers/ssb/scan.c:ssb_bus_scan'),
	('WARNING: Multiple MIPS cores found', 'drivers/ssb/scan.c:ssb_bus_scan'),
	('WARNING: Multiple PCI(E) cores found', 'drivers/ssb/scan.c:ssb_bus_scan'),
	("WARNING: Your 'console=ttyO%d' has been replaced by 'ttyS%d'",
	 'drivers/tty/serial/8250/8250_omap.c:omap8250_console_fixup'),
	("WARNING: fbcon: Driver '%s' missed to adjust virtual screen size (%ux%u vs. %ux%u)",
	 'drivers/video/fbdev/core/fbmem.c:fb_set_var'),
	("WARNING: stifb framebuffer driver does not support '%s' in double-buffer mode.",
	 'drivers/video/fbdev/stifb.c:stifb_init_fb'),
	('WARNING: Please disable the double-buffer mode in IPL menu (the PARISC-BIOS).',
	 'drivers/video/fbdev/stifb.c:stifb_init_fb'),
	('WARNING: G2 FIFO appears to be blocked.', 'sound/sh/aica.c:spu_write_wait'),
	# arch/x86/: the unwinders, firmware and CPU trouble at boot
	('WARNING: bogus zero IO-APIC address found in MPTABLE, disabling IO/APIC support!',
	 'arch/x86/kernel/apic/io_apic.c:io_apic_init_mappings'),
	('WARNING: Unprivileged eBPF is enabled with eIBRS+LFENCE mitigation and SMT, '
	 'data leaks possible via Spectre v2 BHB attacks!',
	 'arch/x86/kernel/cpu/bugs.c:cpu_bugs_smt_update'),
	("WARNING: BIOS bug: CPU MTRRs don't cover all of memory, losing %lluMB of RAM.",
	 'arch/x86/kernel/cpu/mtrr/cleanup.c:mtrr_trim_uncached_memory'),
	('WARNING: BIOS bug: VAR MTRR %d contains strange UC entry under 1M, check with your system vendor!',
	 'arch/x86/kernel/cpu/mtrr/cleanup.c:x86_get_mtrr_mem_range'),
	('WARNING: stack recursion on stack type %d',
	 'arch/x86/kernel/dumpstack_32.c:get_stack_info'),
	('WARNING: stack recursion on stack type %d',
	 'arch/x86/kernel/dumpstack_64.c:get_stack_info'),
	("WARNING: kernel stack regs at %p in %s:%d has bad 'bp' value %p",
	 'arch/x86/kernel/unwind_frame.c:unwind_next_frame'),
	('WARNING: kernel stack frame pointer at %p in %s:%d has bad value %p',
	 'arch/x86/kernel/unwind_frame.c:unwind_next_frame'),
	('WARNING: WARNING: bad lookup idx: idx=%u num=%u ip=%pB',
	 'arch/x86/kernel/unwind_orc.c:orc_find'),
	('WARNING: WARNING: bad lookup value: idx=%u num=%u start=%u stop=%u ip=%pB',
	 'arch/x86/kernel/unwind_orc.c:orc_find'),
	('WARNING: WARNING: Bad or missing .orc_unwind table.  Disabling unwinder.',
	 'arch/x86/kernel/unwind_orc.c:unwind_init'),
	('WARNING: WARNING: Corrupt .orc_unwind table.  Disabling unwinder.',
	 'arch/x86/kernel/unwind_orc.c:unwind_init'),
	('WARNING: missing R10 value at %pB', 'arch/x86/kernel/unwind_orc.c:unwind_next_frame'),
	('WARNING: missing R13 value at %pB', 'arch/x86/kernel/unwind_orc.c:unwind_next_frame'),
	('WARNING: missing RDI value at %pB', 'arch/x86/kernel/unwind_orc.c:unwind_next_frame'),
	('WARNING: missing DX value at %pB', 'arch/x86/kernel/unwind_orc.c:unwind_next_frame'),
	('WARNING: unknown SP base reg %d at %pB',
	 'arch/x86/kernel/unwind_orc.c:unwind_next_frame'),
	("WARNING: can't access registers at %pB",
	 'arch/x86/kernel/unwind_orc.c:unwind_next_frame'),
	("WARNING: can't access iret registers at %pB",
	 'arch/x86/kernel/unwind_orc.c:unwind_next_frame'),
	('WARNING: unknown .orc_unwind entry type %d at %pB',
	 'arch/x86/kernel/unwind_orc.c:unwind_next_frame'),
	('WARNING: unknown BP base reg %d for ip %pB',
	 'arch/x86/kernel/unwind_orc.c:unwind_next_frame'),
	('WARNING: stack going in the wrong direction? at %pB',
	 'arch/x86/kernel/unwind_orc.c:unwind_next_frame'),
	# the other arches
	('WARNING: This platform does not support off-mode, entering DeepSleep suspend.',
	 'arch/arm/mach-omap2/pm33xx-core.c:am33xx_check_off_mode_enable'),
	('WARNING: This platform does not support off-mode, entering DeepSleep suspend.',
	 'arch/arm/mach-omap2/pm33xx-core.c:am43xx_check_off_mode_enable'),
	('WARNING: %s', 'arch/arm64/kernel/proton-pack.c:unpriv_ebpf_notify'),
	('WARNING: x1-x3 nonzero in violation of boot protocol:',
	 'arch/arm64/kernel/setup.c:setup_arch'),
	('WARNING: WARNING: bad lookup idx: idx=%u num=%u ip=%pB',
	 'arch/loongarch/kernel/unwind_orc.c:orc_find'),
	('WARNING: WARNING: bad lookup value: idx=%u num=%u start=%u stop=%u ip=%pB',
	 'arch/loongarch/kernel/unwind_orc.c:orc_find'),
	('WARNING: WARNING: Bad or missing .orc_unwind table.  Disabling unwinder.',
	 'arch/loongarch/kernel/unwind_orc.c:unwind_init'),
	('WARNING: WARNING: Corrupt .orc_unwind table.  Disabling unwinder.',
	 'arch/loongarch/kernel/unwind_orc.c:unwind_init'),
	('WARNING: unknown SP base reg %d at %pB',
	 'arch/loongarch/kernel/unwind_orc.c:unwind_next_frame'),
	('WARNING: unknown FP base reg %d at %pB',
	 'arch/loongarch/kernel/unwind_orc.c:unwind_next_frame'),
	('WARNING: unknown ra base reg %d at %pB',
	 'arch/loongarch/kernel/unwind_orc.c:unwind_next_frame'),
	('WARNING: unknown .orc_unwind entry type %d at %pB',
	 'arch/loongarch/kernel/unwind_orc.c:unwind_next_frame'),
	('WARNING: No board configuration data found!',
	 'arch/mips/ath25/board.c:ath25_find_config'),
	('WARNING: broken board data detected', 'arch/mips/ath25/board.c:ath25_find_config'),
	('WARNING: Could not find Radio Configuration data',
	 'arch/mips/ath25/board.c:ath25_find_config'),
	('WARNING: PCI clock is %dMHz, setting pci_clock',
	 'arch/mips/mti-malta/malta-setup.c:pci_clock_check'),
	('WARNING: IDE timing calculations will be incorrect',
	 'arch/mips/mti-malta/malta-setup.c:pci_clock_check'),
	('WARNING: No FP CoProcessor?! (coproc_cfg.ccr_functional == 0x%lx, expected 0xc0)',
	 'arch/parisc/kernel/processor.c:init_per_cpu'),
	('WARNING: nullifying cache flush/purge instruction',
	 'arch/parisc/mm/fault.c:handle_nadtlb_fault'),
	('WARNING: nvram partition checksum was %02x, should be %02x!',
	 'arch/powerpc/kernel/nvram_64.c:nvram_scan_partitions'),
	('WARNING: nvram corruption detected: 0-length partition',
	 'arch/powerpc/kernel/nvram_64.c:nvram_scan_partitions'),
	('WARNING: Estimating decrementer frequency (not found)',
	 'arch/powerpc/kernel/time.c:generic_calibrate_decr'),
	('WARNING: Estimating processor frequency (not found)',
	 'arch/powerpc/kernel/time.c:generic_calibrate_decr'),
	('WARNING: Ignoring cmdline option disable_radix',
	 'arch/powerpc/mm/init_64.c:early_check_vec5'),
	('WARNING: Ignoring cmdline option disable_radix',
	 'arch/powerpc/mm/init_64.c:mmu_early_init_devtree'),
	('WARNING: Estimating processor frequency (not found)',
	 'arch/powerpc/platforms/8xx/m8xx_setup.c:mpc8xx_calibrate_decr'),
	('WARNING: DTL deregistration for cpu %d (hw %d) failed with %d',
	 'arch/powerpc/platforms/pseries/kexec.c:pseries_kexec_cpu_down'),
	('WARNING: SLB shadow buffer deregistration for cpu %d (hw %d) failed with %d',
	 'arch/powerpc/platforms/pseries/kexec.c:pseries_kexec_cpu_down'),
	('WARNING: VPA deregistration for cpu %d (hw %d) failed with %d',
	 'arch/powerpc/platforms/pseries/kexec.c:pseries_kexec_cpu_down'),
	('WARNING: Missing the following errata may cause potential issues',
	 'arch/riscv/errata/sifive/errata.c:warn_miss_errata'),
	('WARNING: ADI tag size >4 on this platform. Disabling AADI support',
	 'arch/sparc/kernel/adi_64.c:mdesc_adi_init'),
	('WARNING: CPU#%d: NMI appears to be stuck (%d->%d)!',
	 'arch/sparc/kernel/nmi.c:report_broken_nmi'),
	('WARNING: FPU exception from kernel mode. at pc=%08lx',
	 'arch/sparc/kernel/traps_32.c:do_fpe_trap'),
	# 6.1's own: deprecations, clocksource trouble (CONFIG_DEBUG_TIMEKEEPING)
	('WARNING: the dlm DLM_LSFL_TIMEWARN flag is being deprecated and',
	 'fs/dlm/lockspace.c:new_lockspace', '6.1'),
	('WARNING: the lkb timeout feature is being deprecated and',
	 'fs/dlm/user.c:device_user_lock', '6.1'),
	("WARNING: timekeeping: Cycle offset (%lld) is larger than allowed by the '%s' "
	 "clock's max_cycles value (%lld): time overflow danger",
	 'kernel/time/timekeeping.c:timekeeping_check_update', '6.1'),
	("WARNING: Underflow in clocksource '%s' observed, time update ignored.",
	 'kernel/time/timekeeping.c:timekeeping_check_update', '6.1'),
	("WARNING: Overflow in clocksource '%s' observed, time update capped.",
	 'kernel/time/timekeeping.c:timekeeping_check_update', '6.1'),
	('WARNING: workqueue cpumask: online intersect > possible intersect',
	 'kernel/workqueue.c:wq_calc_node_cpumask', '6.1'),
	('WARNING: both MMC/SD and NAND are enabled, but they share AEMIF pins',
	 'arch/arm/mach-davinci/board-da830-evm.c:da830_evm_init_nand', '6.1'),
	('WARNING: Switching to polling CPE handler; error records may be lost',
	 'arch/ia64/kernel/mca.c:ia64_mca_cpe_int_handler', '6.1'),
	('WARNING: Switching to polling CMC handler; error records may be lost',
	 'arch/ia64/kernel/mca.c:ia64_mca_cmc_int_handler', '6.1'),
]

# --check-tree: the kernel's own printk calls, and a file's macros that wrap
# one (orc_warn()); 'pr_fmt' prefixes the pr_*() ones. Not kernel code: the
# tree's user-space tools, scripts, samples, docs.
PRINTK = (r'printk(_once|_ratelimited|_deferred(_once)?)?|vprintk|'
	  r'pr_(emerg|alert|crit|err|warn(ing)?|notice|info|cont|devel|debug)'
	  r'(_once|_ratelimited)?')
C_TOKEN = re.compile(r'\s+|/\*.*?\*/|"((?:[^"\\\n]|\\.)*)"|(\w+)', re.S)
C_DEFINE = re.compile(r'^[ \t]*#[ \t]*(define|undef)[ \t]+(\w+)(\(([^)]*)\))?'
		      r'((?:[^\n]*\\\n)*[^\n]*)', re.M)
C_CALL = re.compile(r'(\w+)\s*\(')
NOT_KERNEL = ('tools/', 'scripts/', 'samples/', 'Documentation/', 'usr/')
# printf conversions, filled in to match a notice's line against PATTERNS
CONVERSION = re.compile(r'%[-+ #0]*(\d+|\*)?(\.\d+)?(hh|h|ll|l|z|t|j)?([diouxXcs%]|p[A-Za-z]*)')

# The printk timestamp and CONFIG_PRINTK_CALLER's id; KTAP result lines.
TIMESTAMP = re.compile(r'^(\[\s*\d+\.\d+\])?(\[\s*[TC]\d+\])?')
RESULT_MSG = re.compile(r'^(not )?ok \d+\b')
TAINT_LINE = re.compile(r'^forklab: tainted (\d+)$')
TAINT_LETTERS = 'PFSRMBUDAWCIOELKXTNJ'	# by bit, as print_tainted() has them
TAINT_TEST = 1 << 18
SHOWN = 20
TEXT_MAX = 200
COMPLAINT = 'kernel complaint'

# KTAP as kunit_parser.py reads it, so that OUT parses as intended.
KTAP_START = re.compile(r'\s*K?TAP version ([0-9]+)$')
KTAP_END = re.compile(r'\s*(List of all partitions:|'
		      r'Kernel panic - not syncing: VFS:|reboot: System halted)')
TEST_RESULT = re.compile(r'^(\s*)(ok|not ok) ([0-9]+) (- )?([^#]*)( # .*)?$')
TEST_PLAN = re.compile(r'^(\s*)1\.\.([0-9]+)')


class ScanError(Exception):
	"""Bad input: the message is the one error line."""


def scan(lines):
	"""[(index, kind, text)] of the complaints; (index, mask) of the last
	taint line, or None."""
	found, taint = [], None
	for i, line in enumerate(lines):
		msg = line[TIMESTAMP.match(line).end():].strip()
		if not msg or msg[0] == '#' or msg.startswith(PROG + ':') or \
		   RESULT_MSG.match(msg):
			continue
		m = TAINT_LINE.match(msg)
		if m:
			taint = (i, int(m.group(1)))
			continue
		kind = complaint_kind(msg)
		if kind:
			if len(msg) > TEXT_MAX:
				msg = msg[:TEXT_MAX - 3] + '...'
			found.append((i, kind, msg))
	return found, taint


def render(fmt):
	"""A printk format's line as the console shows it: conversions filled in."""
	def sample(m):
		conv = m.group(4)
		return {'%': '%', 's': 'x', 'c': 'x'}.get(conv, '1') if conv[0] != 'p' \
			else 'func+0x10/0x20'
	return CONVERSION.sub(sample, fmt)


def complaint_kind(msg):
	return next((k for k, p in PATTERNS if p.search(msg)), None)


def check_notices():
	"""ScanError if a pattern matches a notice: the two lists disagree."""
	for text, where, *_ in NOTICES:
		kind = complaint_kind(render(text))
		if kind:
			raise ScanError(f"PATTERNS' {kind} matches the notice '{text}' "
					f'({where}), which NOTICES says is none')


def c_literals(text, pos, strings):
	"""The string literals that start a call's arguments at pos, KERN_
	levels left out and string macros expanded; and the word after them
	(a macro's fmt parameter), or ''."""
	out = []
	while True:
		m = C_TOKEN.match(text, pos)
		if not m:
			return ''.join(out), ''
		pos = m.end()
		if m.group(1) is not None:
			out.append(m.group(1))
		elif m.group(2) and m.group(2).startswith('KERN_'):
			continue
		elif m.group(2) in strings:
			out.append(strings[m.group(2)])
		elif m.group(2):
			return ''.join(out), m.group(2)


def c_function(text, pos):
	"""The function around pos: the name on the line that starts its
	definition (kernel style: '{' alone at the start of a line)."""
	brace = text.rfind('\n{', 0, pos)
	if brace < 0 or text.rfind('\n}', brace, pos) >= 0:
		return '(file scope)'
	for line in reversed(text[:brace].split('\n')[-30:]):
		m = C_CALL.search(line) if re.match(r'[A-Za-z_]', line) else None
		if m:
			return m.group(1)
	return '(unknown)'


def tree_warnings(tree):
	"""[(path, lineno, function, line)] of each printk call in tree that
	prints a line starting 'WARNING:', line as its format has it."""
	try:
		files = subprocess.run(['grep', '-rlE', '--include=*.c', '--include=*.h',
					'WARNING:', '.'], cwd=tree, capture_output=True,
				       text=True, check=False).stdout.split()
	except OSError as e:
		raise ScanError(f'cannot grep {tree}: {e.strerror}') from e
	found = []
	for path in sorted(f[2:] for f in files):
		if path.startswith(NOT_KERNEL):
			continue
		with open(os.path.join(tree, path), errors='replace') as f:
			text = f.read()
		strings, macros, pr_fmts = {}, [], []
		for m in C_DEFINE.finditer(text):
			directive, name, params, body = m.group(1, 2, 4, 5)
			body = body.replace('\\\n', ' ')
			if name == 'pr_fmt':	# its prefix here on: '' none, None unknown
				lit, word = c_literals(body, 0, strings) if params else ('', 'fmt')
				pr_fmts.append((m.start(), lit if word == 'fmt' else None))
			elif directive == 'undef':
				continue
			elif params is None:
				lit, word = c_literals(body, 0, {})
				if lit and not word:
					strings[name] = lit
			else:
				macros.append((m.start(), m.end(), name, params, body))
		# wrappers: macro name -> (its prefix, whether pr_fmt applies)
		wrappers, callees, more = {}, PRINTK, True
		while more:
			more = False
			for _, _, name, params, body in macros:
				fmt = params.split(',')[0].strip().rstrip('.') or '__VA_ARGS__'
				for c in re.finditer(rf'\b({callees})\s*\(', body):
					lit, word = c_literals(body, c.end(), strings)
					inner, pr = wrappers.get(c.group(1), ('', c.group(1).startswith('pr_')))
					if name not in wrappers and inner + lit and \
					   word in (fmt, 'args', '__VA_ARGS__'):
						wrappers[name] = (inner + lit, pr)
						more = True
			callees = PRINTK + ''.join('|' + re.escape(w) for w in wrappers)
		for c in re.finditer(rf'\b({callees})\s*\(', text):
			if any(start <= c.start() < end for start, end, *_ in macros):
				continue
			lit, _ = c_literals(text, c.end(), strings)
			prefix, pr = wrappers.get(c.group(1), ('', c.group(1).startswith('pr_')))
			fmt = [f for at, f in pr_fmts if at < c.start()]
			if pr and fmt and fmt[-1] != '':
				continue
			for line in (prefix + lit).replace('\\t', ' ').split('\\n'):
				line = line.replace('\\"', '"').strip()
				if line.startswith('WARNING:'):
					found.append((path, text.count('\n', 0, c.start()) + 1,
						      c_function(text, c.start()), line))
	return found


def tree_line(tree):
	"""The stable line of a tree's Makefile (6.12), or ''."""
	return '.'.join(forklab.tree_version(tree).split('.')[:2])


def check_tree(tree):
	"""--check-tree: 0 when every 'WARNING:' line of tree's printk calls is
	a complaint or a listed notice, else 1; the others printed."""
	if not os.path.isfile(os.path.join(tree, 'kernel', 'panic.c')):
		raise ScanError(f'{tree} is not a kernel tree (no kernel/panic.c)')
	listed = {(text, where) for text, where, *_ in NOTICES}
	line_of_tree = tree_line(tree)
	seen, complaints, notices, neither = set(), 0, 0, 0
	for path, lineno, function, line in tree_warnings(tree):
		where = f'{path}:{function}'
		seen.add((line, where))
		if complaint_kind(render(line)):
			complaints += 1
		elif (line, where) in listed:
			notices += 1
		else:
			neither += 1
			print(f'{PROG}: {tree}/{path}:{lineno}: {function}(): neither a '
			      f'complaint nor a listed notice: {line}')
	for text, where, *only in NOTICES:
		line = only[0] if only else table.trees()[0]
		if (text, where) not in seen and line == line_of_tree:
			print(f'{PROG}: note: a listed notice of {line} that {tree} lacks: '
			      f'{where}: {text}')
		elif (text, where) in seen and only and line != line_of_tree:
			print(f'{PROG}: note: a listed notice of {line} only that {tree} '
			      f'({line_of_tree}) has too: {where}: {text}')
	print(f'{PROG}: {tree}: {complaints + notices + neither} printk lines start '
	      f'"WARNING:": {complaints} complaints, {notices} listed notices, '
	      f'{neither} neither')
	return 1 if neither else 0


def flags(mask):
	return ''.join(TAINT_LETTERS[b] if b < len(TAINT_LETTERS) else f'({b})'
		       for b in range(mask.bit_length()) if mask >> b & 1)


def check_taint(taint, allow, nlines):
	if taint is None:
		return (nlines - 1, 'taint', 'no final taint mask on the console '
			'(the boot ended before init printed it)')
	i, mask = taint
	if not mask & ~allow:
		return None
	allowed = f' (allowed: {flags(mask & allow)})' if mask & allow else ''
	return (i, 'taint', f'tainted {mask}: {flags(mask)}{allowed}')


def diag(pad, cs):
	return [f'{pad}# {COMPLAINT}: {kind}: {text}' for _, kind, text in cs]


def rewrite(lines, complaints, positional):
	"""--ktap's OUT: per line, its index in lines or its new text."""
	start = next((i for i, l in enumerate(lines) if KTAP_START.search(l)), None)
	before, replace = {}, {}	# index -> lines to insert before it / new text
	fails = {}			# result line index -> 'own' or 'group'
	boot = [c for c in complaints if c not in positional]
	if start is None:
		if complaints:
			before[len(lines)] = ['KTAP version 1', '1..1'] + \
				diag('', complaints) + [f'not ok 1 boot # {COMPLAINT}']
		return edit(lines, before, replace)

	plen = len(lines[start].split('KTAP version' if 'KTAP version' in
				      lines[start] else 'TAP version')[0])
	end = next((i for i in range(start + 1, len(lines))
		    if KTAP_END.search(lines[i])), len(lines))
	body = {i: lines[i][plen:].rstrip() for i in range(start + 1, end)}
	results = [(i, len(m.group(1)), int(m.group(3)), m.group(5), m.group(6))
		   for i in body for m in [TEST_RESULT.match(body[i])] if m]
	where = [r[0] for r in results]

	def add_leaf(at, indent, num, name, cs, prefix):
		"""A failed leaf before line at; its group's plan raised to num."""
		pad = prefix + ' ' * indent
		before.setdefault(at, []).extend(
			diag(pad, cs) + [f'{pad}not ok {num} {name} # {COMPLAINT}'])
		plan = None	# the group's: the earliest at its indent
		for i in range(at - 1, start, -1):
			m = TEST_RESULT.match(body[i])
			if m and len(m.group(1)) < indent:
				break
			m = TEST_PLAN.match(body[i])
			if m and len(m.group(1)) == indent:
				plan = (i, m)
		if plan and int(plan[1].group(2)) < num:
			i, m = plan
			replace[i] = lines[i][:plen + m.start(2)] + str(num) + \
				lines[i][plen + m.end(2):]

	by_result = {}
	for c in positional:
		k = bisect.bisect(where, c[0])
		if c[0] < start or k == len(results):
			boot.append(c)
		else:
			by_result.setdefault(k, []).append(c)
	for k, cs in sorted(by_result.items()):
		i, indent = results[k][:2]
		if k and results[k - 1][1] > indent:	# i closes a group
			child = results[k - 1]
			add_leaf(i, child[1], child[2] + 1, COMPLAINT, cs, lines[i][:plen])
		else:
			before.setdefault(i, []).extend(diag(lines[i][:plen] + ' ' * indent, cs))
		fails[i] = 'own'
		for j, outer, *_ in results[k + 1:]:
			if not indent:
				break
			if outer < indent:
				fails.setdefault(j, 'group')
				indent = outer
	if boot:
		top = [r for r in results if r[1] == 0]
		add_leaf(end, 0, top[-1][2] + 1 if top else 1, 'boot',
			 sorted(boot, key=lambda c: c[0]), lines[start][:plen])
	for i, how in fails.items():
		_, indent, num, name, directive = results[where.index(i)]
		if how == 'own' or not directive or directive.startswith(' # SKIP'):
			directive = f' # {COMPLAINT}'
		replace[i] = f'{lines[i][:plen]}{" " * indent}not ok {num} {name.rstrip()}{directive}'
	return edit(lines, before, replace)


def edit(lines, before, replace):
	return [x for i in range(len(lines) + 1) for x in before.get(i, []) +
		([replace.get(i, i)] if i < len(lines) else [])]


def write_ktap(path, raw, out, final_newline):
	data = b'\n'.join(raw[x] if isinstance(x, int) else x.encode() for x in out)
	if out and (final_newline or not isinstance(out[-1], int)):
		data += b'\n'
	try:
		with open(path + '.tmp', 'wb') as f:
			f.write(data)
		os.replace(path + '.tmp', path)
	except OSError as e:
		if os.path.exists(path + '.tmp'):
			os.unlink(path + '.tmp')
		raise ScanError(f'cannot write {path}: {e.strerror}') from e


def mask_arg(s):
	if not re.fullmatch(r'[0-9]+|0[xX][0-9a-fA-F]+', s):
		raise argparse.ArgumentTypeError(f"'{s}' is not a decimal or 0x mask")
	return int(s, 16 if s[:2] in ('0x', '0X') else 10)


def main(argv):
	parser = forklab.ArgumentParser(prog=PROG, description=__doc__,
			formatter_class=argparse.RawDescriptionHelpFormatter)
	parser.add_argument('console', metavar='CONSOLE', nargs='?',
			    help='kernel console log')
	parser.add_argument('--taint', action='store_true',
			    help="require init's final 'forklab: tainted N' line")
	parser.add_argument('--taint-allow', metavar='MASK', type=mask_arg,
			    default=TAINT_TEST, help='taint bits that do not fail '
			    f'the run (decimal or 0x; default {TAINT_TEST}: N)')
	parser.add_argument('--ktap', metavar='OUT',
			    help='write CONSOLE to OUT with complaints as failed tests')
	parser.add_argument('--check-tree', metavar='TREE',
			    help='check PATTERNS and NOTICES against the printk '
			    'calls of a kernel tree instead of scanning')
	sys.stdout.reconfigure(errors='backslashreplace')
	try:
		args = parser.parse_args(argv)
		check_notices()
		if args.check_tree:
			if args.console or args.taint or args.ktap:
				raise ScanError('--check-tree takes no CONSOLE, --taint or --ktap')
			return check_tree(args.check_tree)
		if not args.console:
			raise ScanError('no CONSOLE given')
		try:
			with open(args.console, 'rb') as f:
				raw = f.read().split(b'\n')
		except OSError as e:
			raise ScanError(f'cannot read {args.console}: {e.strerror}') from e
		final_newline = raw[-1] == b''
		if final_newline:
			raw.pop()
		lines = [r.decode('utf-8', errors='replace').rstrip('\r') for r in raw]
		found, taint = scan(lines)
		complaints = list(found)
		t = check_taint(taint, args.taint_allow, len(lines)) if args.taint else None
		if t:
			complaints = sorted(complaints + [t], key=lambda c: c[0])
		if args.ktap:
			write_ktap(args.ktap, raw, rewrite(lines, complaints, found),
				   final_newline)
	except ScanError as e:
		forklab.die(PROG, e, forklab.BAD_INPUT)
	for i, kind, text in complaints[:SHOWN]:
		print(f'{PROG}: {args.console}:{i + 1}: {kind}: {text}')
	if len(complaints) > SHOWN:
		print(f'{PROG}: ... and {len(complaints) - SHOWN} more')
	return 1 if complaints else 0


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
