# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tests/run.sh: the tests of tools/run/: mutants against a stand-in kunit runner
# (tests/fixtures/fake-run-kunit), and the user-space suite's runner.
# Sourced by tests/run (t, tk, expect_exit, ... are its).

# A prepared, "built" stand-in tree; the suites are tests/fixtures/fake-run-kunit.
stand_in_tree() {
	rm -rf "$scratch/build"
	build=$scratch/build target um "${SANITIZE:-0}"
	mkdir -p "$scratch/build/src" "$(dirname "$target_image")"
	cp -a "$fixtures/tree" "$scratch/build/src/linux"
	touch "$target_image"
	chmod +x "$target_image"
	# The stand-in tree has no kunit_parser.py: the prepared tree's reads
	# the stand-in suites' KTAP (tools/judge/rows).
	export KUNIT_DIR=$build/src/linux/tools/testing/kunit
}

mutate() {
	stand_in_tree
	BUILD=$scratch/build MUTANTS=${MUTANTS:-$fixtures/mutants} \
		RUN_KUNIT=$fixtures/fake-run-kunit RUN_MM_TESTS=$fixtures/fake-run-mm-tests "$here/tools/run/mutants" "$@"
}

# make repeat: every boot is made, and each row whose verdict changed
# between them is named with the runs of each verdict (the stand-in's
# 'flaky row' fails in run 4 of 5 and is absent from run 5, its 'late
# row' is in run 5 only); the run fails. A boot that failed (exit 1)
# with the others' KTAP fails it too, named. A repeat that stops at the
# first failed boot, names no row, takes an absent row for a verdict,
# or forgets a failed boot fails here.
t repeat_names_rows_that_changed_verdict
repeat_names_rows_that_changed_verdict() {
	stand_in_tree
	BUILD=$scratch/build RUN_KUNIT=$fixtures/fake-repeat-kunit \
		expect_exit 1 "$here/tools/run/repeat" 5 &&
	expect_in '^judge/compare: row fake_suite/flaky row: PASS in runs 1-3, FAIL in run 4, absent in run 5$' \
		"$scratch/stdout" &&
	expect_in '^judge/compare: row fake_suite/late row: absent in runs 1-4, PASS in run 5$' \
		"$scratch/stdout" &&
	expect_in '^judge/compare: 5 boots, 2 rows changed verdict between them$' "$scratch/stdout" &&
	expect_in '^run/repeat: 5 runs, 3 distinct result(s), [0-9]* to [0-9]* ok lines a run$' "$scratch/stdout" &&
	expect_in '^run/repeat: run 4 failed; see ' "$scratch/stderr" || return 1
	! grep -q 'steady row' "$scratch/stdout" || fail "a steady row named: $(cat "$scratch/stdout")"
	# three boots that agree: nothing named, exit 0
	BUILD=$scratch/build RUN_KUNIT=$fixtures/fake-repeat-kunit \
		expect_exit 0 "$here/tools/run/repeat" 3 &&
	expect_in '^judge/compare: 3 boots, 0 rows changed verdict between them$' "$scratch/stdout" || return 1
	# the same KTAP, but boot 2 failed: exit 1, the boot named
	BUILD=$scratch/build RUN_KUNIT=$fixtures/fake-repeat-kunit FAKE_REPEAT_FAIL=run2 \
		expect_exit 1 "$here/tools/run/repeat" 3 &&
	expect_in '^judge/compare: 3 boots, 0 rows changed verdict between them$' "$scratch/stdout" &&
	expect_in '^run/repeat: 3 runs, 1 distinct result(s), [0-9]* ok lines each$' "$scratch/stdout" &&
	expect_in '^run/repeat: run 2 failed; see ' "$scratch/stderr"
}

# Killed, survived, equivalent: each reported as such, and a survivor fails
# the run. The tree is left as it was.
t mutate_reports_each_outcome
mutate_reports_each_outcome() {
	expect_exit 1 mutate &&
	expect_in '01-killed .*killed .*fake_suite: anon_vma rule' "$scratch/stdout" &&
	expect_in '02-survives .*SURVIVED' "$scratch/stdout" &&
	expect_in '03-equivalent .*equivalent .*(nothing reads this line)' "$scratch/stdout" &&
	expect_in '1 of 2 non-equivalent mutants killed, 1 equivalent, 1 not as expected' \
		"$scratch/stdout" &&
	expect_in '^run/mutants: 2 of 3 done, 1 killed, 1 not as expected; about [0-9]* s left$' \
		"$scratch/stderr" || return 1
	diff -r "$fixtures/tree" "$scratch/build/src/linux" >/dev/null ||
		fail "a mutant was left applied"
	grep -q '^not ok 2 02-survives # survived' "$scratch/build/mutate/mutants.ktap" ||
		fail "KTAP does not fail the survivor"
}

# stryker_status REPORT ID STATUS [REASON]: mutant ID of the Stryker
# report has STATUS, and a statusReason that starts with REASON.
stryker_status() {
	python3 - "$@" <<'PY' || fail "$2 is not $3 ${4:+($4...)} in $1"
import json, sys
report, name, status = sys.argv[1:4]
reason = sys.argv[4] if len(sys.argv) > 4 else ''
m = {m['id']: m for f in json.load(open(report))['files'].values()
     for m in f['mutants']}[name]
print(m['status'], m.get('statusReason'), file=sys.stderr)
assert m['status'] == status and m.get('statusReason', '').startswith(reason)
PY
}

# A patch declared equivalent that a test kills: the run fails it, and
# its report does not call it Killed (the claim broke, not the kernel).
t mutate_equivalent_killed_is_no_kill
mutate_equivalent_killed_is_no_kill() {
	MUTANTS=$fixtures/mutants-equivalent-killed expect_exit 1 mutate
	expect_in '01-claims-equivalent .*KILLED? .*claimed equivalent, yet killed by' "$scratch/stdout"
	stryker_status "$scratch/build/mutate/mutation-report.json" 01-claims-equivalent \
		RuntimeError 'KILLED?: claimed equivalent'
}

# make mutate's results in Stryker's report schema (the vendored
# mutation-testing-report-schema validates them): each outcome as its
# status, at the line the mutant's hunk removes, killedBy its rows;
# NoCoverage from make check's gcov, Timeout for a kernel that hung.
t mutation_report_follows_strykers_schema
mutation_report_follows_strykers_schema() {
	local report=$scratch/build/mutate/mutation-report.json

	expect_exit 1 mutate &&
	schema_valid mutation-testing-report-schema.json "$report" \
		2> "$scratch/schema" || fail "the report does not validate: $(cat "$scratch/schema")"
	python3 - "$report" <<'PY' || fail "the report's mutants are not as make mutate left them"
import json, sys
mutants = {m['id']: m for f in json.load(open(sys.argv[1]))['files'].values()
	   for m in f['mutants']}
assert mutants['01-killed']['status'] == 'Killed', mutants['01-killed']
assert mutants['01-killed']['killedBy'] == ['fake_suite: anon_vma rule']
assert mutants['01-killed']['location']['start']['line'] == 4
assert mutants['02-survives']['status'] == 'Survived'
assert mutants['03-equivalent']['status'] == 'Ignored'
PY
	# A survivor whose line gcov counted 0 times in make check is
	# NoCoverage; one counted once stays Survived.
	expect_exit 1 mutate && mkdir -p "$scratch/build/coverage" &&
	printf 'SF:%s\nDA:3,1\nDA:4,0\nend_of_record\n' "$scratch/build/src/linux/kernel/fork.c" \
		> "$scratch/build/coverage/forklab.info" &&
	BUILD=$scratch/build MUTANTS=$fixtures/mutants expect_exit 0 "$here/tools/judge/mutation-report" &&
	expect_in '"status": "NoCoverage"' "$report" &&
	sed -i 's/^DA:4,0/DA:4,1/' "$scratch/build/coverage/forklab.info" &&
	BUILD=$scratch/build MUTANTS=$fixtures/mutants expect_exit 0 "$here/tools/judge/mutation-report" &&
	! grep -q '"status": "NoCoverage"' "$report" ||
		{ fail "NoCoverage is not where gcov says 0"; return; }
	# A survivor of two lines, one of them run: Survived, not NoCoverage.
	MUTANTS=$fixtures/mutants-two-lines expect_exit 1 mutate && mkdir -p "$scratch/build/coverage" &&
	printf 'SF:%s\nDA:3,1\nDA:4,0\nend_of_record\n' "$scratch/build/src/linux/kernel/fork.c" \
		> "$scratch/build/coverage/forklab.info" &&
	BUILD=$scratch/build MUTANTS=$fixtures/mutants-two-lines \
		expect_exit 0 "$here/tools/judge/mutation-report" &&
	expect_in '"status": "Survived"' "$report" &&
	sed -i 's/^DA:3,1/DA:3,0/' "$scratch/build/coverage/forklab.info" &&
	BUILD=$scratch/build MUTANTS=$fixtures/mutants-two-lines \
		expect_exit 0 "$here/tools/judge/mutation-report" &&
	expect_in '"status": "NoCoverage"' "$report" ||
		{ fail "NoCoverage for a hunk with a line that ran"; return; }
	MUTANTS=$fixtures/mutants-stale expect_exit 1 mutate &&
	expect_in '"status": "CompileError"' "$report" &&
	# A kernel that hangs is caught (a kill), as Timeout.
	MUTANTS=$fixtures/mutants-hang expect_exit 0 mutate &&
	expect_in '^01-hangs .*hung ' "$scratch/stdout" &&
	expect_in '"status": "Timeout"' "$report" &&
	schema_valid mutation-testing-report-schema.json "$report" 2> /dev/null ||
		fail "a hung mutant is not a valid Timeout"
}

