// SPDX-License-Identifier: GPL-2.0
/*
 * fork_fail_nth_gen2: fork_fail_nth one generation down. The process
 * that maps every row forks once, and its child walks fork's
 * allocations: each fork it makes is of a second generation (two
 * anon_vmas per anon vma, swap entries and KSM pages shared with a live
 * parent), and each child a grandchild. See become_second_generation().
 */
#define FORK_FAIL_NTH_GENERATION	2
#include "fork_fail_nth.c"
