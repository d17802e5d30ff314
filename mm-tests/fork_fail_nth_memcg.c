// SPDX-License-Identifier: GPL-2.0
/*
 * fork_fail_nth_memcg: fork_fail_nth's walk in a memory cgroup of its
 * own, under vm.overcommit_memory=2 (fork_fail_nth.c says what it checks).
 */
#define FORK_FAIL_NTH_MEMCG	1
#include "fork_fail_nth.c"