# SHARD=K/N runs every N-th mutant from the K-th; the shards' merge has
# the unsharded run's table (name, result, killers: not the seconds), and
# a mutant in two shards or in none is refused.
t mutate_shards_merge_to_one_run
mutate_shards_merge_to_one_run() {
	local columns='{ $3 = ""; print }'

	expect_exit 1 mutate || return 1
	awk "$columns" "$scratch/build/mutate/table" > "$scratch/whole"
	SHARD=0/2 expect_exit 0 mutate --out "$scratch/shard-0" &&
	expect_in 'shard 0 of 2 (from 0): 2 of 3 mutants' "$scratch/stdout" &&
	SHARD=1/2 expect_exit 1 mutate --out "$scratch/shard-1" || return 1
	grep -q '^01-killed' "$scratch/shard-0/table" && grep -q '^03-equivalent' "$scratch/shard-0/table" &&
	grep -q '^02-survives' "$scratch/shard-1/table" ||
		{ fail "shards are not every 2nd mutant"; return; }
	# An empty shard (3 of 4) among them; a survivor fails the merge too.
	SHARD=03/4 expect_exit 0 mutate --out "$scratch/shard-3" &&
	BUILD=$scratch/build MUTANTS=$fixtures/mutants expect_exit 1 \
		"$here/tools/judge/merge-mutants" "$scratch/shard-3" "$scratch/shard-1" "$scratch/shard-0" || return 1
	awk "$columns" "$scratch/build/mutate/table" > "$scratch/merged"
	diff "$scratch/whole" "$scratch/merged" > "$scratch/diff" ||
		{ fail "merged table differs: $(cat "$scratch/diff")"; return; }
	expect_in '^not ok 2 02-survives # survived' "$scratch/build/mutate/mutants.ktap" &&
	expect_in '"status": "Survived"' "$scratch/build/mutate/mutation-report.json" || return 1
	BUILD=$scratch/build MUTANTS=$fixtures/mutants expect_exit 1 \
		"$here/tools/judge/merge-mutants" "$scratch/shard-0" "$scratch/shard-0" &&
	one_line_stderr && expect_in 'in more than one shard' "$scratch/stderr" &&
	BUILD=$scratch/build MUTANTS=$fixtures/mutants expect_exit 1 \
		"$here/tools/judge/merge-mutants" "$scratch/shard-0" &&
	one_line_stderr && expect_in '02-survives is in no shard' "$scratch/stderr" &&
	SHARD=2/2 expect_exit 2 mutate && one_line_stderr
}

t mutate_passes_when_all_killed
mutate_passes_when_all_killed() {
	expect_exit 0 mutate 01-killed 03-equivalent &&
	expect_in '1 of 1 non-equivalent mutants killed, 1 equivalent, 0 not as expected' \
		"$scratch/stdout"
}

# A run stopped while a mutant's suites ran (CI's timeout, ^C) leaves
# what make test left: its KUnit results, not the mutant's (a stopped make
# museum once turned CI red with an exhibit's failing row), a file make
# test did not leave (kunit.key) removed; the tree is reverted. A run
# stopped during a build stops the build, not waits for it (timeout's
# grace is 60 s; a build takes minutes).
t mutate_stopped_leaves_make_tests_results
mutate_stopped_leaves_make_tests_results() {
	local stop
	for stop in exec build; do
		stand_in_tree
		build=$scratch/build target um
		mkdir -p "$target_res" &&
		echo "make test's KTAP" > "$target_res/kunit.ktap" &&
		echo "make test's JSON" > "$target_res/kunit.json" || return 1
		rm -f "$scratch/built"
		FAKE_KUNIT_STOP=$stop FAKE_KUNIT_BUILT=$scratch/built \
			BUILD=$scratch/build MUTANTS=$fixtures/mutants \
			RUN_KUNIT=$fixtures/fake-run-kunit RUN_MM_TESTS=$fixtures/fake-run-mm-tests \
			expect_exit 130 "$here/tools/run/mutants" 01-killed || return 1
		diff -r "$fixtures/tree" "$scratch/build/src/linux" >/dev/null ||
			fail "stopped in $stop: the mutant was left applied" || return 1
		grep -qx "make test's KTAP" "$target_res/kunit.ktap" &&
		grep -qx "make test's JSON" "$target_res/kunit.json" &&
		[ ! -e "$target_res/kunit.key" ] ||
			fail "stopped in $stop: a mutant's KUnit results were left" || return 1
	done
	[ ! -e "$scratch/built" ] || fail "the stop waited for the build to end"
}

# make mutate run on a terminal (script(1) gives it one): the builds and
# suites it runs in process groups of their own must not have the
# terminal as stdin, or kunit.py's 'stty sane' stops or fails them.
t mutate_runs_on_a_terminal
mutate_runs_on_a_terminal() {
	stand_in_tree
	BUILD=$scratch/build MUTANTS=$fixtures/mutants RUN_KUNIT=$fixtures/fake-run-kunit RUN_MM_TESTS=$fixtures/fake-run-mm-tests \
		expect_exit 0 timeout 60 script -qec "$here/tools/run/mutants 01-killed" /dev/null &&
	expect_in '01-killed .*killed' "$scratch/stdout"
}

# A mutant that no longer applies (the tree moved on) is an error, named;
# and without a built kernel there is nothing to mutate.
t mutate_rejects_stale_mutant
mutate_rejects_stale_mutant() {
	MUTANTS=$fixtures/mutants-stale expect_exit 1 mutate &&
	expect_in '01-stale .*ERROR .*does not apply' "$scratch/stdout" || return 1
	build=$scratch/build target um
	rm -f "$target_image"
	expect_exit 1 env BUILD="$scratch/build" "$here/tools/run/mutants" &&
	one_line_stderr && expect_in "run 'make test' first" "$scratch/stderr"
}

# A mutant applies to the trees its Trees: line names (none: 6.12):
# KERNEL=6.1 finds none of the fixtures' (they name none), and a name
# that is no tree's is an error, not a mutant that runs nowhere.
t mutate_runs_the_trees_mutants
mutate_runs_the_trees_mutants() {
	stand_in_tree
	mkdir -p "$scratch/build/6.1/uml" "$scratch/build/6.1/src" &&
	cp -a "$fixtures/tree" "$scratch/build/6.1/src/linux" &&
	touch "$scratch/build/6.1/uml/linux" || return 1
	KERNEL=6.1 BUILD=$scratch/build MUTANTS=$fixtures/mutants \
		RUN_KUNIT=$fixtures/fake-run-kunit RUN_MM_TESTS=$fixtures/fake-run-mm-tests \
		expect_exit 1 "$here/tools/run/mutants" && one_line_stderr &&
	expect_in 'no mutant for um on 6.1' "$scratch/stderr" &&
	MUTANTS=$fixtures/mutants-trees expect_exit 1 mutate && one_line_stderr &&
	expect_in "01-typo.patch: 'Trees: 6.12 5.10': no tree '5.10'" "$scratch/stderr"
}

# The museum on the same stand-in tree, a stand-in guest booting each
# reproducer (tests/fixtures/fake-guest).
museum() {
	stand_in_tree
	RUN_GUEST=$fixtures/fake-guest MUSEUM_REPORT=$scratch/MUSEUM.md \
		BUILD=$scratch/build MUSEUM=${MUSEUM:-$fixtures/museum} \
		RUN_KUNIT=$fixtures/fake-run-kunit RUN_MM_TESTS=$fixtures/fake-run-mm-tests "$here/tools/run/museum" "$@"
}

# An exhibit passes when the row it names fails, its reproducer fails on
# its kernel and passes on the unmodified one; each other case is named.
t museum_judges_each_exhibit
museum_judges_each_exhibit() {
	expect_exit 1 museum &&
	expect_in '01-shown .*killed .*fake_suite: anon_vma rule' "$scratch/stdout" &&
	expect_in "02-wrong-row .*WRONG ROW .*not by 'fake_suite: a row that never fails'" "$scratch/stdout" &&
	expect_in '03-not-shown .*NOT SHOWN' "$scratch/stdout" &&
	expect_in '04-fails-unmodified .*exit 1: not ok 1 fake: fails everywhere' "$scratch/stdout" &&
	expect_in '05-skips .*NOT SHOWN .*exit 4' "$scratch/stdout" &&
	expect_in '1 of 5 exhibits caught, shown, and clean' "$scratch/stdout" || return 1
	# Its Stryker report says what happened: only the exhibit the run
	# counts as caught is Killed.
	stryker_status "$scratch/build/museum/mutation-report.json" 01-shown Killed
	stryker_status "$scratch/build/museum/mutation-report.json" 02-wrong-row Survived 'WRONG ROW: not by'
	stryker_status "$scratch/build/museum/mutation-report.json" 03-not-shown Survived 'NOT SHOWN: its reproducer'
	local ktap=$scratch/build/museum/museum.ktap
	expect_in '^ok 1 01-shown$' "$ktap" &&
	expect_in '^not ok 4 04-fails-unmodified # its reproducer fails on the unmodified kernel' "$ktap" &&
	expect_in '^| \[01-shown\].* | um | 6.12.117 | fake_suite: anon_vma rule | exit 1: not ok 1 fake: the child saw' \
		"$scratch/MUSEUM.md" || return 1
	# On the tree it is reverted on, an exhibit's reproducer that skips
	# on the unmodified kernel is a failure there, not a skip.
	expect_in '^| \[05-skips\].* | um | 6.12.117 | .* | FAILS: skipped: no such thing here | ' \
		"$scratch/MUSEUM.md" || return 1
	# UML has no accelerator: none recorded, none named.
	[ ! -e "$scratch/build/museum/accel" ] && ! grep -q 'accelerator in these runs' "$scratch/MUSEUM.md" ||
		fail "an accelerator for UML: $(cat "$scratch/build/museum/accel"; grep 'accelerator' "$scratch/MUSEUM.md")"
	diff -r "$fixtures/tree" "$scratch/build/src/linux" >/dev/null ||
		fail "an exhibit was left applied"
}

t museum_passes_when_each_is_caught_and_shown
museum_passes_when_each_is_caught_and_shown() {
	expect_exit 0 museum 01-shown &&
	expect_in '1 of 1 exhibits caught, shown, and clean' "$scratch/stdout"
}

