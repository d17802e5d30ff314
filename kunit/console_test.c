// SPDX-License-Identifier: GPL-2.0
/*
 * forklab_console: the kernel's own verdict on the suites before it.
 *
 * tools/judge/console-scan fails the test during which the console printed a
 * complaint (WARNING:, BUG:, Bad rss-counter, ...). A taint without a
 * line to scan would still slip through, and a complaint printed after
 * the last test has no test to fail. So this suite, linked after every
 * other forklab suite (kunit/Makefile), asks the kernel whether anything
 * tainted it: KUnit itself sets TAINT_TEST ('N') whenever it runs a
 * test, and nothing else may be set. A WARN_ON() anywhere in fork's
 * code sets TAINT_WARN ('W'); bad_page() and print_bad_pte() set
 * TAINT_BAD_PAGE ('B'); an oops sets TAINT_DIE ('D').
 */
#include <kunit/test.h>
#include <linux/panic.h>

static void kernel_not_tainted(struct kunit *test)
{
	unsigned long taint = get_taint();

	kunit_info(test, "forklab: tainted %lu (%s)\n", taint, print_tainted());
	KUNIT_EXPECT_EQ_MSG(test, taint & ~BIT(TAINT_TEST), 0UL,
			    "the kernel was tainted: %s", print_tainted());
}

static struct kunit_case console_test_cases[] = {
	KUNIT_CASE(kernel_not_tainted),
	{}
};

static struct kunit_suite console_test_suite = {
	.name = "forklab_console",
	.test_cases = console_test_cases,
};

kunit_test_suite(console_test_suite);

MODULE_DESCRIPTION("KUnit check that forklab's suites left the kernel untainted");
MODULE_LICENSE("GPL");
