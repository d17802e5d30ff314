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
	expect_in '^bench: um kbuild: lazy minor faults +2.5% against always (Nick: +2.5%), outside the noise; elapsed -1.2%, within the noise; paired' "$scratch/stdout" &&
	expect_in '^bench: x86_64 private: fork time 4k 0.51 ms/100 MiB, 64k 0.26 ms/100 MiB, thp 0.05 ms/100 MiB, hugetlb 0.05 ms/100 MiB; at 1024 MiB 4k/64k 1.9x, 4k/thp 7.7x, 4k/hugetlb 7.7x$' "$scratch/stdout" &&
	expect_in '^bench: um trade-off, 64 MiB: shm break-even at f = 0.01 (lazy measurably cheaper up to f = 0, measurably dearer from f = 0.0625); file break-even at f = 0.16 (lazy measurably cheaper up to f = 0.0625, measurably dearer from f = 0.25)$' "$scratch/stdout" &&
	expect_in '^bench: x86_64 model: fork = 100.00 us + 10.00 us/vma + 20.0 ns/pte + 1000.0 ns/pmd + 1000.0 ns/hugetlb pte; fault 2.00 us (r2 1.000, 1.000); pte floor 7.2 ns$' "$scratch/stdout" &&
	expect_in '^bench: um model: fork = 100.00 us + 10.00 us/vma + 20.0 ns/pte; fault' "$scratch/stdout" &&
	expect_in 'paired 95% CI of the faults +2.50% .. +2.50%$' "$scratch/stdout" &&
	local f
	for f in RESULTS.md fork-time.png fork-time.svg fork-ptes.png fork-ptes.svg kbuild.png kbuild.svg \
		private-time.png private-time.svg tradeoff.png tradeoff.svg; do
		[ -s "$scratch/docs/$f" ] || { fail "no docs/$f"; return; }
	done
	expect_in '^| 1024 | always | 11.00 | 10.90 | 11.10 | 262144 | 262144 | 262144 |$' "$scratch/docs/RESULTS.md" &&
	expect_in '| minor faults (rusage) | 1001 (1000..1002) |' "$scratch/docs/RESULTS.md" &&
	expect_in '`skip-shared` and `lazy`: within noise at every size' "$scratch/docs/RESULTS.md" &&
	expect_in '^| um | 1024 MiB | 5.43 (5.38..5.49) | 8.15 (8.07..8.23) | 1.50x | apart |$' "$scratch/docs/RESULTS.md" &&
	expect_in '^| thp | 1024 | 0.70 | 0.70 | 0.71 | 0 | 512 | 0 | 262144 | 1024 | 262144 |$' "$scratch/docs/RESULTS.md" &&
	expect_in '^| 1/16 | 0.52 | 0.01 | 0.01 | 0.54 | 0.19 | 0.13 | 0.01 | 0.34 | 64 | -0.20 |$' "$scratch/docs/RESULTS.md" &&
	expect_in 'one fault after fork costs as much as copying 100 ptes at fork' "$scratch/docs/RESULTS.md"
}

# report_fails_with FILE SED MESSAGE: the fixtures, FILE edited by the
# sed script SED (or removed: SED is "rm"), fail the report with one
# error line holding MESSAGE, and leave $scratch/kept-docs alone.
report_fails_with() {
	rm -rf "$scratch/in" && mkdir -p "$scratch/in" &&
	cp "$fixtures/bench/"* "$scratch/in/" &&
	if [ "$2" = rm ]; then rm "$scratch/in/$1"; else sed -i "$2" "$scratch/in/$1"; fi &&
	expect_exit 1 bench_report --in "$scratch/in" --docs "$scratch/kept-docs" &&
	one_line_stderr && expect_in "$3" "$scratch/stderr"
}