# A kernel that crashes the KUnit boot names no row there (the console
# gate's 'boot' only): for an exhibit, which names its row (Caught-by:),
# the user-space suite runs too, and fails the row it names; a mutant's
# run ends with KUnit's crash, and no user-space suite is booted. A
# runner that stopped at the crash for both calls the exhibit WRONG ROW;
# one that went on for both boots the user-space suite for the mutant.
t museum_runs_user_space_after_a_kunit_crash
museum_runs_user_space_after_a_kunit_crash() {
	MUSEUM=$fixtures/museum-crash expect_exit 0 museum &&
	expect_in '01-crashes .*killed .*fake_program: the child keeps its own bytes' \
		"$scratch/stdout" || return 1
	# ... and its Caught-by: row's program first (run/mm-tests --first).
	[ "$(cat "$scratch/build/museum/01-crashes/mm-tests/first" 2>&1)" = fake_program ] ||
		fail "the user-space suite did not start with the Caught-by: program"
	MUTANTS=$fixtures/mutants-crash expect_exit 0 mutate &&
	expect_in '01-crashes .*killed .*fake_suite: boot' "$scratch/stdout" &&
	[ -d "$scratch/build/mutate/01-crashes/kunit" ] &&
	[ ! -e "$scratch/build/mutate/01-crashes/mm-tests" ] ||
		fail "the user-space suite ran on a mutant KUnit killed"
}

# Each target runs the exhibits its Targets: line names: 06 only on the
# sanitizer build (SANITIZE=1), and not in the plain runs above.
t museum_runs_the_targets_exhibits
museum_runs_the_targets_exhibits() {
	SANITIZE=1 expect_exit 0 museum &&
	expect_in '06-sanitizer-only .*killed' "$scratch/stdout" &&
	expect_in '1 of 1 exhibits caught, shown, and clean' "$scratch/stdout" &&
	expect_in '^| \[06-sanitizer-only\].* | sanitize | 6.12.117 | fake_suite: anon_vma rule' \
		"$scratch/MUSEUM.md" || return 1
	SANITIZE=1 expect_exit 1 museum 01-shown &&
	one_line_stderr && expect_in 'no exhibit 01-shown for sanitize' "$scratch/stderr"
}

# KERNEL=6.1 reverts its own exhibits (07, Trees: 6.1) and boots the
# 6.12 exhibits' reproducers on its unmodified kernel: one that fails
# there (04) is a bug 6.1 may still have, one that skips (05) is not.
t museum_runs_the_other_trees_reproducers
museum_runs_the_other_trees_reproducers() {
	stand_in_tree
	mkdir -p "$scratch/build/6.1/uml" "$scratch/build/6.1/src" &&
	cp -a "$fixtures/tree" "$scratch/build/6.1/src/linux" &&
	sed -i 's/^PATCHLEVEL = 12/PATCHLEVEL = 1/; s/^SUBLEVEL = 117/SUBLEVEL = 192/' \
		"$scratch/build/6.1/src/linux/Makefile" &&
	touch "$scratch/build/6.1/uml/linux" || return 1
	KERNEL=6.1 RUN_GUEST=$fixtures/fake-guest MUSEUM_REPORT=$scratch/MUSEUM.md \
		BUILD=$scratch/build MUSEUM=$fixtures/museum \
		RUN_KUNIT=$fixtures/fake-run-kunit RUN_MM_TESTS=$fixtures/fake-run-mm-tests expect_exit 1 "$here/tools/run/museum" &&
	expect_in '1 of 1 exhibits caught, shown, and clean' "$scratch/stdout" &&
	expect_in "the other tree's reproducers: 4 of 5 clean or skipped on Linux 6.1" \
		"$scratch/stdout" || return 1
	local ktap=$scratch/build/6.1/museum/museum.ktap others=$scratch/build/6.1/museum/others.ktap
	expect_in '^1..1$' "$ktap" && expect_in '^ok 1 07-6.1-only$' "$ktap" &&
	expect_in '^ok 1 01-shown: its reproducer on Linux 6.1$' "$others" &&
	expect_in '^not ok 4 04-fails-unmodified: its reproducer fails on Linux 6.1' "$others" &&
	expect_in '^ok 5 05-skips: its reproducer on Linux 6.1 # SKIP skipped: no such thing here$' "$others" &&
	expect_in '^| \[07-6.1-only\].* | um | 6.1.192 | fake_suite: anon_vma rule | exit 1: not ok 1 fake: the child saw .* | not run | clean | ' \
		"$scratch/MUSEUM.md" &&
	expect_in '^| \[04-fails-unmodified\].* | um | 6.12.117 | not run | not run | not run | FAILS: exit 1: not ok 1 fake: fails everywhere' \
		"$scratch/MUSEUM.md" || return 1
	diff -r -x Makefile "$fixtures/tree" "$scratch/build/6.1/src/linux" >/dev/null ||
		fail "an exhibit was left applied"
}

# On a kernel without forklab's series (SERIES=none) nothing is reverted:
# each reproducer of the target, every tree's, boots on the kernel as it
# is; one that fails is a live bug of that kernel, listed in MUSEUM.md
# with the kernel as the run named it, and the run still passes.
t museum_runs_reproducers_without_the_series
museum_runs_reproducers_without_the_series() {
	local dir=$scratch/museum-x86_64 res=$scratch/build/unpatched/x86_64 p
	rm -rf "$scratch/build" "$dir" "$scratch/under"
	mkdir -p "$dir" "$res/kernel/arch/x86/boot" "$scratch/build/unpatched/src" &&
	cp -a "$fixtures/tree" "$scratch/build/unpatched/src/linux" &&
	echo "dir /src/as-is" > "$scratch/build/unpatched/src/linux.from" &&
	echo PASS > "$res/kernel/arch/x86/boot/bzImage" || return 1
	for p in "$fixtures"/museum/0[1457]-*.patch "$fixtures"/museum-rows/*.patch; do
		sed '/^Targets:/d; 1a Targets: x86_64' "$p" > "$dir/${p##*/}" || return 1
	done
	SERIES=none ARCH=x86_64 RUN_GUEST=$fixtures/fake-guest MUSEUM_REPORT=$scratch/MUSEUM.md \
		KVM_DEVICE=/dev/null FAKE_GUEST_UNDER=$scratch/under \
		BUILD=$scratch/build MUSEUM=$dir expect_exit 0 "$here/tools/run/museum" &&
	# The accelerator chosen (no KVM device: tcg), the boots told it,
	# and the report says it.
	[ "$(cat "$res/museum/accel" 2> /dev/null)" = tcg ] &&
	[ "$(cat "$scratch/under" 2> /dev/null)" = tcg ] ||
		fail "want tcg recorded and given to the boots: $(cat "$res/museum/accel" "$scratch/under")" ||
		return 1
	expect_in "^QEMU's accelerator in these runs: Linux 6\.12[0-9.]* without forklab's series (/src/as-is): tcg\.\$" \
		"$scratch/MUSEUM.md" &&
	expect_in "4 of 8 reproducers show their bug on Linux 6.12.117 without forklab's series (/src/as-is)" \
		"$scratch/stdout" &&
	expect_in '^05-skips	skip	' "$res/museum/clean.tsv" &&
	# A program of many rows: its exhibit's row (the row that begins
	# with its Caught-by: text) decides, and is the one shown, without
	# the note of another row; a run without its row, or with a kernel
	# complaint, is no clean run.
	expect_in "^08-another-row	0	clean: 1 ok, 0 skipped (its row passed; another failed: not ok 1 not its own row (another exhibit's bug))" \
		"$res/museum/clean.tsv" &&
	expect_in '^09-its-row-second	1	exit 1: not ok 2 its own row: broken$' "$res/museum/clean.tsv" &&
	expect_in '^10-without-its-row	1	exit 1: ok 1 another row$' "$res/museum/clean.tsv" &&
	expect_in '^11-its-row-then-oops	125	exit 125: BUG: Bad page state' "$res/museum/clean.tsv" &&
	expect_in '^07-6.1-only	0	' "$res/museum/clean.tsv" &&
	expect_in "^- \[04-fails-unmodified\](#04-fails-unmodified) (.*) on Linux 6.12.117 without forklab's series (/src/as-is): exit 1: not ok 1 fake: fails everywhere" \
		"$scratch/MUSEUM.md" || return 1
	! grep -q '^- \[0[1578]' "$scratch/MUSEUM.md" ||
		fail "a clean or skipped reproducer listed as a live bug"
	[ ! -e "$res/museum/results.tsv" ] || fail "an exhibit was reverted on a tree without the series"
	# Candidates not shown: the museum's own file (this one has none).
	! grep -q '^## Candidates not shown' "$scratch/MUSEUM.md" ||
		fail "another museum's not-shown.md in this one's report"
}

# A Targets: line naming no target is an error, not a patch that runs
# nowhere.
t museum_rejects_unknown_target
museum_rejects_unknown_target() {
	MUSEUM=$fixtures/museum-bad-target expect_exit 1 museum &&
	one_line_stderr && expect_in "01-typo.patch: 'Targets: sanitizer': no target 'sanitizer'" \
		"$scratch/stderr"
}

# An exhibit without its provenance stops the run before any build.
t museum_wants_provenance
museum_wants_provenance() {
	MUSEUM=$fixtures/museum-bad expect_exit 1 museum &&
	one_line_stderr && expect_in "01-no-fix: no 'Fix:' line" "$scratch/stderr"
}

