# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tests/bench.sh: the tests of tools/bench/: the report on fixture figures, bad
# input, and the benchmark programs in UML.
# Sourced by tests/run (t, tk, expect_exit, ... are its).

bench_report() { "$here/tools/bench/report" "$@"; }

# The report of known figures: medians, slopes and the ratio as computed
# by hand for tests/fixtures/bench (always 1, 6, 11 ms at 0, 512, 1024
# MiB; lazy 1, 1, 1.1; kbuild: lazy 1026 faults against always's 1001),
# and every file of docs/. A report that misread the samples (means for
# medians, another size for the largest) or drew no plot fails here.
t bench_report_computes_the_figures
bench_report_computes_the_figures() {
	expect_exit 0 bench_report --in "$fixtures/bench" --docs "$scratch/docs" &&
	expect_in '^bench: um: always/lazy fork time at 1024 MiB: 10.0x (slope always 0.98 ms/100 MiB, lazy 0.01)$' "$scratch/stdout" &&
	expect_in '^bench: x86_64: always/lazy fork time at 1024 MiB: 10.0x' "$scratch/stdout" &&
	expect_in '^bench: host: fork time at 1024 MiB: 0.30 ms, at 0 MiB: 0.20 ms' "$scratch/stdout" &&
	expect_in '^bench: um kbuild: lazy minor faults +2.5% against always (Nick: +2.5%), outside the noise; elapsed -1.2%, within the noise$' "$scratch/stdout" &&
	local f
	for f in RESULTS.md fork-time.png fork-time.svg fork-ptes.png fork-ptes.svg kbuild.png kbuild.svg; do
		[ -s "$scratch/docs/$f" ] || { fail "no docs/$f"; return; }
	done
	expect_in '^| 1024 | always | 11.00 | 10.90 | 11.10 | 262144 | 262144 | 262144 |$' "$scratch/docs/RESULTS.md" &&
	expect_in '| minor faults (rusage) | 1001 (1000..1002) |' "$scratch/docs/RESULTS.md" &&
	expect_in '`skip-shared` and `lazy`: within noise at every size' "$scratch/docs/RESULTS.md"
}

# The exact counts are checked: a fork under always that copied one pte
# fewer than the segment's pages, one under lazy that copied any, a size
# without a policy's figures, a failed forkbench check, a kbuild under lazy
# that skipped no vma: each fails the bench with one line naming it, and
# docs/ is not touched.
t bench_report_fails_wrong_counts
bench_report_fails_wrong_counts() {
	mkdir -p "$scratch/in" "$scratch/kept-docs" &&
	cp "$fixtures/bench/"* "$scratch/in/" &&
	echo keep > "$scratch/kept-docs/RESULTS.md" &&
	sed -i 's/mib=512 policy=always forks=3 pages=131072 ptes=131072/mib=512 policy=always forks=3 pages=131072 ptes=131071/' \
		"$scratch/in/fork-um.ktap" &&
	expect_exit 1 bench_report --in "$scratch/in" --docs "$scratch/kept-docs" &&
	one_line_stderr &&
	expect_in 'um: fork_copy=always at 512 MiB: 131071 ptes of the segment copied per fork, want 131072' "$scratch/stderr" &&
	cp "$fixtures/bench/fork-um.ktap" "$scratch/in/" &&
	sed -i 's/mib=1024 policy=lazy forks=3 pages=262144 ptes=0/mib=1024 policy=lazy forks=3 pages=262144 ptes=7/' \
		"$scratch/in/fork-x86_64.ktap" &&
	expect_exit 1 bench_report --in "$scratch/in" --docs "$scratch/kept-docs" &&
	one_line_stderr && expect_in 'x86_64: fork_copy=lazy at 1024 MiB: 7 ptes of the segment copied per fork, want 0' "$scratch/stderr" &&
	cp "$fixtures/bench/fork-x86_64.ktap" "$scratch/in/" &&
	sed -i '/policy=skip-shared/d' "$scratch/in/fork-um.ktap" &&
	expect_exit 1 bench_report --in "$scratch/in" --docs "$scratch/kept-docs" &&
	one_line_stderr && expect_in 'um: no figures for fork_copy=skip-shared at 0 MiB' "$scratch/stderr" &&
	cp "$fixtures/bench/fork-um.ktap" "$scratch/in/" &&
	sed -i 's/^ok 5 /not ok 5 /' "$scratch/in/fork-um.ktap" &&
	expect_exit 1 bench_report --in "$scratch/in" --docs "$scratch/kept-docs" &&
	one_line_stderr && expect_in 'forkbench failed a check: not ok 5' "$scratch/stderr" &&
	cp "$fixtures/bench/fork-um.ktap" "$scratch/in/" &&
	sed -i '0,/policy=lazy status=0 \(.*\) vma_skip=1103/s//policy=lazy status=0 \1 vma_skip=0/' "$scratch/in/kbuild-um.txt" &&
	expect_exit 1 bench_report --in "$scratch/in" --docs "$scratch/kept-docs" &&
	one_line_stderr && expect_in 'under fork_copy=lazy: counters unlike the policy' "$scratch/stderr" &&
	[ "$(cat "$scratch/kept-docs/RESULTS.md")" = keep ] &&
	[ "$(ls "$scratch/kept-docs")" = RESULTS.md ] || fail "docs/ was written"
}