# The exact counts are checked: a fork under always that copied one pte
# fewer than the segment's pages, one under lazy that copied any, a size
# without a policy's figures, a failed forkbench check, a kbuild under lazy
# that skipped no vma, a THP fork that copied one pmd short, a lazy
# trade-off fork that copied ptes, a test kernel's figures missing: each
# fails the bench with one line naming it, and docs/ is not touched.
# RESULTS.md and the plots name the accelerator x86_64's figures ran
# under: bench/fork's and bench/cost's accel-x86_64 (tcg here), TCG for
# raw output from before it was recorded; KVM's figures are not called
# an emulator's.
t bench_report_names_the_accelerator
bench_report_names_the_accelerator() {
	cp -a "$fixtures/bench" "$scratch/in" && echo tcg > "$scratch/in/accel-x86_64" &&
	expect_exit 0 bench_report --in "$scratch/in" --docs "$scratch/docs" &&
	expect_in ' under TCG, no KVM: its absolute times are an emulator' "$scratch/docs/RESULTS.md" &&
	echo kvm > "$scratch/in/accel-x86_64" &&
	expect_exit 0 bench_report --in "$scratch/in" --docs "$scratch/docs" &&
	expect_in ' under KVM: a virtual machine' "$scratch/docs/RESULTS.md" || return 1
	! grep -q 'TCG' "$scratch/docs/RESULTS.md" || fail "KVM's figures called TCG's: $(grep TCG "$scratch/docs/RESULTS.md")"
}