# --first-failure starts no program once one failed, in run.list's
# order; --first NAME starts NAME before the others (run/mutants: an
# exhibit's Caught-by: program), so that another program's failure (a
# flake) cannot keep NAME's rows from running, and the others keep
# run.list's order. Copies of the echo fixture: 'fails' and 'fails_too'
# (exit 1), listed first, and 'passes' (exit 0).
tk run_mm_tests_starts_the_named_program_first
run_mm_tests_starts_the_named_program_first() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	static_fixture echo
	local name
	for name in fails fails_too passes; do
		cp "$scratch/echo" "$scratch/$name" || fail "cannot copy the fixture"
	done
	printf '%s\n' 'fails | 1 |  | 60' 'fails_too | 1 |  | 60' 'passes | 0 |  | 60' \
		> "$scratch/three.list"
	expect_exit 1 "$here/tools/run/mm-tests" --list "$scratch/three.list" --bin "$scratch" \
		--out "$scratch/out" --first-failure --jobs 1
	expect_in '^ok 3 passes # SKIP not run: another program failed$' "$scratch/out/results.ktap"
	expect_exit 1 "$here/tools/run/mm-tests" --list "$scratch/three.list" --bin "$scratch" \
		--out "$scratch/out" --first-failure --jobs 1 --first passes
	expect_in '^ok 3 passes$' "$scratch/out/results.ktap"
	expect_in '^not ok 1 fails # exit status 1$' "$scratch/out/results.ktap"
	expect_in '^ok 2 fails_too # SKIP not run: another program failed$' "$scratch/out/results.ktap"
}

# The same through run-mm-tests: a failing KTAP result that says why, and
# a KTAP document kunit.py parse still reads.
tk run_mm_tests_fails_a_hang
run_mm_tests_fails_a_hang() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	static_fixture hang &&
	printf '%s\n' 'margin 2' 'floor 3' 'keep 3' > "$scratch/durations" &&
	expect_exit 1 "$here/tools/run/mm-tests" --list "$fixtures/uml/hang.list" \
		--bin "$scratch" --durations "$scratch/durations" --out "$scratch/out" &&
	expect_in '^not ok 1 hang # timed out after 5 s (run.list.s limit, at least 3 s: no run on um 6.12 recorded' \
		"$scratch/out/results.ktap" &&
	expect_in 'failed: 1' "$scratch/stdout" || return 1
	# Unrecorded, run.list's 5 s is raised to a floor above it.
	printf '%s\n' 'margin 2' 'floor 7' 'keep 3' > "$scratch/durations" &&
	expect_exit 1 "$here/tools/run/mm-tests" --list "$fixtures/uml/hang.list" \
		--bin "$scratch" --durations "$scratch/durations" --out "$scratch/out" &&
	expect_in '^not ok 1 hang # timed out after 7 s (run.list.s limit, at least 7 s: no run' \
		"$scratch/out/results.ktap" || return 1
	# With recorded runs, the limit is the margin over the longest, at
	# least the floor, and the verdict says so.
	printf '%s\n' 'margin 2' 'floor 3' 'keep 3' 'hang um 6.12 0.5 1.2 0.9' \
		> "$scratch/durations"
	expect_exit 1 "$here/tools/run/mm-tests" --list "$fixtures/uml/hang.list" \
		--bin "$scratch" --durations "$scratch/durations" \
		--out "$scratch/out"
	expect_in '^not ok 1 hang # timed out after 3 s (2 x its longest recorded run, 1.2 s, at least 3 s; recorded: 0.5 1.2 0.9)$' \
		"$scratch/out/results.ktap"
}

# A program killed at its limit after complete, passing KTAP: its group
# gets one more row, '(exit status)', whose name does not change with the
# reason, and which the results model calls ERROR (the run did not
# complete), not a failed row. A runner that named the row after the
# reason, or a model that took it for a FAIL, fails here.
tk mm_tests_time_out_after_complete_ktap
mm_tests_time_out_after_complete_ktap() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	static_fixture late-hang
	printf '%s\n' 'margin 2' 'floor 3' 'keep 3' > "$scratch/durations"
	expect_exit 1 "$here/tools/run/mm-tests" --list "$fixtures/uml/late-hang.list" \
		--bin "$scratch" --durations "$scratch/durations" --out "$scratch/out"
	expect_in '^    not ok 2 (exit status) # timed out after 15 s (run.list.s limit' \
		"$scratch/out/results.ktap"
	expect_in '^not ok 1 late-hang # timed out after 15 s' "$scratch/out/results.ktap"
	model_verdicts "$scratch/out/results.ktap" 'PASS late-hang/the only row' \
		'ERROR late-hang/(exit status)'
}

# model_verdicts KTAP 'VERDICT PATH'...: the results model's rows of
# run/mm-tests' KTAP are these, in this order.
model_verdicts() {
	local ktap=$1

	shift
	PYTHONPATH=$here/tools/lib python3 - "$ktap" \
		"$build/src/linux/tools/testing/kunit" "$@" <<'PY' ||
import sys
from forklab import ktap, results
suite = results.judge(ktap.load_parser(sys.argv[2]), 'mm-tests', sys.argv[1], None)
got = ['%s %s' % (r.verdict, r.path) for r in suite.rows]
sys.exit(0 if got == sys.argv[3:] else 'rows: %s' % got)
PY
		fail "the results model's rows are not: $*"
}

# A bounded wait (docs/checks.md#bounded-waits): a row that waits for a
# child that never exits fails by its name, saying what it waited for,
# at its wait's limit (3 s here), far below the runner's (60 s); its
# KTAP, cut short there, keeps the rows before it, and the results model
# calls the row FAIL and the program's end ERROR. A limit that never
# fires, a row named wrong, or a runner that drops a cut-short KTAP's
# rows fails here.
tk a_wait_that_never_ends_fails_its_row
a_wait_that_never_ends_fails_its_row() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	forklab_fixture stuck-row &&
	printf '%s\n' 'margin 2' 'floor 3' 'keep 3' > "$scratch/durations" &&
	expect_exit 1 "$here/tools/run/mm-tests" --list "$fixtures/uml/stuck-row.list" \
		--bin "$scratch" --durations "$scratch/durations" --out "$scratch/out" &&
	expect_in '^    not ok 2 the row whose child never exits # waited 3 s for the exit of child [0-9]*$' \
		"$scratch/out/results.ktap" &&
	expect_in '^    not ok 3 (exit status) # exit status 1, after 2 of 3 results$' \
		"$scratch/out/results.ktap" &&
	# exit status 1, the program's own: not the runner's "timed out"
	expect_in '^not ok 1 stuck-row # exit status 1$' "$scratch/out/results.ktap" || return 1
	model_verdicts "$scratch/out/results.ktap" 'PASS stuck-row/a row before it' \
		'FAIL stuck-row/the row whose child never exits' \
		'ERROR stuck-row/(exit status)'
}

# A program that skips the rest after a row (ksft_exit_skip(), exit 4)
# is one skipped program, as configs/expected lists such programs, not a
# KTAP cut short whose end is a failed '(exit status)' row.
tk a_skip_after_rows_is_the_programs_skip
a_skip_after_rows_is_the_programs_skip() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	static_fixture skip-after-row &&
	expect_exit 0 "$here/tools/run/mm-tests" --list "$fixtures/uml/skip-after-row.list" \
		--bin "$scratch" --out "$scratch/out" &&
	expect_in '^ok 1 skip-after-row # SKIP' "$scratch/out/results.ktap" &&
	! grep -q '(exit status)' "$scratch/out/results.ktap" ||
		fail "the skip is a cut-short KTAP: $(cat "$scratch/out/results.ktap")"
}

# make durations: the last passing run's time of each program joins its
# line (the oldest dropped past keep), other lines stay; a run that did
# not pass is not recorded.
tk mm_tests_record_their_durations
mm_tests_record_their_durations() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	static_fixture echo
	printf '%s\n' '# a comment' 'margin 4' 'floor 30' 'keep 3' \
		'echo um 6.12 9.0 8.0 7.0' 'echo x86_64 6.12 5.0' > "$scratch/durations"
	expect_exit 0 "$here/tools/run/mm-tests" --list "$fixtures/uml/echo.list" \
		--bin "$scratch" --out "$scratch/out"
	expect_exit 0 "$here/tools/run/mm-tests" --list "$fixtures/uml/echo.list" \
		--durations "$scratch/durations" --out "$scratch/out" --record
	expect_in '^echo um 6.12 8.0 7.0 [0-9]*\.[0-9]$' "$scratch/durations"
	expect_in '^echo x86_64 6.12 5.0$' "$scratch/durations"
	expect_in '^# a comment$' "$scratch/durations"
	[ "$(grep -c . "$scratch/durations")" = 6 ] || fail "lines lost or added: $(cat "$scratch/durations")"
	rm "$scratch/out/results.key"
	expect_exit 1 "$here/tools/run/mm-tests" --list "$fixtures/uml/echo.list" \
		--durations "$scratch/durations" --out "$scratch/out" --record
	one_line_stderr
	expect_in 'no passing run' "$scratch/stderr"
}

# Host independence: a UML child's first read of a page whose pte fork
# copied traps on a host with execute-only memory (x86 protection keys)
# and not on one without (mm-tests/forklab.h says why). Force both on
# this host and require the same verdict from fork_mappings: an
# assertion of one host's fault count fails here. Without protection
# keys on the host only the second behaviour exists, and both runs show it.
tk mm_tests_pass_with_and_without_exec_only
mm_tests_pass_with_and_without_exec_only() {
	local prog=$build/mm-tests/fork_mappings plain want
	[ -x "$kernel" ] && [ -x "$prog" ] ||
		{ skip "no UML kernel and mm-tests yet ('make test' builds them)"; return; }
	gcc -O2 -o "$scratch/exec-only" "$fixtures/uml/exec-only.c" &&
	gcc -O2 -shared -fPIC -o "$scratch/take-pkeys.so" "$fixtures/uml/take-pkeys.c" ||
		{ fail "cannot build the exec-only fixtures"; return; }
	plain=$("$scratch/exec-only")
	[ "$(LD_PRELOAD=$scratch/take-pkeys.so "$scratch/exec-only")" = readable ] ||
		{ fail "take-pkeys.so left PROT_EXEC unreadable on the host"; return; }
	want=0
	[ "$plain" = traps ] && want=8
	expect_exit 0 "$here/tools/guest/uml-run" --timeout 120 "$prog" &&
	expect_in "^# private anon, written: child: 8 ptes present, $want faults" "$scratch/stdout" &&
	LD_PRELOAD=$scratch/take-pkeys.so \
		expect_exit 0 "$here/tools/guest/uml-run" --timeout 120 "$prog" &&
	expect_in '^# private anon, written: child: 8 ptes present, 0 faults' "$scratch/stdout"
}