# Bad input: one error line, a non-zero exit, nothing booted.
t bench_tools_reject_bad_input
bench_tools_reject_bad_input() {
	expect_exit 1 "$here/tools/bench/fork" && one_line_stderr &&
	expect_exit 1 "$here/tools/bench/fork" sparc && one_line_stderr &&
	expect_in "unknown target 'sparc'" "$scratch/stderr" &&
	expect_exit 1 env BENCH_SIZES="16 lots" "$here/tools/bench/fork" um &&
	one_line_stderr && expect_in "'lots' is not a MiB count" "$scratch/stderr" &&
	expect_exit 1 env BENCH_FORKS=0 "$here/tools/bench/fork" host && one_line_stderr &&
	expect_exit 1 env SEED="$scratch/none" BENCH_OUT="$scratch/out" \
		"$here/tools/bench/fork" host && one_line_stderr &&
	expect_in 'no seed' "$scratch/stderr" &&
	expect_exit 1 env BENCH_RUNS=0 "$here/tools/bench/kbuild" && one_line_stderr &&
	expect_exit 1 "$here/tools/bench/kbuild" extra && one_line_stderr &&
	expect_exit 1 "$here/tools/bench/all" --bogus && one_line_stderr &&
	expect_exit 1 bench_report --in "$scratch/none" --docs "$scratch/docs" &&
	one_line_stderr && expect_in 'run tools/bench/fork um' "$scratch/stderr" &&
	expect_exit 125 "$here/tools/guest/qemu-run" --host-root /bin/true && one_line_stderr
}

# forkbench in UML, two sizes: one result per size and policy, and the
# segment's ptes counted as always copying 256 a MiB and lazy none. A
# forkbench that did not switch the policy between forks, or timed the
# wrong fork, fails here before any bench is run.
tk forkbench_counts_each_policy
forkbench_counts_each_policy() {
	local bin=$build/mm-tests/forkbench
	[ -x "$kernel" ] && [ -x "$bin" ] ||
		{ skip "no UML kernel or forkbench yet ('make test' builds them)"; return; }
	expect_exit 0 "$here/tools/guest/uml-run" --timeout 120 --mem 512M "$bin" -k 2 0 2 &&
	[ "$(grep -c '^ok ' "$scratch/stdout")" = 6 ] ||
		{ fail "want 6 results: $(head -c 600 "$scratch/stdout")"; return; }
	expect_in '^# bench: mib=2 policy=always forks=2 pages=512 ptes=512 skips=0 forced=1 present=512 ' "$scratch/stdout" &&
	expect_in '^# bench: mib=2 policy=lazy forks=2 pages=512 ptes=0 skips=1 forced=0 present=0 ' "$scratch/stdout" &&
	expect_in '^# bench: mib=2 policy=skip-shared forks=2 pages=512 ptes=0 skips=1 forced=0 present=0 ' "$scratch/stdout"
}

# kbuild_bench runs its command in the host's / (read-only: a write to it
# must fail, or the bench could write the host) under each policy, and
# the counters show the policies apart: lazy skips vmas, always does not.
tk kbuild_bench_runs_in_read_only_host_root
kbuild_bench_runs_in_read_only_host_root() {
	local bin=$build/mm-tests/kbuild_bench
	[ -x "$kernel" ] && [ -x "$bin" ] ||
		{ skip "no UML kernel or kbuild_bench yet ('make test' builds them)"; return; }
	expect_exit 0 "$here/tools/guest/uml-run" --host-root --timeout 120 --mem 512M "$bin" \
		"test -x /usr/bin/make && ! touch /etc/forklab-write-probe 2>/dev/null && mkdir /dev/shm/build && sh -c true" \
		always lazy &&
	expect_in '^bench: kbuild policy=always status=0 .* vma_skip=0 ' "$scratch/stdout" &&
	expect_in '^bench: kbuild policy=lazy status=0 .* vma_skip=[1-9]' "$scratch/stdout" &&
	[ ! -e /etc/forklab-write-probe ] || fail "the guest wrote the host's /etc"
}