t bench_report_fails_wrong_counts
bench_report_fails_wrong_counts() {
	mkdir -p "$scratch/kept-docs" &&
	echo keep > "$scratch/kept-docs/RESULTS.md" &&
	report_fails_with fork-um.ktap \
		's/mib=512 policy=always forks=3 pages=131072 ptes=131072/mib=512 policy=always forks=3 pages=131072 ptes=131071/' \
		'um: fork_copy=always at 512 MiB: 131071 ptes of the segment copied per fork, want 131072' &&
	report_fails_with fork-x86_64.ktap \
		's/mib=1024 policy=lazy forks=3 pages=262144 ptes=0/mib=1024 policy=lazy forks=3 pages=262144 ptes=7/' \
		'x86_64: fork_copy=lazy at 1024 MiB: 7 ptes of the segment copied per fork, want 0' &&
	report_fails_with fork-um.ktap '/policy=skip-shared/d' \
		'um: no figures for fork_copy=skip-shared at 0 MiB' &&
	report_fails_with fork-um.ktap 's/^ok 5 /not ok 5 /' 'forkbench failed a check: not ok 5' &&
	report_fails_with kbuild-um.txt \
		'0,/policy=lazy status=0 \(.*\) vma_skip=1103/s//policy=lazy status=0 \1 vma_skip=0/' \
		'under fork_copy=lazy: counters unlike the policy' &&
	report_fails_with cost-x86_64.ktap \
		's/backing=thp mib=1024 forks=3 ptes=0 pmds=512/backing=thp mib=1024 forks=3 ptes=0 pmds=511/' \
		'x86_64: private thp at 1024 MiB: 0 ptes, 511 pmds, 0 hugetlb_ptes, 262144 present per fork, want 0, 512, 0, 262144' &&
	report_fails_with cost-x86_64.ktap \
		's/backing=hugetlb mib=512 forks=3 ptes=0 pmds=0 hugetlb_ptes=256/backing=hugetlb mib=512 forks=3 ptes=0 pmds=0 hugetlb_ptes=0/' \
		'x86_64: private hugetlb at 512 MiB: 0 ptes, 0 pmds, 0 hugetlb_ptes, 131072 present per fork, want 0, 0, 256, 131072' &&
	report_fails_with cost-um.ktap \
		's/mapping=file mib=64 policy=lazy sixteenths=4 pages=16384 touched=4096 ptes=0/&9/' \
		'um: trade-off, file under lazy: 9 ptes of it copied, want 0' &&
	report_fails_with cost-um-test.ktap rm 'cost-um-test.ktap: run tools/bench/cost um' &&
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
	expect_exit 1 env QUICK=2 "$here/tools/bench/all" && one_line_stderr &&
	expect_exit 1 "$here/tools/bench/cost" && one_line_stderr &&
	expect_exit 1 "$here/tools/bench/cost" sparc && one_line_stderr &&
	expect_exit 1 env BENCH_PRIVATE_SIZES="0 3" "$here/tools/bench/cost" um && one_line_stderr &&
	expect_in "'3' is not an even MiB count" "$scratch/stderr" &&
	expect_exit 1 env BENCH_VMAS="0 0" "$here/tools/bench/cost" um && one_line_stderr &&
	expect_in "names a value twice" "$scratch/stderr" &&
	expect_exit 1 "$here/tools/bench/kernel" sparc && one_line_stderr &&
	expect_exit 1 env BUILD="$scratch/none" "$here/tools/bench/kernel" um && one_line_stderr &&
	expect_in 'build the test kernel first' "$scratch/stderr" &&
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

# forkcost in UML, the smallest runs of each kind: the memory's share of
# each fork counted exactly (256 ptes a MiB of 4 KiB folios, a vma and a
# pte per one-page vma, the whole segment under always and none under
# lazy), and a backing UML lacks is a skip. A forkcost that took another
# fork's counters, or timed the child's work as fork's, fails here.
tk forkcost_counts_each_kind
forkcost_counts_each_kind() {
	local bin=$build/mm-tests/forkcost
	[ -x "$kernel" ] && [ -x "$bin" ] ||
		{ skip "no UML kernel or forkcost yet ('make test' builds them)"; return; }
	expect_exit 0 "$here/tools/guest/uml-run" --timeout 120 --mem 512M "$bin" -k 2 private 4k 0 2 &&
	expect_in '^# private: backing=4k mib=2 forks=2 ptes=512 pmds=0 hugetlb_ptes=0 present=512 ' "$scratch/stdout" &&
	expect_exit 0 "$here/tools/guest/uml-run" --timeout 120 --mem 512M "$bin" -k 2 private thp 2 &&
	expect_in '^ok 1 thp, 2 MiB private anonymous memory # SKIP no THP' "$scratch/stdout" &&
	expect_exit 0 "$here/tools/guest/uml-run" --timeout 120 --mem 512M "$bin" -k 2 private 64k 2 &&
	expect_in '^ok 1 64k, 2 MiB private anonymous memory # SKIP no THP$' "$scratch/stdout" &&
	expect_exit 0 "$here/tools/guest/uml-run" --timeout 120 --mem 512M "$bin" -k 2 vmas 16 &&
	expect_in '^# vmas: count=16 forks=2 vmas=16 ptes=16 ' "$scratch/stdout" &&
	expect_exit 0 "$here/tools/guest/uml-run" --timeout 120 --mem 512M "$bin" -k 1 tradeoff 1 &&
	[ "$(grep -c '^ok ' "$scratch/stdout")" = 2 ] ||
		{ fail "want 2 trade-off results: $(head -c 600 "$scratch/stdout")"; return; }
	# Under always UML takes none or one host fault a page (the host's
	# protection keys decide, forklab.h's faults_as_expected()): either.
	expect_in '^# tradeoff: mapping=shm mib=1 policy=always sixteenths=16 pages=256 touched=256 ptes=256 .* faults=\(0\|256\) ' "$scratch/stdout" &&
	expect_in '^# tradeoff: mapping=shm mib=1 policy=lazy sixteenths=16 pages=256 touched=256 ptes=0 .* faults=256 ' "$scratch/stdout" &&
	expect_in '^# tradeoff: mapping=file mib=1 policy=lazy sixteenths=16 pages=256 touched=256 ptes=0 .* faults=16 ' "$scratch/stdout"
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