# The user-space suite boots its target's kernel, whatever the runner's
# default: in a build directory that holds only the sanitizer build's
# kernel, SANITIZE=1 must boot it. A suite that left the runner to its
# default (the plain kernel) fails here, and would count the plain
# kernel's results as the sanitizer build's.
tk mm_tests_boot_the_targets_kernel
mm_tests_boot_the_targets_kernel() {
	local b=$scratch/build
	[ -x "$kernel" ] && [ -d "$build/mm-tests" ] ||
		{ skip "no UML kernel and mm-tests yet ('make test' builds them)"; return; }
	rm -rf "$b" && mkdir -p "$b" &&
	ln -s "$build/src" "$b/src" && ln -s "$build/mm-tests" "$b/mm-tests" || return
	build=$b target um 1
	mkdir -p "$(dirname "$target_image")" && ln -s "$kernel" "$target_image" &&
	static_fixture echo &&
	BUILD=$b SANITIZE=1 \
		expect_exit 0 "$here/tools/run/mm-tests" --list "$fixtures/uml/echo.list" --bin "$scratch" &&
	expect_in '^ok 1 echo$' "$target_res/mm-tests/results.ktap"
}

# SHARD=K/N cuts the user-space suite by program (every N-th of the
# sorted list from the K-th); judge/merge joins the shards into the KTAP
# the whole run writes, numbered as it numbers, and refuses a run with a
# shard missing. Four programs, one failing, in three shards (one of two
# programs, one of one).
tk mm_tests_shards_merge_to_one_run
mm_tests_shards_merge_to_one_run() {
	local b=$scratch/build name k
	[ -x "$kernel" ] && [ -d "$build/mm-tests" ] ||
		{ skip "no UML kernel and mm-tests yet ('make test' builds them)"; return; }
	static_fixture echo || return 1
	for name in d c b a; do
		ln -s echo "$scratch/$name" || return 1
	done
	printf '%s\n' 'd | 0 | | 60' 'c | 0 | | 60' 'b | 1 | | 60' 'a | 0 | | 60' > "$scratch/four.list"
	rm -rf "$b" && mkdir -p "$b" &&
	ln -s "$build/src" "$b/src" && ln -s "$build/mm-tests" "$b/mm-tests" || return 1
	build=$b target um 0
	mkdir -p "$(dirname "$target_image")" && ln -s "$kernel" "$target_image" || return 1
	BUILD=$b COVERAGE=0 \
		expect_exit 1 "$here/tools/run/mm-tests" --list "$scratch/four.list" \
		--bin "$scratch" --out "$scratch/mm-whole" || return 1
	# Shard 1 holds b, which exits 1.
	for k in 0 1 2; do
		BUILD=$b SHARD=$k/3 \
			expect_exit "$((k == 1))" "$here/tools/run/mm-tests" \
			--list "$scratch/four.list" --bin "$scratch"
	done
	# a and d are shard 0's (0 and 3 of a b c d), b shard 1's.
	expect_in '^ok 1 d$' "$target_res/mm-tests-0-of-3/results.ktap" &&
	expect_in '^ok 2 a$' "$target_res/mm-tests-0-of-3/results.ktap" &&
	expect_in '^not ok 1 b # exit status 1' "$target_res/mm-tests-1-of-3/results.ktap" &&
	mv "$target_res/mm-tests-2-of-3" "$scratch/shard-2" &&
	BUILD=$b expect_exit 1 "$here/tools/judge/merge" && one_line_stderr &&
	expect_in 'shard 2 of 3 of mm-tests is missing' "$scratch/stderr" &&
	mv "$scratch/shard-2" "$target_res/mm-tests-2-of-3" &&
	BUILD=$b expect_exit 1 "$here/tools/judge/merge" || return 1
	# Each boot's command line names its own scratch directory.
	diff <(sed 's/run\.[A-Za-z0-9]*/run.X/g' "$scratch/mm-whole/results.ktap") \
		<(sed 's/run\.[A-Za-z0-9]*/run.X/g' "$target_res/mm-tests/results.ktap") > "$scratch/diff" ||
		{ fail "the joined KTAP is not the whole run's: $(head -n 5 "$scratch/diff")"; return; }
	[ ! -e "$target_res/mm-tests-0-of-3" ] && [ -f "$target_res/junit.xml" ] &&
	[ -f "$target_res/mm-tests/a.log" ] ||
		fail "the merge left its shards, or wrote no junit.xml or logs"
}

# A bad policy is refused by name before anything is looked for, built
# or booted (BUILD holds no tree, no kernel: a runner that took it would
# fail for want of those instead, or boot every suite under it).
t mm_runners_reject_bad_input
mm_runners_reject_bad_input() {
	BUILD=$scratch/none expect_exit 1 "$here/tools/run/policies" sometimes && one_line_stderr &&
	expect_in "unknown policy 'sometimes'" "$scratch/stderr" &&
	BUILD=$scratch/none FORK_COPY=never expect_exit 1 "$here/tools/run/mm-tests" && one_line_stderr &&
	expect_in 'FORK_COPY=never: want lazy' "$scratch/stderr" &&
	expect_exit 1 "$here/tools/run/mm-tests" --list "$scratch/none" &&
	one_line_stderr
}

# stand_in_kunit_kernel FILE CASE_LINE...: a UML kernel's stand-in (a
# script, as UML is a program) that boots as the runner boots one: it
# prints a suite of KTAP with CASE_LINEs inside, and init's taint line, and
# leaves init's status 'exit 0' in the root hostfs= names.
stand_in_kunit_kernel() {
	local f=$1

	shift
	{
		echo '#!/bin/sh'
		echo 'for a; do case $a in hostfs=*) root=${a#hostfs=} ;; esac; done'
		echo 'echo "stand-in kernel: $*"'
		echo "cat <<'KTAP'"
		printf '%s\n' 'KTAP version 1' '1..1' '    KTAP version 1' \
			'    # Subtest: fake_suite' '    1..1' "$@"
		echo "ok 1 fake_suite"
		echo 'KTAP'
		echo 'echo "forklab: tainted 0"'
		echo 'echo "exit 0" > "$root/forklab/status"'
	} > "$f"
	chmod +x "$f"
}

# The KUnit runner on a stand-in kernel: a WARNING in a test that kunit.py
# counts as passed fails that test and the run, and the run says why. A
# runner that dropped console-scan's verdict passes a kernel that warns.
t kunit_fails_a_complaining_console
kunit_fails_a_complaining_console() {
	[ -f "$kunit_py" ] || { skip "no kernel tree yet ('make tree' prepares it)"; return; }
	mkdir -p "$scratch/kunit-image" "$scratch/kunit-build" && ln -sfn "$build/src" "$scratch/kunit-build/src"
	stand_in_kunit_kernel "$scratch/kunit-image/linux" \
		'WARNING: CPU: 0 PID: 1 at mm/memory.c:1 copy_page_range+0x10/0x20' \
		'    ok 1 fake_case'
	BUILD=$scratch/kunit-build expect_exit 1 "$here/tools/run/kunit" \
		--kernel "$scratch/kunit-image/linux" --out "$scratch/kunit-out" &&
	expect_in '^    not ok 1 fake_case # kernel complaint$' "$scratch/kunit-out/kunit.ktap" &&
	[ ! -e "$scratch/kunit-build/kunit.ktap" ] && [ ! -e "$scratch/kunit-image/test.log" ] ||
		{ fail "run/kunit --out wrote outside its directory"; return; }
	expect_in 'the kernel complained during the run' "$scratch/stderr"
}

# The verdict is kunit.py's on the boot's KTAP and the runner's on the
# boot: a failed case fails the run, as does a kernel that never reached
# init after passing suites (a panic at the end of the suites, say); a
# clean boot of passing ones passes, its console kept in --out. A runner
# that took the boot's exit status for the verdict (init's 'exit 0'), or
# the KTAP's alone, passes one of them; so does one that boots without
# the arguments it was given (run/policies' fork_copy=, a suite glob).
t kunit_takes_the_suites_verdict
kunit_takes_the_suites_verdict() {
	[ -f "$kunit_py" ] || { skip "no kernel tree yet ('make tree' prepares it)"; return; }
	mkdir -p "$scratch/kunit-image" "$scratch/kunit-build" && ln -sfn "$build/src" "$scratch/kunit-build/src"
	stand_in_kunit_kernel "$scratch/kunit-image/linux" '    ok 1 fake_case'
	BUILD=$scratch/kunit-build expect_exit 0 "$here/tools/run/kunit" \
		--kernel "$scratch/kunit-image/linux" --out "$scratch/kunit-pass" \
		--kernel_args=fork_copy=always 'fake_*' &&
	expect_in '^    ok 1 fake_case$' "$scratch/kunit-pass/console.log" &&
	expect_in '^stand-in kernel: mem=1024M .* fork_copy=always kunit.filter_glob=fake_\*' \
		"$scratch/kunit-pass/console.log" &&
	expect_in 'passed: 1' "$scratch/stdout" || return 1
	stand_in_kunit_kernel "$scratch/kunit-image/linux" '    not ok 1 fake_case'
	BUILD=$scratch/kunit-build expect_exit 1 "$here/tools/run/kunit" \
		--kernel "$scratch/kunit-image/linux" --out "$scratch/kunit-fail" &&
	expect_in 'failed: 1' "$scratch/stdout" || return 1
	stand_in_kunit_kernel "$scratch/kunit-image/linux" '    ok 1 fake_case'
	sed -i '/forklab\/status/d' "$scratch/kunit-image/linux"
	BUILD=$scratch/kunit-build expect_exit 1 "$here/tools/run/kunit" \
		--kernel "$scratch/kunit-image/linux" --out "$scratch/kunit-noinit" &&
	expect_in 'passed: 1' "$scratch/stdout" &&
	expect_in 'no exit status from the kernel' "$scratch/stderr" &&
	expect_in 'the boot failed' "$scratch/stderr"
}

# The tools' mutation runner on three tool mutants of
# tests/fixtures/tool-mutants, each naming tools_index_lists_every_tool:
# one it kills (a tool the index lacks), one it cannot see (a page of
# docs/), one that does not apply. A runner that passed a survivor, took
# a patch that does not apply for a kill, or crashed on it fails here.
t mutate_tools_reports_each_outcome
mutate_tools_reports_each_outcome() {
	local out=$scratch/mutate-tools-build/mutate-tools

	BUILD=$scratch/mutate-tools-build TOOL_MUTANTS=$fixtures/tool-mutants \
		expect_exit 1 "$here/tools/run/mutate-tools" &&
	expect_in '^01-killed  *killed  *[0-9]*  tools_index_lists_every_tool$' "$scratch/stdout" &&
	expect_in '^02-survives  *SURVIVED ' "$scratch/stdout" &&
	expect_in '^03-stale  *ERROR  *[0-9]*  does not apply' "$scratch/stdout" &&
	expect_in '1 of 3 tool mutants killed, 1 survived, 1 errors' "$scratch/stdout" &&
	expect_in '^ok 1 01-killed$' "$out/results.ktap" &&
	expect_in '^not ok 2 02-survives # survived$' "$out/results.ktap" &&
	expect_in '^not ok 3 03-stale # error: does not apply' "$out/results.ktap" &&
	[ ! -e "$out/unmutated" ] && [ ! -e "$out/work" ] ||
		fail "the copies of the checkout were left in $out"
	BUILD=$scratch/mutate-tools-build TOOL_MUTANTS=$fixtures/tool-mutants \
		expect_exit 0 "$here/tools/run/mutate-tools" 01-killed &&
	expect_in '1 of 1 tool mutants killed' "$scratch/stdout" &&
	TOOL_MUTANTS=$scratch/none expect_exit 1 "$here/tools/run/mutate-tools" &&
	one_line_stderr &&
	expect_exit 2 "$here/tools/run/mutate-tools" --bogus && one_line_stderr
}

# Bad input is refused in one line before anything is built or booted:
# an unknown argument (2), a category run_vmtests.sh has not, an install
# that is none, --build-only with one.
t upstream_runners_reject_bad_input
upstream_runners_reject_bad_input() {
	[ -f "$build/src/linux/tools/testing/selftests/mm/run_vmtests.sh" ] ||
		{ skip "no prepared 6.12 tree ('make tree' prepares it)"; return; }
	local ub=$scratch/ub-bad

	mkdir -p "$ub" && ln -s "$build/src" "$ub/src" &&
	BUILD=$ub expect_exit 2 "$here/tools/run/upstream-runners" --no-such-flag && one_line_stderr &&
	BUILD=$ub CATEGORY=nosuch expect_exit 1 "$here/tools/run/upstream-runners" && one_line_stderr &&
	expect_in 'CATEGORY nosuch: run_vmtests.sh has no such category' "$scratch/stderr" &&
	BUILD=$ub expect_exit 1 "$here/tools/run/upstream-runners" --install "$scratch" &&
	one_line_stderr &&
	mkdir -p "$scratch/ks/mm" && touch "$scratch/ks/run_kselftest.sh" "$scratch/ks/mm/run_vmtests.sh" &&
	chmod +x "$scratch/ks/run_kselftest.sh" "$scratch/ks/mm/run_vmtests.sh" &&
	BUILD=$ub expect_exit 1 "$here/tools/run/upstream-runners" --build-only --install "$scratch/ks" &&
	one_line_stderr || return 1
	[ "$(ls "$ub")" = src ] || fail "a refused run left files in BUILD: $(ls "$ub")"
}

# upstream_install PASSING: a kselftest install as kselftest installs one
# (the tree's run_kselftest.sh, kselftest/, mm/run_vmtests.sh and its
# settings, the list of tests), with stand-ins for the two programs of
# run_vmtests.sh's mmap category: map_fixed_noreplace the file PASSING,
# map_populate tests/fixtures/upstream's (one row failed, exit 1).
upstream_install() {
	local sel=$build/src/linux/tools/testing/selftests inst=$scratch/kselftest

	[ -f "$sel/mm/run_vmtests.sh" ] || fail "no $sel/mm/run_vmtests.sh ('make tree' prepares it)"
	rm -rf "$inst" && mkdir -p "$inst/mm" &&
	cp -a "$sel/run_kselftest.sh" "$sel/kselftest" "$inst/" &&
	cp -a "$sel/mm/run_vmtests.sh" "$sel/mm/settings" "$inst/mm/" &&
	echo mm:run_vmtests.sh > "$inst/kselftest-list.txt" &&
	cp "$1" "$inst/mm/map_fixed_noreplace" &&
	cp "$fixtures/upstream/map_populate" "$inst/mm/map_populate" ||
		fail "cannot make a kselftest install in $inst"
}

# upstream_runners EXIT [LIMIT]: run/upstream-runners with EXIT expected,
# on the UML kernel 'make test' built, into a BUILD of the scratch
# directory (RES: $scratch/ub), the guest's limit LIMIT s (default 120).
upstream_runners() {
	local obj

	rm -rf "$scratch/ub" && mkdir -p "$scratch/ub" &&
	obj=$(build=$scratch/ub target um 0 && dirname "$target_image") &&
	ln -s "$build/src" "$scratch/ub/src" && ln -s "$(dirname "$kernel")" "$obj" &&
	BUILD=$scratch/ub expect_exit "$1" "$here/tools/run/upstream-runners" \
		--timeout "${2:-120}" --install "$scratch/kselftest"
}

# upstream's runners in the UML guest, as they are: the runner's TAP
# (run_kselftest.sh's own line for run_vmtests.sh, which fails), each
# test run_vmtests.sh ran a row of the suite upstream, with its verdict;
# the results model fails the failing one unless configs/expected lists it
# as an expected failure (XFAIL), and then names it. A guest whose
# timeout refuses kselftest's --foreground, a TAP that never reaches the
# results, a failing test counted as passed, or an XFAIL given to a
# failure not listed as one fails here.
tk upstream_runners_report_upstream_tap
upstream_runners_report_upstream_tap() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	local res=$scratch/ub/upstream row='selftests: mm: run_vmtests.sh'

	upstream_install "$fixtures/upstream/map_fixed_noreplace" &&
	upstream_runners 0 &&
	expect_in "^not ok 1 $row # exit=1\$" "$res/run_kselftest.tap" &&
	BUILD=$scratch/ub expect_exit 0 "$here/tools/judge/rows" "$res/results.ktap" &&
	expect_in "^PASS $row/map_fixed_noreplace\$" "$scratch/stdout" &&
	expect_in "^FAIL $row/map_populate\$" "$scratch/stdout" &&
	expect_in '^PASS (console and exit)$' "$scratch/stdout" || return 1
	[ "$(wc -l < "$scratch/stdout")" = 3 ] || fail "want 3 rows, got: $(cat "$scratch/stdout")"
	printf '%s\n' '[upstream]' "$row/map_fixed_noreplace" "$row/map_populate" \
		'(console and exit)' > "$scratch/expected"
	BUILD=$scratch/ub expect_exit 1 "$here/tools/judge/results" \
		--expect "$scratch/expected" --suite upstream &&
	expect_in "^judge/results: upstream: FAIL $row/map_populate" "$scratch/stdout" &&
	expect_in '^2 passed, 1 failed, 0 skipped$' "$scratch/stdout" &&
	sed -i "s|^$row/map_populate\$|& # XFAIL the stand-in fails|" "$scratch/expected" &&
	BUILD=$scratch/ub expect_exit 0 "$here/tools/judge/results" \
		--expect "$scratch/expected" --suite upstream &&
	expect_in "^judge/results: upstream: XFAIL $row/map_populate (the stand-in fails)\$" \
		"$scratch/stdout" &&
	expect_in '^2 passed, 0 failed, 1 skipped$' "$scratch/stdout"
}

# A guest whose runner fails (run_kselftest.sh exits 3: a runner that
# is not there, a cd that fails) or hangs (stopped at the guest's limit)
# fails the guest's row with the reason, and the run; the console is
# clean in both. A runner that loses the command's status in its pipe
# to the console, or takes a guest stopped at its limit for a clean end,
# passes them.
tk upstream_runners_fail_a_runner_that_fails
upstream_runners_fail_a_runner_that_fails() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	local res=$scratch/ub/upstream

	upstream_install "$fixtures/upstream/map_fixed_noreplace"
	printf '#!/bin/sh\nexit 3\n' > "$scratch/kselftest/run_kselftest.sh"
	upstream_runners 1
	expect_in '^not ok 1 (console and exit) # exit status 3$' "$res/results.ktap"
	printf '#!/bin/sh\nsleep 600\n' > "$scratch/kselftest/run_kselftest.sh"
	upstream_runners 1 20
	expect_in '^not ok 1 (console and exit) # timed out after 20 s$' "$res/results.ktap"
}

# The console gate on upstream's runners: a test that makes the kernel
# WARN_ON() (tests/fixtures/uml/warn-on.c, exit 0) passes in
# run_vmtests.sh's eyes; the guest's row fails for the kernel's
# complaint, and so does the run. A runner that took the guest's status
# 125 for a clean end passes it.
tk upstream_runners_apply_the_console_gate
upstream_runners_apply_the_console_gate() {
	[ -x "$kernel" ] || { skip "no UML kernel yet ('make test' builds it)"; return; }
	local res=$scratch/ub/upstream

	static_fixture warn-on && upstream_install "$scratch/warn-on" &&
	upstream_runners 1 &&
	expect_in '^# ok 1 map_fixed_noreplace$' "$res/run_kselftest.tap" &&
	expect_in '^not ok 2 (console and exit) # kernel complaint$' "$res/results.ktap" &&
	expect_in 'kernel complaint' "$scratch/stderr" &&
	BUILD=$scratch/ub expect_exit 0 "$here/tools/judge/rows" "$res/results.ktap" &&
	expect_in '^FAIL (console and exit)$' "$scratch/stdout"
}

# --- run/repros ----------------------------------------------------------------

# repros_build: a BUILD of the scratch directory for run/repros: the
# prepared tree and the UML kernel of this BUILD linked in (read only),
# its results, guests and exports its own; a skip without that kernel.
repros_build() {
	local b=$scratch/build

	[ -x "$kernel" ] && [ -d "$build/src/linux" ] ||
		{ skip "no UML kernel yet ('make test' builds it)"; return; }
	rm -rf "$b" && mkdir -p "$b" && ln -s "$build/src" "$b/src" || return
	build=$b target um
	mkdir -p "$(dirname "$target_image")" && ln -s "$kernel" "$target_image"
}

# make repros on tests/fixtures/repros, in syzbot's layout: one that exits
# clean, one that runs until its limit stops it (clean: syzbot's run for
# ever), one that does not build, one that makes the kernel WARN and exits
# 0. Each row says the title and link of its header and the kernel that
# ran, and only the WARN and the build fail; judge/results and the JUnit
# and KCIDB of judge/export carry the rows. A tool that took a complaint
# or a build failure for clean, never stopped a hang (the limit of the
# test's timeout), or misread the header, fails here.
tk repros_judge_each_reproducer
repros_judge_each_reproducer() {
	local res=$scratch/build/repros/results.ktap
	repros_build || return
	BUILD=$scratch/build expect_exit 1 timeout -k 5 100 "$here/tools/run/repros" \
		--limit 15 "$fixtures/repros" &&
	expect_in '^1\.\.4$' "$res" &&
	expect_in "^ok 1 clean: fork: a child that touches its parent's memory and exits$" "$res" &&
	expect_in '^# exit 0, the console clean$' "$res" &&
	expect_in '^ok 2 hang: INFO: task hung in fork: a loop that never ends$' "$res" &&
	expect_in '^# stopped at the limit of 15 s, the console clean$' "$res" &&
	expect_in '^not ok 3 nobuild: uffd: a reproducer that does not build # does not build: .*this_does_not_build' "$res" &&
	expect_in '^not ok 4 warn: WARNING in is_valid_gup_args # kernel complaint: warning: WARNING: CPU: [0-9]* PID: [0-9]* at [^ ]*mm/gup.c:[0-9]* ' "$res" &&
	expect_in '^# link: https://forklab.invalid/repros/warn$' "$res" &&
	expect_in '^# kernel: Linux [0-9][0-9.]* (um)$' "$res" &&
	expect_in '^  warn  *complaint  *WARNING in is_valid_gup_args$' "$scratch/stdout" &&
	expect_in '^run/repros: 2 of 4 reproducers clean on Linux' "$scratch/stdout" || return 1
	# The results model: the user's rows, without expectations.
	BUILD=$scratch/build expect_exit 1 "$here/tools/judge/results" &&
	expect_in '^judge/results: repros: 2 passed, 2 failed, 0 skipped$' "$scratch/stdout" &&
	expect_in '^judge/results: repros: ERROR nobuild: uffd: a reproducer that does not build (does not build' "$scratch/stdout" &&
	expect_in '^judge/results: repros: FAIL warn: WARNING in is_valid_gup_args (kernel complaint' "$scratch/stdout" &&
	BUILD=$scratch/build expect_exit 0 "$here/tools/judge/export" &&
	expect_in '<testsuite name="repros.warn: WARNING in is_valid_gup_args" tests="1" failures="1" errors="0"' \
		"$scratch/build/junit.xml" &&
	expect_in '<testsuite name="repros.hang: INFO: task hung in fork: a loop that never ends" tests="1" failures="0" errors="0"' \
		"$scratch/build/junit.xml" &&
	python3 -c 'import json, sys
tests = {t["path"].split(".")[1]: t["status"] for t in json.load(open(sys.argv[1]))["tests"]
	 if t["path"].startswith("repros.")}
sys.exit(tests != {"clean_fork_a_child_that_touches_its_parent_s_memory_and_exits": "PASS",
		   "hang_INFO_task_hung_in_fork_a_loop_that_never_ends": "PASS",
		   "nobuild_uffd_a_reproducer_that_does_not_build": "ERROR",
		   "warn_WARNING_in_is_valid_gup_args": "FAIL"})' "$scratch/build/kcidb.json" ||
		fail "kcidb.json's repros tests: $(grep -o '"path": "repros[^"]*"' "$scratch/build/kcidb.json")"
}

# ONLY= picks by title (make repros, as a user types it): of the four,
# only the one whose title says uffd; it does not build, so nothing
# boots. A tool that ran them all, or matched the file's name, fails.
tk repros_only_picks_by_title
repros_only_picks_by_title() {
	local res=$scratch/build/repros/results.ktap
	repros_build || return
	expect_exit 2 timeout -k 5 100 make -s -C "$here" repros BUILD="$scratch/build" \
		DIR="$fixtures/repros" ONLY='uffd|hugetlb' &&
	expect_in "reproducers of $fixtures/repros whose title matches 'uffd|hugetlb'" "$scratch/stdout" &&
	expect_in '^1\.\.1$' "$res" &&
	expect_in '^not ok 1 nobuild: uffd: a reproducer that does not build # does not build' "$res"
}

# A guest that dies in its boot, before the kernel mounts the root
# (tests/fixtures/fake-uml-panic stands in for the kernel): the
# reproducer never ran, and its row says so, not that it made the kernel
# complain; the results model calls it ERROR (it did not complete). One
# that booted and gave no exit status (fake-uml-no-status) is no clean
# end either.
t repros_tell_a_boot_that_died
repros_tell_a_boot_that_died() {
	local b=$scratch/build res=$scratch/build/repros/results.ktap
	rm -rf "$b" && mkdir -p "$b/uml" && ln -s "$fixtures/fake-uml-panic" "$b/uml/linux" &&
	BUILD=$b ONLY='^fork:' expect_exit 1 timeout -k 5 100 "$here/tools/run/repros" \
		--limit 30 "$fixtures/repros" &&
	expect_in '^1\.\.1$' "$res" &&
	expect_in '^# kernel: Linux 6.12.0-forklab-stand-in (um)$' "$res" &&
	expect_in "^not ok 1 clean: fork: a child that touches its parent's memory and exits # no exit status: the guest did not boot (panic: Kernel panic - not syncing: a stand-in kernel that never mounts its root)$" "$res" &&
	BUILD=$b KUNIT_DIR=$build/src/linux/tools/testing/kunit expect_exit 0 "$here/tools/judge/rows" "$res" &&
	expect_in "^ERROR clean: fork: a child that touches its parent's memory and exits$" "$scratch/stdout" ||
		return 1
	# A boot that mounted its root, then gave no exit status: not clean;
	# and one whose final taint mask has W (512) set, with no line of
	# the console naming it: a complaint, read from the mask.
	ln -sf "$fixtures/fake-uml-no-status" "$b/uml/linux"
	BUILD=$b ONLY='^fork:' expect_exit 1 timeout -k 5 100 "$here/tools/run/repros" \
		--limit 30 "$fixtures/repros"
	expect_in "^not ok 1 clean: fork: a child that touches its parent's memory and exits # no exit status: the guest died (" "$res"
	FAKE_TAINT=512 BUILD=$b ONLY='^fork:' expect_exit 1 timeout -k 5 100 \
		"$here/tools/run/repros" --limit 30 "$fixtures/repros"
	expect_in "^not ok 1 clean: fork: a child that touches its parent's memory and exits # kernel complaint: taint: .*W" "$res"
}

# Bad input, each one error line before anything is built or booted: no
# folder, a folder that is none or holds no .c, a regex grep cannot
# read, one that no title matches, a limit that is no number.
t repros_reject_bad_input
repros_reject_bad_input() {
	local repros=$here/tools/run/repros
	mkdir -p "$scratch/empty" &&
	expect_exit 2 "$repros" && one_line_stderr &&
	expect_in 'no folder of reproducers given' "$scratch/stderr" &&
	expect_exit 1 "$repros" "$scratch/none" && one_line_stderr &&
	expect_in 'none: no such folder' "$scratch/stderr" &&
	expect_exit 1 "$repros" "$scratch/empty" && one_line_stderr &&
	expect_in 'no reproducer (\*.c) in it' "$scratch/stderr" &&
	expect_exit 2 "$repros" --only '(' "$fixtures/repros" && one_line_stderr &&
	expect_in "ONLY='(' is no regex" "$scratch/stderr" &&
	ONLY='no such title' expect_exit 1 "$repros" "$fixtures/repros" && one_line_stderr &&
	expect_in "no reproducer in .* whose title matches ONLY='no such title'" "$scratch/stderr" &&
	expect_exit 2 "$repros" --limit 1m "$fixtures/repros" && one_line_stderr &&
	expect_in "the limit wants whole seconds, not '1m'" "$scratch/stderr"
}

# --- run/bisect ----------------------------------------------------------------

# bisect_git ARGS...: git with forklab's name on the commits it makes.
bisect_git() {
	git -c user.name=forklab -c user.email=forklab@localhost -c gc.auto=0 \
		-c commit.gpgsign=false "$@"
}

# A tiny git history, no kernel: run/bisect refuses bad input before it
# builds anything, with one error line and the clone untouched. A bisect
# that took an unknown row, an exhibit of another target, a GOOD that is
# not BAD's ancestor or is BAD, or no KERNEL_SRC would start a bisect that
# means nothing; one that took a KERNEL_SRC inside its own directory
# would rewrite the user's tree.
t bisect_rejects_bad_input
bisect_rejects_bad_input() {
	local repo=$scratch/tiny dir=$scratch/bisect row
	mkdir -p "$repo"
	bisect_git -C "$repo" init -q
	echo one > "$repo/file"
	bisect_git -C "$repo" add file
	bisect_git -C "$repo" commit -qm one
	echo two > "$repo/file"
	bisect_git -C "$repo" commit -qam two
	export BISECT_DIR=$dir
	expect_exit 2 "$here/tools/run/bisect" HEAD~1 HEAD 01-fork-copies-every-vma &&
		expect_in 'KERNEL_SRC' "$scratch/stderr" && one_line_stderr
	KERNEL_SRC=$repo expect_exit 2 "$here/tools/run/bisect" HEAD~1 HEAD no_such_row &&
		expect_in 'ROW=no_such_row: not a museum exhibit' "$scratch/stderr" &&
		one_line_stderr
	KERNEL_SRC=$repo expect_exit 2 "$here/tools/run/bisect" HEAD~1 HEAD \
		forklab_vma_needs_copy.no_such_case && one_line_stderr
	# Each kind of row is taken (the revisions' check comes after it).
	for row in 01-fork-copies-every-vma fork_bits forklab_vma_needs_copy \
		forklab_vma_needs_copy.vma_needs_copy_decision; do
		KERNEL_SRC=$repo expect_exit 1 "$here/tools/run/bisect" HEAD HEAD~1 "$row" &&
			expect_in 'is not an ancestor of BAD' "$scratch/stderr" && one_line_stderr
	done
	KERNEL_SRC=$repo expect_exit 1 "$here/tools/run/bisect" HEAD~1 nosuchrev 01-fork-copies-every-vma &&
		expect_in 'BAD=nosuchrev is not a commit' "$scratch/stderr" && one_line_stderr
	# GOOD and BAD one commit, by two names: nothing to bisect. (A
	# BISECT_DIR below a file: a bisect that took them stops there,
	# before it builds anything.)
	KERNEL_SRC=$repo BISECT_DIR=$repo/file/bisect expect_exit 1 "$here/tools/run/bisect" \
		HEAD "$(git -C "$repo" rev-parse HEAD)" 01-fork-copies-every-vma &&
		expect_in 'GOOD and BAD are the same commit' "$scratch/stderr" && one_line_stderr
	# A KERNEL_SRC inside BISECT_DIR (the clone there is made anew), and
	# an exhibit whose Targets: line has not this target: refused before
	# the revisions are looked at.
	KERNEL_SRC=$repo BISECT_DIR=$scratch expect_exit 1 "$here/tools/run/bisect" \
		HEAD HEAD~1 01-fork-copies-every-vma &&
		expect_in "KERNEL_SRC=$repo is inside .*, which bisect rewrites" "$scratch/stderr" &&
		one_line_stderr
	ARCH=um KERNEL_SRC=$repo expect_exit 1 "$here/tools/run/bisect" HEAD HEAD~1 21-hugetlb-child-pte-writable &&
		expect_in 'that exhibit does not run on um (its Targets: line)' "$scratch/stderr" &&
		one_line_stderr
	KERNEL_SRC=$scratch/none expect_exit 1 "$here/tools/run/bisect" HEAD~1 HEAD fork_bits &&
		one_line_stderr
	expect_exit 2 "$here/tools/run/bisect" HEAD~1 HEAD && one_line_stderr
	[ ! -e "$dir" ] || fail "a refused bisect wrote $dir"
	[ -z "$(git -C "$repo" status --porcelain)" ] &&
		[ "$(git -C "$repo" for-each-ref | wc -l)" = 1 ] ||
		fail "a refused bisect changed $repo"
}

# The made-up history of bisect_names_the_first_bad_commit, in a bare
# repository: Debian's 6.12 source as forklab's prepared tree was made
# from it (build/src/linux with src/orig's pristine bytes for every path
# the series and the glue touched), then eight commits: comments in mm/
# files, a commit that does not build and the one that builds again,
# and, sixth, one that brings back what d992895ba2b2 (museum/01's
# exhibit) removed, for file-backed vmas: fork copies their page tables.
# museum/lazy_copy sees it. Made once, and again when the prepared tree's
# source or these commits change.
bisect_subjects=(
	"mm/mmap: a comment"
	"mm/mlock: a comment"
	"mm/mprotect: a comment"
	"mm/mremap: a commit that does not build"
	"mm/mremap: build again"
	"mm: fork copies the page tables of every file-backed vma"
	"mm/madvise: a comment"
	"mm/rmap: a comment"
)

# bisect_commit REPO SUBJECT PATH SED: commit PATH of HEAD, edited by
# sed SED, in bare REPO.
bisect_commit() {
	local blob
	blob=$(git --git-dir="$1" cat-file blob "HEAD:$3" | sed "$4" |
		git --git-dir="$1" hash-object -w --stdin) &&
	GIT_WORK_TREE=$scratch bisect_git --git-dir="$1" update-index \
		--cacheinfo "100644,$blob,$3" &&
	GIT_WORK_TREE=$scratch bisect_git --git-dir="$1" commit -qm "$2"
}

# bisect_history REPO: make it, unless it is there for this source.
bisect_history() {
	local repo=$1 src=$build/src p blob key
	[ -f "$src/touched" ] && [ -f "$src/linux.id" ] && [ -d "$src/orig" ] ||
		fail "no prepared tree in $src ('make tree')"
	key=$({ cat "$src/linux.id"; declare -f bisect_commit bisect_history;
		printf '%s\n' "${bisect_subjects[@]}"; } | sha256sum)
	[ "$(cat "$repo/forklab-key" 2> /dev/null)" != "$key" ] || return 0
	rm -rf "$repo"
	git init -q --bare "$repo"
	# No automatic gc: a repack of the whole source each time it is made.
	git --git-dir="$repo" config gc.auto 0
	GIT_WORK_TREE=$src/linux git --git-dir="$repo" -c core.looseCompression=0 add -Af .
	while read -r p; do
		if [ -f "$src/orig/$p" ]; then
			blob=$(git --git-dir="$repo" hash-object -w "$src/orig/$p")
			GIT_WORK_TREE=$scratch git --git-dir="$repo" update-index --add \
				--cacheinfo "100644,$blob,$p"
		else
			GIT_WORK_TREE=$scratch git --git-dir="$repo" update-index --force-remove "$p"
		fi
	done < "$src/touched"
	GIT_WORK_TREE=$scratch bisect_git --git-dir="$repo" commit -qm "Linux $(kernel_version "$src/linux") as Debian ships it"
	bisect_commit "$repo" "${bisect_subjects[0]}" mm/mmap.c '3s|$| (forklab: a harmless commit)|'
	bisect_commit "$repo" "${bisect_subjects[1]}" mm/mlock.c '3s|$| (forklab: a harmless commit)|'
	bisect_commit "$repo" "${bisect_subjects[2]}" mm/mprotect.c '3s|$| (forklab: a harmless commit)|'
	bisect_commit "$repo" "${bisect_subjects[3]}" mm/mremap.c \
		'$a #error "forklab: this commit of a made-up history does not build"'
	bisect_commit "$repo" "${bisect_subjects[4]}" mm/mremap.c '/^#error "forklab: /d'
	bisect_commit "$repo" "${bisect_subjects[5]}" mm/memory.c \
		's|^\tif (src_vma->anon_vma)$|\tif (src_vma->anon_vma \|\| src_vma->vm_file)|'
	bisect_commit "$repo" "${bisect_subjects[6]}" mm/madvise.c '3s|$| (forklab: a harmless commit)|'
	bisect_commit "$repo" "${bisect_subjects[7]}" mm/rmap.c '3s|$| (forklab: a harmless commit)|'
	[ "$(git --git-dir="$repo" diff HEAD~3 HEAD~2 | grep -c '^[-+]	if (src_vma->anon_vma')" = 2 ] ||
		fail "the sixth commit did not change vma_needs_copy()"
	echo "$key" > "$repo/forklab-key"
}

# make bisect on the made-up history, from its source (GOOD) to its last
# commit (BAD), for museum/01's exhibit on UML: it names the sixth commit,
# the commit that does not build is a skip (125) on the way, and the
# repository bisected is as it was (refs, no bisect state). Slow (a
# kernel build of its own, then one incremental build a step): --part
# slow. Its state stays in build/tests/bisect/ for the next run.
ts bisect_names_the_first_bad_commit
bisect_names_the_first_bad_commit() {
	local top=$build/tests/bisect repo dir first culprit f
	repo=$top/history.git dir=$top/run
	mkdir -p "$top"
	bisect_history "$repo"
	git --git-dir="$repo" for-each-ref > "$scratch/refs.before"
	first=$(git --git-dir="$repo" rev-list --max-parents=0 HEAD)
	culprit=$(git --git-dir="$repo" rev-parse HEAD~2)
	BISECT_DIR=$dir KERNEL_SRC=$repo expect_exit 0 timeout -k 30 3600 \
		"$here/tools/run/bisect" "$first" HEAD 01-fork-copies-every-vma
	cat "$scratch/stdout"
	expect_in "^run/bisect: first bad commit: $culprit ${bisect_subjects[5]}\$" "$scratch/stdout"
	expect_in "^run/bisect: step [0-9a-f]* ${bisect_subjects[3]}\$" "$scratch/stdout"
	grep -q '^run/bisect: skip: it does not build' <<< \
		"$(grep -A1 "^run/bisect: step [0-9a-f]* ${bisect_subjects[3]}\$" "$scratch/stdout")" ||
		fail "the commit that does not build was not skipped"
	git --git-dir="$repo" for-each-ref | cmp -s - "$scratch/refs.before" ||
		fail "the bisect changed the refs of $repo"
	for f in "$repo"/BISECT_*; do
		[ ! -e "$f" ] || fail "bisect state in $repo: $f"
	done
}
