# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tests/judge.sh: the tests of tools/judge/: coverage-gate, rows, compare,
# console-scan and results, on fixture files.
# Sourced by tests/run (t, tk, expect_exit, ... are its).

gate() { "$here/tools/judge/coverage-gate" "$@"; }

# A gate that cannot pass: it must accept full branch coverage.
t gate_passes_when_every_branch_taken
gate_passes_when_every_branch_taken() {
	expect_exit 0 gate "$fixtures/gate/pass.info" --spec "$fixtures/gate/spec" &&
	expect_in 'decide .* 3 *6/6 *4/4 *hit,branches *ok' "$scratch/stdout" &&
	expect_in 'caller .* reported (later)' "$scratch/stdout" &&
	expect_in 'judge/coverage-gate: PASS' "$scratch/stdout"
}

# A gate that cannot fail: one branch never taken must fail and be named.
t gate_fails_on_untaken_branch
gate_fails_on_untaken_branch() {
	expect_exit 1 gate "$fixtures/gate/untaken.info" --spec "$fixtures/gate/spec" &&
	expect_in 'decide .* 5/6 *3/4 .*FAIL' "$scratch/stdout" &&
	expect_in 'FAIL decide: branch 0/0 at source.c:6 never taken' "$scratch/stdout"
}

# A function that never ran: every branch "never reached", and "never called".
t gate_fails_on_unreached_function
gate_fails_on_unreached_function() {
	expect_exit 1 gate "$fixtures/gate/unreached.info" --spec "$fixtures/gate/spec" &&
	expect_in 'FAIL decide: never called' "$scratch/stdout" &&
	expect_in 'branch 0/1 at source.c:4 never reached' "$scratch/stdout"
}

# "lines": a missed line is named even when branch counts are not required.
t gate_lines_requirement
gate_lines_requirement() {
	expect_exit 0 gate "$fixtures/gate/pass.info" --spec "$fixtures/gate/lines.spec" &&
	expect_exit 1 gate "$fixtures/gate/untaken.info" --spec "$fixtures/gate/lines.spec" &&
	expect_in 'FAIL decide: lines never run: source.c:7' "$scratch/stdout"
}

# Function ends from lcov 2's FN:start,end,name, with no source file at all;
# caller's lines must not be counted as decide's.
t gate_reads_lcov2_function_ends
gate_reads_lcov2_function_ends() {
	expect_exit 0 gate "$fixtures/gate/lcov2.info" --spec "$fixtures/gate/lcov2.spec" &&
	expect_in 'decide .* 6/6 *4/4' "$scratch/stdout"
}

# An "na" line is set apart: its untaken branch no longer fails the gate,
# the other branches still count, and the reason is printed.
t gate_sets_na_lines_apart
gate_sets_na_lines_apart() {
	expect_exit 0 gate "$fixtures/gate/untaken.info" --spec "$fixtures/gate/na.spec" &&
	expect_in 'decide .* 4/5 *2/2 .*ok' "$scratch/stdout" &&
	expect_in 'n/a source.c:6 (2 branch arms): b is always 0 in this build' "$scratch/stdout" &&
	expect_exit 1 gate "$fixtures/gate/unreached.info" --spec "$fixtures/gate/na.spec" &&
	expect_exit 2 gate "$fixtures/gate/pass.info" --spec "$fixtures/gate/na-missing.spec" &&
	one_line_stderr && expect_in '"if (c)" is not in decide' "$scratch/stderr"
}

# A "ran" line must have run: an error path the gate cannot ask 'lines' of
# the whole function for. A gate that ignored it would pass unreached.info.
t gate_requires_ran_lines
gate_requires_ran_lines() {
	expect_exit 0 gate "$fixtures/gate/pass.info" --spec "$fixtures/gate/ran.spec" &&
	expect_in 'ran source.c:8 (1x): the fall-through ran' "$scratch/stdout" &&
	expect_exit 1 gate "$fixtures/gate/unreached.info" --spec "$fixtures/gate/ran.spec" &&
	expect_in 'FAIL decide: source.c:8 never ran (the fall-through ran)' "$scratch/stdout" &&
	expect_exit 2 gate "$fixtures/gate/pass.info" --spec "$fixtures/gate/ran-missing.spec" &&
	one_line_stderr && expect_in 'ran: "return 2;" is not in decide' "$scratch/stderr"
}

# A renamed function must fail loudly, not pass with nothing measured.
t gate_fails_on_unknown_function
gate_fails_on_unknown_function() {
	expect_exit 1 gate "$fixtures/gate/pass.info" \
		--spec "$fixtures/gate/unknown-function.spec" &&
	expect_in 'renamed: no such function in source.c' "$scratch/stdout"
}

# Bad input: one error line and exit 2, for each kind.
t gate_rejects_bad_input
gate_rejects_bad_input() {
	local info
	for info in malformed.info not-info.info missing.info; do
		expect_exit 2 gate "$fixtures/gate/$info" --spec "$fixtures/gate/spec" &&
		one_line_stderr || return 1
	done
	expect_exit 2 gate "$fixtures/gate/pass.info" \
		--spec "$fixtures/gate/bad-requirement.spec" &&
	one_line_stderr && expect_in "unknown requirement 'everything'" "$scratch/stderr"
}

# The real spec must parse and name the functions the foundation promises.
t gate_spec_lists_fork_functions
gate_spec_lists_fork_functions() {
	local f
	for f in 'mm/memory.c *vma_needs_copy *hit,branches' \
		'mm/memory.c *copy_page_range' 'kernel/fork.c *dup_mmap'; do
		grep -q "^$f" "$here/coverage/um.spec" || fail "um.spec lacks '$f'"
	done
}

# judge/rows: every row of a KTAP log with the model's verdict, and the
# failed ones as a Caught-by: line names them (what run/mutants and
# run/museum name killers with): a failed row, a test that timed out, a
# program that failed after complete KTAP, the console's 'boot', one the
# runner got no exit status of (run/mm-tests' words), one cut short. A
# walker that drops ERROR rows names no killer for a crash.
t rows_walks_every_row
rows_walks_every_row() {
	local log=$fixtures/rows/results.ktap
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kernel tree yet ('make tree' prepares it)"; return; }
	export KUNIT_DIR=$results_kunit
	expect_exit 0 "$here/tools/judge/rows" "$log" &&
	printf '%s\n' 'PASS forklab_fork/dup_mm_fault_injection' \
		'PASS forklab_fork/fork_case_test/private anon, touched' \
		'FAIL forklab_fork/fork_case_test/MADV_DONTFORK' \
		'SKIP forklab_fork/fork_case_test/VM_PFNMAP' \
		'ERROR forklab_console/kernel_not_tainted' \
		'PASS fork_settings/THP disabled: kept in the child' \
		'ERROR fork_settings/(exit status)' 'FAIL boot' 'ERROR fork_uffd' \
		'ERROR fork_huge' > "$scratch/want" &&
	{ cmp -s "$scratch/want" "$scratch/stdout" ||
		fail "every row: $(diff "$scratch/want" "$scratch/stdout" | tr '\n' ' ')"; } &&
	expect_exit 0 "$here/tools/judge/rows" --failed "$log" &&
	printf '%s\n' 'fork_case_test: MADV_DONTFORK' \
		'forklab_console: kernel_not_tainted' 'fork_settings: (exit status)' \
		'boot' fork_uffd fork_huge > "$scratch/want" &&
	{ cmp -s "$scratch/want" "$scratch/stdout" ||
		fail "--failed: $(diff "$scratch/want" "$scratch/stdout" | tr '\n' ' ')"; } &&
	# more than a pipe holds, so that the reader leaves before the writer
	{ echo 'KTAP version 1'; echo '1..20000'
	  seq 20000 | sed 's/.*/not ok & c&/'; } > "$scratch/big.ktap" &&
	# (it may die of SIGPIPE, as any filter; it must not say so)
	{ "$here/tools/judge/rows" --failed "$scratch/big.ktap" 2> "$scratch/stderr" || :; } |
		head -n 2 > /dev/null &&
	{ [ ! -s "$scratch/stderr" ] ||
		fail "a reader that stops early: $(head -c 300 "$scratch/stderr")"; } &&
	expect_exit 2 "$here/tools/judge/rows" "$scratch/missing.ktap" &&
	one_line_stderr &&
	expect_exit 2 "$here/tools/judge/rows" "$here/README.md" &&
	one_line_stderr &&
	expect_exit 0 "$here/tools/judge/rows" --failed --missing-ok "$scratch/missing.ktap" &&
	{ [ ! -s "$scratch/stdout" ] || fail "--missing-ok printed something"; } &&
	# an empty log is a missing one; a log without KTAP is no less broken
	: > "$scratch/empty.ktap" &&
	expect_exit 0 "$here/tools/judge/rows" --failed --missing-ok "$scratch/empty.ktap" &&
	{ [ ! -s "$scratch/stdout" ] || fail "--missing-ok printed something"; } &&
	expect_exit 2 "$here/tools/judge/rows" --missing-ok "$here/README.md" &&
	one_line_stderr &&
	KUNIT_DIR=$scratch/none expect_exit 2 "$here/tools/judge/rows" "$log" &&
	one_line_stderr
}

# judge/compare on two runs of tests/fixtures/compare/: b/ differs from
# a/ in each kind of change. Its KUnit suite: a row that fails (to_fail),
# one that passes (to_pass), one that skips (to_skip), one that skips for
# another reason (skip_reason), one gone, one new, a failure that became
# a timeout (to_error), a skip and a failure that stay. Its user-space
# suite: a row whose numbers change and verdict stays (no leak), one
# whose numbers and verdict change (injections), the second of two rows
# of one name failing, a new program that fails, and a 'kernel' file
# beside the log (make save keeps it). museum: in a/ only; policies/
# always: in b/ only.
compare_runs=$fixtures/compare

# judge_compare ARG...: judge/compare, its JSON in the scratch directory.
judge_compare() {
	BUILD=$scratch/build KUNIT_DIR=$results_kunit "$here/tools/judge/compare" \
		--out "$scratch/compare.json" "$@"
}

# A tool that misses a kind of change, names it for another, pairs a
# row with the wrong one (the second of a name with the first, a row
# whose count changed with none, a row of B with two of A), or loses a
# suite that one run lacks.
t compare_names_each_kind_of_change
compare_names_each_kind_of_change() {
	local p='judge/compare'
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	expect_exit 1 judge_compare "A=$compare_runs/a" "B=$compare_runs/b"
	cat > "$scratch/want" <<-EOF
	$p: kunit: PASS->FAIL cmp_suite/to_fail: A PASS, B FAIL [regression]
	$p: kunit: FAIL->PASS cmp_suite/to_pass: A FAIL, B PASS
	$p: kunit: skip cmp_suite/to_skip: A PASS, B SKIP (no uffd-wp)
	$p: kunit: skip cmp_suite/skip_reason: A SKIP (no THP), B SKIP (no hugetlb)
	$p: kunit: gone cmp_suite/gone_case: A PASS, B none
	$p: kunit: failure changed cmp_suite/to_error: A FAIL, B ERROR (timed out after 30 s) [regression]
	$p: kunit: new cmp_suite/new_case: A none, B PASS
	$p: kunit (9 rows in A, 9 rows in B): 1 PASS->FAIL, 1 FAIL->PASS, 1 new, 1 gone, 2 skip, 1 failure changed; 2 regressions
	$p: mm-tests: PASS->FAIL prog/fork() ends its injections (55 points) (in A: prog/fork() ends its injections (52 points)): A PASS, B FAIL [regression]
	$p: mm-tests: PASS->FAIL prog/repeated: A PASS, B FAIL [regression]
	$p: mm-tests: new newprog/first: A none, B FAIL [regression]
	$p: mm-tests (4 rows in A, 5 rows in B): 2 PASS->FAIL, 0 FAIL->PASS, 1 new, 0 gone, 0 skip, 0 failure changed; 3 regressions
	$p: museum: gone 01-exhibit: A PASS, B none
	$p: museum (1 row in A, no rows in B): 0 PASS->FAIL, 0 FAIL->PASS, 0 new, 1 gone, 0 skip, 0 failure changed; 0 regressions
	$p: mm-tests-always: new prog/first: A none, B PASS
	$p: mm-tests-always (no rows in A, 1 row in B): 0 PASS->FAIL, 0 FAIL->PASS, 1 new, 0 gone, 0 skip, 0 failure changed; 0 regressions
	$p: 4 suites: 3 PASS->FAIL, 1 FAIL->PASS, 3 new, 2 gone, 2 skip, 1 failure changed; 5 regressions
	$p: JSON: $scratch/compare.json
	EOF
	cmp -s "$scratch/want" "$scratch/stdout" ||
		fail "a against b: $(diff "$scratch/want" "$scratch/stdout" | tr '\n' ' ')"
	# A and B as plain arguments, in that order
	expect_exit 1 judge_compare "$compare_runs/a" "$compare_runs/b"
	cmp -s "$scratch/want" "$scratch/stdout" || fail "A B without A= and B= is another comparison"
	# make compare COMMON=1: the suites one run lacks left out, by name
	KUNIT_DIR=$results_kunit expect_exit 2 make -s -C "$here" compare BUILD="$scratch/build" \
		A="$compare_runs/a" B="$compare_runs/b" COMMON=1
	expect_in "^$p: museum: in A only, not compared\$" "$scratch/stdout"
	expect_in "^$p: 2 suites: " "$scratch/stdout"
	# the pairing by a path but for its numbers takes the rows of B the
	# pairing by path left: A's (1 points) meets B's (3 points), not the
	# (2 points) that A's (2 points) met
	local run rows
	for run in a b; do
		rows=('ok 1 x (1 points)' 'ok 2 x (2 points)' 'ok 1 prog')
		[ "$run" = a ] || rows=('ok 1 x (2 points)' 'not ok 2 x (3 points)' 'not ok 1 prog')
		mkdir -p "$scratch/points-$run/mm-tests" &&
		printf '%s\n' 'KTAP version 1' '1..1' '    KTAP version 1' '    # Subtest: prog' \
			'    1..2' "    ${rows[0]}" "    ${rows[1]}" "${rows[2]}" \
			> "$scratch/points-$run/mm-tests/results.ktap" || return 1
	done
	expect_exit 1 judge_compare "A=$scratch/points-a" "B=$scratch/points-b"
	expect_in "^$p: mm-tests: PASS->FAIL prog/x (3 points) (in A: prog/x (1 points)): A PASS, B FAIL \\[regression\\]\$" \
		"$scratch/stdout"
	expect_in "^$p: mm-tests (2 rows in A, 2 rows in B): 1 PASS->FAIL, 0 FAIL->PASS, 0 new, 0 gone, " \
		"$scratch/stdout"
}

# Two runs of the same rows (a/ and b/ each against a copy of itself):
# no row printed, every count 0, exit 0, though both have failing rows
# and a name twice. A tool that pairs each row of a name with the first
# of it, or calls a failure that stays a regression, fails here.
t compare_of_identical_runs_is_empty
compare_of_identical_runs_is_empty() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local run
	for run in a b; do
		cp -a "$compare_runs/$run" "$scratch/copy-$run"
		expect_exit 0 judge_compare "A=$compare_runs/$run" "B=$scratch/copy-$run"
		! grep -v ': [0-9]* suites: \| rows\{0,1\} in B): \|: JSON: ' "$scratch/stdout" ||
			fail "$run against its copy printed a row"
		grep -c ' 0 PASS->FAIL, 0 FAIL->PASS, 0 new, 0 gone, 0 skip, 0 failure changed; 0 regressions$' \
			"$scratch/stdout" > "$scratch/zeros" || true
		[ "$(cat "$scratch/zeros")" = "$(($(grep -c . "$scratch/stdout") - 1))" ] ||
			fail "$run against its copy: a count is not 0: $(cat "$scratch/stdout")"
	done
}

# The exit status is B's regressions against A: a row B fails that A
# passed, skipped, failed otherwise or did not have. A run better than
# A (a row fixed, a row gone, a skip for another reason) is none; a
# failure that stays is none. A pass that B crashed or timed out on
# (ERROR) is a PASS->FAIL, not a 'failure changed'.
t compare_fails_on_regressions_only
compare_fails_on_regressions_only() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local a=$compare_runs/a b=$scratch/b
	# each change in a run of its own, from a copy of a/
	change() {
		rm -rf "$b"
		cp -a "$a" "$b"
		sed -i "$1" "$b/$2"
	}
	change 's/^    not ok 3 to_pass$/    ok 3 to_pass/; /gone_case/d; s/# SKIP no THP/# SKIP no hugetlb/' kunit.ktap
	expect_exit 0 judge_compare "A=$a" "B=$b"
	expect_in '; 0 regressions$' "$scratch/stdout"
	change 's/^    ok 8 same_skip # SKIP no PAT$/    not ok 8 same_skip/' kunit.ktap
	expect_exit 1 judge_compare "A=$a" "B=$b"
	expect_in '^judge/compare: kunit: skip cmp_suite/same_skip: A SKIP (no PAT), B FAIL \[regression\]$' "$scratch/stdout"
	change 's/^    not ok 9 same_fail$/    not ok 9 same_fail # timed out after 9 s/' kunit.ktap
	expect_exit 1 judge_compare "A=$a" "B=$b"
	expect_in '^judge/compare: kunit: failure changed cmp_suite/same_fail: A FAIL, B ERROR (timed out after 9 s) \[regression\]$' \
		"$scratch/stdout"
	# a pass that B crashed or timed out on: PASS->FAIL, as a FAIL is
	change 's/^    ok 1 unchanged$/    not ok 1 unchanged # timed out after 9 s/' kunit.ktap
	expect_exit 1 judge_compare "A=$a" "B=$b"
	expect_in '^judge/compare: kunit: PASS->FAIL cmp_suite/unchanged: A PASS, B ERROR (timed out after 9 s) \[regression\]$' \
		"$scratch/stdout"
	change '$a\    KTAP version 1\n    # Subtest: newprog\n    1..1\n    not ok 1 first\nnot ok 2 newprog' \
		mm-tests/results.ktap
	sed -i 's/^1\.\.1$/1..2/' "$b/mm-tests/results.ktap"
	expect_exit 1 judge_compare "A=$a" "B=$b"
	expect_in '^judge/compare: mm-tests: new newprog/first: A none, B FAIL \[regression\]$' "$scratch/stdout"
	# a log B has no KTAP in, or an empty one (a kernel that did not
	# boot): its suite did not complete
	change 's/.*/no KTAP here/' mm-tests/results.ktap
	expect_exit 1 judge_compare "A=$a" "B=$b"
	expect_in '^judge/compare: mm-tests: new (no results): A none, B ERROR (.*) \[regression\]$' "$scratch/stdout"
	: > "$b/mm-tests/results.ktap"
	expect_exit 1 judge_compare "A=$a" "B=$b"
	expect_in '^judge/compare: mm-tests: new (no results): A none, B MISSING (.*) \[regression\]$' "$scratch/stdout"
}

# The JSON judge/report is to show: every changed row with its path, its
# verdict in A and in B, its kind; counts per suite and over all; in the
# file --out names (default BUILD/compare.json), written whole.
t compare_writes_its_json
compare_writes_its_json() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	rm -f "$scratch/build/compare.json"
	expect_exit 1 judge_compare "A=$compare_runs/a" "B=$compare_runs/b"
	[ ! -e "$scratch/build/compare.json" ] || fail "--out FILE wrote the default too"
	python3 - "$scratch/compare.json" "$compare_runs" <<'PY' || fail "the JSON is not the comparison printed"
import json, os, sys
doc = json.load(open(sys.argv[1]))
runs = sys.argv[2]
assert doc['a'] == os.path.join(runs, 'a') and doc['b'] == os.path.join(runs, 'b'), doc
assert doc['regressions'] == 5, doc['regressions']
assert doc['counts'] == {'PASS->FAIL': 3, 'FAIL->PASS': 1, 'new': 3, 'gone': 2,
			 'skip': 2, 'failure changed': 1}, doc['counts']
assert list(doc['suites']) == ['kunit', 'mm-tests', 'museum', 'mm-tests-always'], list(doc['suites'])
museum = doc['suites']['museum']
assert (museum['rows_a'], museum['rows_b']) == (1, None), museum
rows = {(s, r['path']): r for s, suite in doc['suites'].items() for r in suite['rows']}
assert len(rows) == 12, rows
want = {('kunit', 'cmp_suite/to_fail'): ('PASS', 'FAIL', 'PASS->FAIL', True),
	('kunit', 'cmp_suite/skip_reason'): ('SKIP', 'SKIP', 'skip', False),
	('kunit', 'cmp_suite/gone_case'): ('PASS', None, 'gone', False),
	('mm-tests', 'newprog/first'): (None, 'FAIL', 'new', True),
	('mm-tests-always', 'prog/first'): (None, 'PASS', 'new', False)}
for key, (a, b, kind, regression) in want.items():
	r = rows[key]
	assert (r['a'], r['b'], r['kind'], r['regression']) == (a, b, kind, regression), r
assert rows['kunit', 'cmp_suite/skip_reason']['why_b'] == 'no hugetlb'
moved = rows['mm-tests', 'prog/fork() ends its injections (55 points)']
assert moved['path_a'] == 'prog/fork() ends its injections (52 points)', moved
assert rows['kunit', 'cmp_suite/to_fail']['path_a'] is None
PY
	# the default: BUILD/compare.json
	BUILD=$scratch/build KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/compare" \
		"A=$compare_runs/a" "B=$compare_runs/a"
	python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["suites"]["kunit"]["rows"] == []' \
		"$scratch/build/compare.json" || fail "no BUILD/compare.json of a against a"
}

# A run that is not one (a folder without a suite log, a saved name
# nobody saved, one run only): one error line, exit 2, no JSON; not a
# comparison with nothing, which would call every row gone or new.
t compare_refuses_bad_runs
compare_refuses_bad_runs() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	rm -f "$scratch/compare.json"
	mkdir -p "$scratch/empty"
	expect_exit 2 judge_compare "A=$scratch/empty" "B=$compare_runs/b"
	one_line_stderr
	expect_in '^judge/compare: error: .*/empty: no suite log in it' "$scratch/stderr"
	expect_exit 2 judge_compare "A=$compare_runs/a" "B=$scratch/empty"
	one_line_stderr
	expect_exit 2 judge_compare "A=$compare_runs/a" B=never-saved
	one_line_stderr
	expect_in '^judge/compare: error: never-saved: no results folder and no saved run' "$scratch/stderr"
	expect_exit 2 judge_compare "A=$compare_runs/a"
	one_line_stderr
	expect_exit 2 judge_compare "A=$compare_runs/a" "B=$compare_runs/b" "$compare_runs/b"
	one_line_stderr
	[ ! -e "$scratch/compare.json" ] || fail "a refused comparison wrote its JSON"
	KUNIT_DIR=$scratch/none expect_exit 2 "$here/tools/judge/compare" \
		--out "$scratch/compare.json" "A=$compare_runs/a" "B=$compare_runs/b"
	one_line_stderr
}

# make save: the suite logs of a results folder and the files the model
# reads beside them (a binary kernel's 'kernel', a chosen run's
# 'selected', an emulated one's 'accel') in BUILD/runs/NAME, which A= and B= then name. A name
# taken, or one that is no file name, is refused in one line, and
# nothing is written.
t save_keeps_a_run_whole
save_keeps_a_run_whole() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local runs=$scratch/build/runs
	rm -rf "$runs"
	expect_exit 0 judge_compare --save before "$compare_runs/b"
	expect_in "^judge/compare: saved 3 suite logs of .* as before: $runs/before\$" "$scratch/stdout"
	(cd "$compare_runs/b" && find . -type f | sort) > "$scratch/want"
	(cd "$runs/before" && find . -type f | sort) > "$scratch/got"
	cmp -s "$scratch/want" "$scratch/got" ||
		fail "saved: $(diff "$scratch/want" "$scratch/got" | tr '\n' ' ')"
	diff -r "$compare_runs/b" "$runs/before" > /dev/null || fail "the saved logs differ"
	expect_exit 0 judge_compare --save a-run "$compare_runs/a"
	expect_in 'selected' <(cd "$runs/a-run" && find . -type f)
	expect_exit 1 judge_compare A=a-run B=before
	cmp -s <(grep -v ': JSON: ' "$scratch/stdout") \
		<(judge_compare "A=$compare_runs/a" "B=$compare_runs/b" | grep -v ': JSON: ') ||
		fail "saved runs compare otherwise than their folders"
	# a name taken: refused, the saved run as it was
	expect_exit 2 judge_compare --save before "$compare_runs/a"
	one_line_stderr
	expect_in 'before: a run is saved under that name already' "$scratch/stderr"
	diff -r "$compare_runs/b" "$runs/before" > /dev/null || fail "a refused save changed the saved run"
	for name in '' ../up .hidden 'a b' -x; do
		expect_exit 2 judge_compare --save "$name" "$compare_runs/a"
		one_line_stderr
	done
	mkdir -p "$scratch/empty"
	expect_exit 2 judge_compare --save empty "$scratch/empty"
	one_line_stderr
	find "$runs" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort > "$scratch/left"
	[ "$(cat "$scratch/left")" = "$(printf 'a-run\nbefore')" ] ||
		fail "a refused save left something: $(tr '\n' ' ' < "$scratch/left")"
	[ ! -e "$scratch/build/up" ] || fail "--save ../up wrote outside BUILD/runs"
}

# A policy's folder (make policies' RES/policies/POLICY: kunit.ktap and
# results.ktap) is a run: A=RES B=RES/policies/always compares make
# check's suites with the policy's, suite for suite, and no other suite
# of RES (tools, mutants, the policy suites) as gone; saved, it is one
# still. A tool that reads the folder as a results folder (no mm-tests
# there) or compares RES's other suites fails here.
t compare_takes_a_policys_folder
compare_takes_a_policys_folder() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local p='judge/compare' dir=$scratch/policy-build
	rm -rf "$dir" "$scratch/build/runs"
	cp -a "$fixtures/results/build" "$dir" &&
	sed -i 's/^    ok 1 plain_case$/    not ok 1 plain_case/' "$dir/policies/always/kunit.ktap" ||
		return 1
	expect_exit 1 judge_compare "A=$dir" "B=$dir/policies/always"
	cat > "$scratch/want" <<-EOF
	$p: kunit: PASS->FAIL fixture_suite/plain_case: A PASS, B FAIL [regression]
	$p: kunit (3 rows in A, 3 rows in B): 1 PASS->FAIL, 0 FAIL->PASS, 0 new, 0 gone, 0 skip, 0 failure changed; 1 regression
	$p: mm-tests: gone forktest/64 MiB SysV shm, fork_copy=lazy: A PASS, B none
	$p: mm-tests: gone forktest/1 MiB SysV shm, fork_copy=lazy: A PASS, B none
	$p: mm-tests: new forktest/64 MiB SysV shm, fork_copy=always: A none, B PASS
	$p: mm-tests: new forktest/1 MiB SysV shm, fork_copy=always: A none, B PASS
	$p: mm-tests (4 rows in A, 4 rows in B): 0 PASS->FAIL, 0 FAIL->PASS, 2 new, 2 gone, 0 skip, 0 failure changed; 0 regressions
	$p: 2 suites: 1 PASS->FAIL, 0 FAIL->PASS, 2 new, 2 gone, 0 skip, 0 failure changed; 1 regression
	$p: JSON: $scratch/compare.json
	EOF
	cmp -s "$scratch/want" "$scratch/stdout" ||
		fail "make check against always: $(diff "$scratch/want" "$scratch/stdout" | tr '\n' ' ')" ||
		return 1
	# saved, and as A: the same suites
	expect_exit 0 judge_compare --save always "$dir/policies/always" &&
	expect_exit 0 judge_compare A=always "B=$dir" &&
	expect_in '^judge/compare: kunit: FAIL->PASS fixture_suite/plain_case: A FAIL, B PASS$' "$scratch/stdout" &&
	expect_in '^judge/compare: 2 suites: ' "$scratch/stdout"
}

# make differences (CI's comparisons): make check's run against each
# policy's that make policies left (always, skip-shared) and each other
# tree's that make check KERNEL=6.1 left, of the suites both have, each
# JSON in BUILD/compare/, an earlier one there gone; a regression in B is
# reported, the exit status 0; a comparison judge/compare could not make
# (no kunit_parser.py) is exit 1. judge/report then shows each
# comparison, and make compare's, as a section: per suite the counts,
# each changed row, a PASS->FAIL marked failed and a FAIL->PASS passed.
# A report without the section, one that shows a regression as a pass,
# a step that fails CI on what a policy changes, or one that passes it
# when a comparison was not made fails here.
t differences_are_reported_and_shown
differences_are_reported_and_shown() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local dir=$scratch/differences-build
	rm -rf "$dir"
	cp -a "$fixtures/results/build" "$dir" &&
	cp -a "$dir/policies/always" "$dir/policies/skip-shared" &&
	sed -i 's/^    ok 1 plain_case$/    not ok 1 plain_case/' "$dir/policies/always/kunit.ktap" &&
	mkdir -p "$dir/compare" "$dir/6.1/mm-tests" &&
	echo '{}' > "$dir/compare/policy-gone.json" &&
	cp "$dir/kunit.ktap" "$dir/6.1/" &&
	sed 's/^    ok 2 second$/    not ok 2 second/' "$dir/mm-tests/results.ktap" \
		> "$dir/6.1/mm-tests/results.ktap" || return 1
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/differences" || return 1
	expect_in '^judge/differences: 3 comparisons, 2 with a regression in B ' "$scratch/stdout" &&
	expect_in '^judge/compare: mm-tests: PASS->FAIL prog/second: A PASS, B FAIL \[regression\]$' \
		"$scratch/stdout" &&
	expect_in '^judge/compare: tools: in A only, not compared$' "$scratch/stdout" || return 1
	[ "$(cd "$dir/compare" && echo *)" = 'policy-always.json policy-skip-shared.json tree-6.1.json' ] ||
		fail "BUILD/compare/: $(ls "$dir/compare")" || return 1
	# make compare's, the other way round: a fix
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/compare" --common \
		"A=$dir/6.1" "B=$dir" || return 1
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/report" || return 1
	python3 - "$dir/report/index.html" <<'PY' || fail "the page's comparisons are not the runs'"
import html, re, sys
page = open(sys.argv[1]).read()
assert '<h2 id="compare">' in page, 'no section'
part = page.split('<h2 id="compare">', 1)[1].split('<h2 ', 1)[0]
titles = re.findall(r'<h3>(.*?)</h3>', part)
assert titles == ['make compare', 'make differences: policy-always',
		  'make differences: policy-skip-shared', 'make differences: tree-6.1'], titles
rows = {}
for block in part.split('<h3>')[1:]:
	title = block.split('</h3>')[0]
	for cls, cells in re.findall(r'<tr class="(\w+)">((?:<td>.*?</td>)+)</tr>', block):
		cells = [html.unescape(c) for c in re.findall(r'<td>(.*?)</td>', cells)]
		rows[title, cells[0], cells[2] if len(cells) == 6 else '(suite)'] = (cls, cells)
want = {('make differences: policy-always', 'kunit', 'fixture_suite/plain_case'): ('fail', 'PASS->FAIL'),
	('make differences: tree-6.1', 'mm-tests', 'prog/second'): ('fail', 'PASS->FAIL'),
	('make compare', 'mm-tests', 'prog/second'): ('pass', 'FAIL->PASS')}
for key, (cls, kind) in want.items():
	assert key in rows, (key, list(rows))
	assert rows[key][0] == cls and rows[key][1][1] == kind, (key, rows[key])
suite = rows['make differences: policy-always', 'kunit', '(suite)']
assert suite[0] == 'fail' and suite[1][1:3] == ['3', '3'], suite
PY
	# a comparison that is none: one error line, no page
	echo '{' > "$dir/compare/broken.json" && rm "$dir/report/index.html" &&
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 1 "$here/tools/judge/report" &&
	one_line_stderr &&
	[ ! -e "$dir/report/index.html" ] || fail "a page with a broken comparison was written"
	# comparisons judge/compare cannot make: exit 1, each one's error line
	BUILD=$dir KUNIT_DIR=$scratch/none expect_exit 1 "$here/tools/judge/differences" &&
	[ "$(grep -c '^judge/compare: error: ' "$scratch/stderr")" = 3 ] ||
		fail "want 3 error lines, got: $(cat "$scratch/stderr")"
	expect_in '^judge/differences: 0 comparisons, ' "$scratch/stdout"
}

scan() { "$here/tools/judge/console-scan" "$@"; }
consoles=$fixtures/console
# Each kind has a console of its own: tests/fixtures/console/KIND.log.
scan_kinds="warning rss-counter bad-page-map bad-page pgtables-bytes oops
	kernel-bug panic kasan ubsan kmemleak lockdep hung-task rcu-stall soft-lockup
	slub swap-entry"

# A scanner that fails everything: clean consoles (boot noise, fault
# injection, page allocation failures, a user segfault and GP fault, the OOM
# killer, a KUnit diagnostic quoting "BUG:") pass silently, and --ktap
# copies them unchanged.
t console_scan_passes_clean_consoles
console_scan_passes_clean_consoles() {
	local f
	for f in clean-kunit clean-user; do
		expect_exit 0 scan --ktap "$scratch/$f.ktap" "$consoles/$f.log" || return 1
		[ ! -s "$scratch/stdout" ] || { fail "$f.log: $(cat "$scratch/stdout")"; return; }
		cmp -s "$consoles/$f.log" "$scratch/$f.ktap" ||
			{ fail "--ktap changed the clean $f.log"; return; }
	done
	expect_exit 0 scan --taint "$consoles/clean-user.log"
}

# A scanner blind to one kind: each kind's console fails, naming the kind
# and the line number of the report.
t console_scan_fails_every_kind
console_scan_fails_every_kind() {
	local kind f n text
	for kind in $scan_kinds; do
		f=$consoles/$kind.log
		expect_exit 1 scan "$f" || { fail "$kind.log passed the scan"; return; }
		n=$(sed -n "s|^judge/console-scan: $f:\([0-9]*\): $kind: .*|\1|p" "$scratch/stdout" | head -n 1)
		[ -n "$n" ] || { fail "$kind.log: no '$kind' line in: $(cat "$scratch/stdout")"; return; }
		text=$(sed -n "s|^judge/console-scan: $f:$n: $kind: ||p" "$scratch/stdout" | head -n 1)
		grep -qF -- "$text" <<< "$(sed -n "${n}p" "$f")" ||
			{ fail "$kind.log:$n is not the line of '$text'"; return; }
	done
}

# A scanner that floods the log: at most 20 complaints, then a count.
t console_scan_caps_its_output
console_scan_caps_its_output() {
	local i
	for i in $(seq 25); do
		echo "BUG: Bad page map in process forktest  pte:$i pmd:0"
	done > "$scratch/flood.log"
	expect_exit 1 scan "$scratch/flood.log" &&
	expect_in '^judge/console-scan: \.\.\. and 5 more$' "$scratch/stdout" || return 1
	[ "$(wc -l < "$scratch/stdout")" = 21 ] || fail "not 21 lines: $(cat "$scratch/stdout")"
}

# A scanner that ignores the taint mask, or checks it without --taint:
# W alone fails and is named, a missing mask fails, TAINT_TEST is allowed
# by default, and --taint-allow lets a bit through.
t console_scan_checks_taint
console_scan_checks_taint() {
	expect_exit 0 scan "$consoles/taint-only.log" &&
	expect_exit 1 scan --taint "$consoles/taint-only.log" &&
	expect_in 'taint-only.log:[0-9]*: taint: tainted 512: W$' "$scratch/stdout" &&
	expect_exit 1 scan --taint "$consoles/no-taint.log" &&
	expect_in 'no-taint.log:[0-9]*: taint: no final taint mask' "$scratch/stdout" &&
	expect_exit 0 scan "$consoles/clean-kunit.log" &&
	expect_exit 0 scan --taint --taint-allow 0x200 "$consoles/taint-only.log" &&
	expect_exit 0 scan --taint --taint-allow 512 "$consoles/taint-only.log" || return 1
	sed 's/^forklab: tainted 0$/forklab: tainted 262144/' \
		"$consoles/clean-user.log" > "$scratch/kunit-taint.log"
	expect_exit 0 scan --taint "$scratch/kunit-taint.log" &&
	expect_exit 1 scan --taint --taint-allow 0 "$scratch/kunit-taint.log" &&
	expect_in 'taint: tainted 262144: N$' "$scratch/stdout"
}

# --ktap that kunit.py would not count: the WARNING fails exactly the row
# it was printed in (and its groups), the BUG after the last result fails
# an added 'boot' test, every other row still passes, and kunit.py reports
# no plan mismatch. The same input gives the same output.
t console_scan_ktap_fails_the_running_test
console_scan_ktap_fails_the_running_test() {
	local out=$scratch/complaint.ktap
	local kunit_py=$build/src/linux/tools/testing/kunit/kunit.py
	expect_exit 1 scan --ktap "$out" "$consoles/kunit-complaint.log" &&
	expect_in '^        not ok 2 private anon, touched # kernel complaint$' "$out" &&
	expect_in '^    not ok 1 vma_needs_copy_decision # kernel complaint$' "$out" &&
	expect_in '^not ok 1 forklab_vma_needs_copy # kernel complaint$' "$out" &&
	expect_in '^not ok 3 boot # kernel complaint$' "$out" || return 1
	expect_exit 1 scan --ktap "$out.again" "$consoles/kunit-complaint.log" &&
	cmp -s "$out" "$out.again" || { fail "--ktap output differs between runs"; return; }
	[ -f "$kunit_py" ] || { skip "no kernel tree yet ('make tree' prepares it)"; return; }
	expect_exit 1 python3 "$kunit_py" parse --json="$scratch/complaint.json" "$out" &&
	expect_in 'Ran 8 tests: passed: 6, failed: 2$' "$scratch/stdout" || return 1
	! grep -qF '[ERROR]' "$scratch/stdout" ||
		{ fail "kunit.py parse: $(grep -F '[ERROR]' "$scratch/stdout")"; return; }
	KUNIT_DIR=${kunit_py%/*} "$here/tools/judge/rows" "$out" | sort > "$scratch/cases"
	sort > "$scratch/want" <<'EOF'
FAIL boot
FAIL forklab_vma_needs_copy/vma_needs_copy_decision/private anon, touched
PASS forklab_fork/dup_mm_fault_injection
PASS forklab_fork/fork_case_test/VM_PFNMAP (remap_pfn_range)
PASS forklab_fork/fork_case_test/private anon, touched
PASS forklab_fork/fork_case_test/remap_file_pages, reversed
PASS forklab_vma_needs_copy/vma_needs_copy_decision/MAP_PRIVATE file, written
PASS forklab_vma_needs_copy/vma_needs_copy_decision/private anon, untouched
EOF
	diff "$scratch/want" "$scratch/cases" > "$scratch/diff" ||
		fail "kunit.py counts other results: $(cat "$scratch/diff")"
}

# A complaint printed after a group's last row (case exit, suite exit):
# kunit.py counts leaves only, so failing the group's result line alone
# would count nothing; --ktap adds a failed leaf to the group and raises
# the suite's plan to match.
t console_scan_ktap_fails_a_group
console_scan_ktap_fails_a_group() {
	local out=$scratch/group.ktap
	local kunit_py=$build/src/linux/tools/testing/kunit/kunit.py
	sed -e 's/^    ok 1 fork_case_test$/WARNING: CPU: 0 PID: 98 at mm\/memory.c:1398\n&/' \
		-e 's/^ok 2 forklab_fork$/BUG: Bad page state in process kunit_try_catch  pfn:1\n&/' \
		"$consoles/clean-kunit.log" > "$scratch/group.log"
	expect_exit 1 scan --ktap "$out" "$scratch/group.log" &&
	expect_in '^        not ok 4 kernel complaint # kernel complaint$' "$out" &&
	expect_in '^    not ok 1 fork_case_test # kernel complaint$' "$out" &&
	expect_in '^    not ok 3 kernel complaint # kernel complaint$' "$out" &&
	expect_in '^    1\.\.3$' "$out" &&
	expect_in '^not ok 2 forklab_fork # kernel complaint$' "$out" || return 1
	[ -f "$kunit_py" ] || { skip "no kernel tree yet ('make tree' prepares it)"; return; }
	expect_exit 1 python3 "$kunit_py" parse "$out" &&
	expect_in 'Ran 9 tests: passed: 7, failed: 2$' "$scratch/stdout" || return 1
	! grep -qF '[ERROR]' "$scratch/stdout" ||
		fail "kunit.py parse: $(grep -F '[ERROR]' "$scratch/stdout")"
}

# Bad input: one error line and exit 2, never a silent pass.
t console_scan_rejects_bad_input
console_scan_rejects_bad_input() {
	expect_exit 2 scan "$scratch/missing.log" && one_line_stderr &&
	expect_in 'judge/console-scan: error: cannot read' "$scratch/stderr" &&
	expect_exit 2 scan "$consoles" && one_line_stderr &&
	expect_exit 2 scan && one_line_stderr &&
	expect_exit 2 scan --bogus "$consoles/clean-user.log" && one_line_stderr &&
	expect_exit 2 scan --taint-allow banana "$consoles/clean-user.log" &&
	one_line_stderr &&
	expect_exit 2 scan --ktap "$scratch/none/out" "$consoles/warning.log" &&
	one_line_stderr
}

# A scanner that takes a printk notice for __warn()'s splat: a real UML
# console of 'mount -t tmpfs -o mand' (tests/fixtures/uml/mount-mand.c),
# with fs/namespace.c's "WARNING: The mand mount option has been
# deprecated and" and no taint, passes silently, with --taint too.
t console_scan_passes_a_notice
console_scan_passes_a_notice() {
	expect_in '^WARNING: The mand mount option' "$consoles/notice-mand.log" &&
	expect_exit 0 scan --taint "$consoles/notice-mand.log" || return 1
	[ ! -s "$scratch/stdout" ] || fail "notice-mand.log: $(cat "$scratch/stdout")"
}

# A scanner blind to __warn()'s splat, or one that fails its other lines:
# a real WARN_ON_ONCE() on UML (tests/fixtures/uml/warn-on.c) and one on
# x86_64 after the 'mand' notice are one 'warning' each, at "WARNING: CPU:
# N PID: N at FILE:LINE FUNC+..."; so is a splat without the file, and
# --taint names the W.
t console_scan_fails_a_warn_splat
console_scan_fails_a_warn_splat() {
	local f want=': warning: WARNING: CPU: 0 PID: [0-9]* at mm/gup.c:2625 is_valid_gup_args+0x'
	for f in warning-gup:86 warning-x86_64:20; do
		expect_exit 1 scan "$consoles/${f%:*}.log" || return 1
		grep -q "^judge/console-scan: $consoles/${f%:*}.log:${f#*:}$want" "$scratch/stdout" &&
			[ "$(wc -l < "$scratch/stdout")" = 1 ] ||
			fail "${f%:*}.log: want one warning at line ${f#*:}: $(cat "$scratch/stdout")"
	done
	sed 's| at mm/gup.c:2625 | at |' "$consoles/warning-gup.log" > "$scratch/no-file.log"
	expect_exit 1 scan --taint "$scratch/no-file.log" &&
	expect_in ':86: warning: WARNING: CPU: 0 PID: 19 at is_valid_gup_args+0x' "$scratch/stdout" &&
	expect_in ':121: taint: tainted 512: W$' "$scratch/stdout"
}

# A scanner blind to one of lockdep's reports: each headline of
# kernel/locking/lockdep.c (one report of each in lockdep-reports.log, the
# line after its '=====' rule) is a 'lockdep' complaint, and no other line
# is a complaint.
t console_scan_fails_every_lockdep_report
console_scan_fails_every_lockdep_report() {
	local f=$consoles/lockdep-reports.log
	awk 'prev ~ /^=+$/ { print FNR ": lockdep: " $0 } { prev = $0 }' "$f" > "$scratch/want"
	[ "$(wc -l < "$scratch/want")" = 14 ] || fail "lockdep-reports.log: not 14 reports"
	expect_exit 1 scan "$f"
	sed "s|^judge/console-scan: $f:||" "$scratch/stdout" > "$scratch/got"
	diff "$scratch/want" "$scratch/got" > "$scratch/diff" ||
		fail "lockdep reports (< missed, > not one): $(cat "$scratch/diff")"
}

# A pattern that swallows a notice NOTICES lists: the scan refuses to run
# (exit 2, the notice named) rather than judge consoles by two lists that
# disagree. The scanner under test is a copy with the old '^WARNING: '.
t console_scan_refuses_patterns_that_match_a_notice
console_scan_refuses_patterns_that_match_a_notice() {
	sed "s|^\(	('warning', r'^WARNING: \)CPU: .*|\1'),|" \
		"$here/tools/lib/forklab/console_scan.py" > "$scratch/console_scan.py"
	grep -q "^	('warning', r'^WARNING: ')," "$scratch/console_scan.py" ||
		fail "no 'warning' pattern to widen in tools/lib/forklab/console_scan.py"
	PYTHONPATH=$here/tools/lib expect_exit 2 python3 "$scratch/console_scan.py" \
		"$consoles/clean-user.log" &&
	one_line_stderr &&
	expect_in "warning matches the notice 'WARNING: The mand mount option" "$scratch/stderr"
}

# NOTICES against each prepared tree (6.12's, and 6.1's once made): each
# line that a printk call of the kernel starts with "WARNING:" is a
# complaint (__warn()'s, lockdep's) or a listed notice, and the tree has
# every notice listed for its line. A new notice in the kernel, a pattern
# that loses a report, or a stale notice fails here.
t console_scan_knows_every_warning_of_the_tree
console_scan_knows_every_warning_of_the_tree() {
	local tree
	expect_exit 2 scan --check-tree "$scratch" && one_line_stderr &&
	expect_exit 2 scan --check-tree "$scratch" "$consoles/warning.log" &&
	one_line_stderr || return 1
	[ -f "$build/src/linux/kernel/panic.c" ] ||
		{ skip "no kernel tree yet ('make tree' prepares it)"; return; }
	for tree in "$build/src/linux" "$build"/*/src/linux; do
		[ -f "$tree/kernel/panic.c" ] || continue
		expect_exit 0 scan --check-tree "$tree" &&
		expect_in ' complaints, [0-9]* listed notices, 0 neither$' "$scratch/stdout"
		! grep -q ': note: ' "$scratch/stdout" ||
			fail "$(grep ': note: ' "$scratch/stdout")"
	done
}

# tools/judge/results on a copy of tests/fixtures/results/build (every suite a
# few rows, all passing), counted against tests/fixtures/results/expect
# with the prepared tree's KTAP parser.
results_kunit=$build/src/linux/tools/testing/kunit

# results_on [FIXTURE LOG]...: a fresh copy of the fixture build dir with
# each LOG in it replaced by tests/fixtures/results/FIXTURE, then
# tools/judge/results on it, against tests/fixtures/results/expect or the
# expectations file a test names (results_expect).
results_on() {
	local dir=$scratch/results-build

	rm -rf "$dir"
	cp -a "$fixtures/results/build" "$dir" || return 1
	while [ $# -ge 2 ]; do
		cp "$fixtures/results/$1" "$dir/$2" || return 1
		shift 2
	done
	# No quarantine unless a test names one (results_quarantine).
	: > "$scratch/no-quarantine"
	BUILD=$dir KUNIT_DIR=$results_kunit "$here/tools/judge/results" \
		--expect "${results_expect:-$fixtures/results/expect}" \
		--quarantine "${results_quarantine:-$scratch/no-quarantine}"
}

# The totals, alone on the last line, as CI reads them.
results_total_is() {
	local last

	last=$(tail -n 1 "$scratch/stdout")
	[ "$last" = "$1" ] || fail "last line '$last', want '$1'"
}

# A tool that fails what passed, miscounts, reads the stale
# build/uml/test.log although build/kunit.ktap exists, or prints anything
# after the totals. Also: a missing expectations file is refused.
t results_counts_a_clean_run
results_counts_a_clean_run() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	expect_exit 0 results_on &&
	expect_in '^judge/results: kunit: 3 passed, 0 failed, 0 skipped$' "$scratch/stdout" &&
	expect_in '^judge/results: mm-tests: 4 passed, 0 failed, 0 skipped$' "$scratch/stdout" &&
	expect_in '^judge/results: tools: 3 passed, 0 failed, 0 skipped$' "$scratch/stdout" &&
	expect_in '^judge/results: mutants: 2 passed, 0 failed, 0 skipped$' "$scratch/stdout" &&
	expect_in '^judge/results: mm-tests-always: 4 passed, 0 failed, 0 skipped$' "$scratch/stdout" &&
	results_total_is '19 passed, 0 failed, 0 skipped' &&
	expect_exit 2 "$here/tools/judge/results" --expect "$scratch/none" && one_line_stderr
}

# Each tree's suites are counted under their own names (kunit-6.1) and
# held against their own sections; the tree KERNEL= names is the one
# whose make check logs are required. A tool that counts one tree only,
# or that fails 6.12's judge for want of 6.1's logs, fails here.
t results_counts_each_tree
results_counts_each_tree() {
	local dir=$scratch/results-build expect=$scratch/expect-trees

	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	# One section for both trees' rows: '[kunit kunit-6.1]'.
	sed 's/^\[\(kunit\|mm-tests\)\]$/[\1 \1-6.1]/' "$fixtures/results/expect" > "$expect"
	grep -q '^\[kunit kunit-6.1\]$' "$expect" || { fail "no shared section"; return; }
	rm -rf "$dir"
	cp -a "$fixtures/results/build" "$dir" && mkdir -p "$dir/6.1/mm-tests" &&
	cp "$dir/kunit.ktap" "$dir/6.1/" &&
	cp "$dir/mm-tests/results.ktap" "$dir/6.1/mm-tests/" || return 1
	BUILD=$dir KUNIT_DIR=$results_kunit \
		expect_exit 0 "$here/tools/judge/results" --expect "$expect" &&
	expect_in '^judge/results: kunit-6.1: 3 passed, 0 failed, 0 skipped$' "$scratch/stdout" &&
	expect_in '^judge/results: mm-tests-6.1: 4 passed, 0 failed, 0 skipped$' "$scratch/stdout" &&
	results_total_is '26 passed, 0 failed, 0 skipped' || return 1
	rm -rf "$dir/6.1"
	BUILD=$dir KUNIT_DIR=$results_kunit \
		expect_exit 0 "$here/tools/judge/results" --expect "$expect" &&
	results_total_is '19 passed, 0 failed, 0 skipped' &&
	BUILD=$dir KUNIT_DIR=$results_kunit KERNEL=6.1 \
		expect_exit 1 "$here/tools/judge/results" --expect "$expect" &&
	expect_in '^judge/results: kunit-6.1: 0 passed, 1 failed, 0 skipped (no results' "$scratch/stdout"
}

# A tool that counts only leaf rows, as kunit.py's JSON has them (it keeps
# no group status): a program that printed complete, all-ok KTAP and then
# crashed ('not ok 2 prog # exit status 125') counted 0 failed.
t results_fails_a_crash_after_complete_ktap
results_fails_a_crash_after_complete_ktap() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	expect_exit 1 results_on mm-tests-crash.ktap mm-tests/results.ktap &&
	expect_in '^judge/results: mm-tests: 4 passed, 1 failed, 0 skipped$' "$scratch/stdout" || return
	[ "$(grep -c '^judge/results: mm-tests: ERROR prog/(exit status) (exit status 125)$' "$scratch/stdout")" = 1 ] ||
		{ fail "want one line naming prog: $(cat "$scratch/stdout")"; return; }
	results_total_is '19 passed, 1 failed, 0 skipped'
}

# A summary that names a failed row but not why: CI keeps only the
# summary, so each failed row's last lines of its own log come with it.
t results_says_why_a_row_failed
results_says_why_a_row_failed() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	expect_exit 1 results_on mm-tests-failed-row.ktap mm-tests/results.ktap &&
	expect_in '^judge/results: mm-tests: 3 passed, 1 failed, 0 skipped$' "$scratch/stdout" &&
	expect_in '^judge/results: mm-tests: FAIL prog/second$' "$scratch/stdout" &&
	expect_in '^judge/results: mm-tests: prog/second: wrong: injection 2: fork() went on after a failure in copy_process' \
		"$scratch/stdout" &&
	expect_in '^judge/results: mm-tests: prog/second: wrong: injection 3: ' "$scratch/stdout" &&
	expect_in '^judge/results: mm-tests: prog/second: site __vmalloc_node_range_noprof, bulk' "$scratch/stdout" || return
	# the last three lines, not the first site's
	! grep -q 'site vm_area_dup' "$scratch/stdout" ||
		{ fail "more than the last 3 lines: $(cat "$scratch/stdout")"; return; }
	results_total_is '18 passed, 1 failed, 0 skipped'
}

# A quarantined row (configs/quarantine's format) that fails is counted
# and named as quarantined, with its own verdict and the reason, and does
# not fail the run; one that passes is named too (it may leave). A tool
# that passes a quarantined failure silently, fails the run for it, or
# forgets a passing one fails here.
t results_reports_quarantined_rows
results_reports_quarantined_rows() {
	local results_quarantine=$scratch/quarantine

	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	printf '%s\n' '# a comment' '' \
		'mm-tests: prog/second # 2026-12-07 fails on a loaded host (fixture)' > "$scratch/quarantine"
	expect_exit 0 results_on mm-tests-failed-row.ktap mm-tests/results.ktap &&
	expect_in '^judge/results: mm-tests: 3 passed, 0 failed, 0 skipped, 1 quarantined$' "$scratch/stdout" &&
	expect_in '^judge/results: mm-tests: QUARANTINED prog/second (FAIL; quarantined: 2026-12-07 fails on a loaded host (fixture))$' \
		"$scratch/stdout" &&
	results_total_is '18 passed, 0 failed, 0 skipped, 1 quarantined' || return 1
	! grep -q 'FAIL prog/second$' "$scratch/stdout" ||
		{ fail "a quarantined row reported as a failure: $(cat "$scratch/stdout")"; return; }
	expect_exit 0 results_on &&
	expect_in '^judge/results: mm-tests: 4 passed, 0 failed, 0 skipped$' "$scratch/stdout" &&
	expect_in '^judge/results: mm-tests: QUARANTINED prog/second passed (quarantined: 2026-12-07 fails on a loaded host (fixture)): it may leave the quarantine$' \
		"$scratch/stdout" &&
	results_total_is '19 passed, 0 failed, 0 skipped' || return 1
	# the line holds in its own suite: the row failing under another
	# policy (mm-tests-always), where nobody quarantined it, fails
	expect_exit 1 results_on mm-tests-failed-row.ktap mm-tests/results.ktap \
		mm-tests-always-failed-row.ktap policies/always/results.ktap &&
	expect_in '^judge/results: mm-tests: 3 passed, 0 failed, 0 skipped, 1 quarantined$' "$scratch/stdout" &&
	expect_in '^judge/results: mm-tests-always: FAIL prog/second$' "$scratch/stdout" &&
	results_total_is '17 passed, 1 failed, 0 skipped, 1 quarantined'
}

# A quarantine line without a reason, without a date, naming a row the
# run does not have, or no suite at all: one error line each, exit 2.
t results_refuses_a_bad_quarantine_line
results_refuses_a_bad_quarantine_line() {
	local line results_quarantine=$scratch/quarantine

	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	for line in 'mm-tests: prog/second # 2026-12-07' 'mm-tests: prog/second # flaky' \
		'mm-tests: prog/second' 'mm-tests: prog/third # 2026-12-07 flaky' \
		'mm-tests-nowhere: prog/second # 2026-12-07 flaky' \
		'mm-tests: prog/second # 2026-13-07 flaky'; do
		printf '%s\n' "$line" > "$scratch/quarantine"
		expect_exit 2 results_on mm-tests-failed-row.ktap mm-tests/results.ktap &&
		one_line_stderr || return 1
		[[ "$line" != mm-tests-nowhere* ]] ||
			expect_in ':1: mm-tests-nowhere: no such suite' "$scratch/stderr" || return 1
	done
	printf '%s\n' 'mm-tests: prog/third # 2026-12-07 flaky' > "$scratch/quarantine" &&
	expect_exit 2 results_on && expect_in ':1: mm-tests: no row prog/third in this run$' "$scratch/stderr" &&
	# one row, two lines: which date and reason hold?
	printf '%s\n' 'mm-tests: prog/second # 2026-12-07 flaky' \
		'mm-tests: prog/second # 2026-12-08 slow' > "$scratch/quarantine" &&
	expect_exit 2 results_on mm-tests-failed-row.ktap mm-tests/results.ktap &&
	one_line_stderr && expect_in ':2: mm-tests: prog/second quarantined a second time' "$scratch/stderr"
}

# An expected failure (configs/expected's 'ROW # XFAIL WHY') covers a
# failure, not a row that did not complete: the listed row timing out is
# an ERROR and fails the run. 'ROW # XFAIL' without a reason is refused:
# one error line, exit 2. A model that gives XFAIL to a hang, or takes
# an expected failure nobody said why of, fails here.
t results_xfail_covers_only_a_failure
results_xfail_covers_only_a_failure() {
	local results_expect=$scratch/expect

	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	sed 's|^prog/second$|& # XFAIL needs what the fixture lacks|' "$fixtures/results/expect" \
		> "$results_expect" &&
	expect_exit 0 results_on mm-tests-failed-row.ktap mm-tests/results.ktap &&
	expect_in '^judge/results: mm-tests: XFAIL prog/second (needs what the fixture lacks)$' "$scratch/stdout" &&
	expect_exit 1 results_on mm-tests-timed-out-row.ktap mm-tests/results.ktap &&
	expect_in '^judge/results: mm-tests: ERROR prog/second (timed out after 30 s (its limit))$' "$scratch/stdout" &&
	results_total_is '18 passed, 1 failed, 0 skipped' &&
	sed -i 's|^prog/second # XFAIL .*|prog/second # XFAIL|' "$results_expect" &&
	expect_exit 2 results_on mm-tests-failed-row.ktap mm-tests/results.ktap &&
	one_line_stderr && expect_in "'ROW # XFAIL WHY'" "$scratch/stderr"
}

# A tool that lets a vanished row lower 'passed' unnoticed: a row of
# mm-tests under fork_copy=always is gone from its KTAP (plan and all).
t results_fails_a_missing_row
results_fails_a_missing_row() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	expect_exit 1 results_on mm-tests-always-missing.ktap policies/always/results.ktap &&
	expect_in '^judge/results: mm-tests-always: 3 passed, 1 failed, 0 skipped$' "$scratch/stdout" &&
	expect_in '^judge/results: mm-tests-always: MISSING forktest/1 MiB SysV shm, fork_copy=always (the expectations list it; the log does not have it)$' \
		"$scratch/stdout" &&
	results_total_is '18 passed, 1 failed, 0 skipped'
}

# make expected (judge/results --write-expected) writes the expectations
# from the run: a row the log no longer has goes, one it has and the file
# did not list comes back at its place in the log, and what the file says
# stays as it says it: {policy} (the run's 'lazy' written out would fail
# every other policy), a comment above its row, a listed skip, @ lines.
# The file it wrote then passes the same run, and writing it again
# changes nothing.
t expected_writes_what_the_run_reported
expected_writes_what_the_run_reported() {
	local expect=$scratch/expect

	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	rm -rf "$scratch/results-build" && cp -a "$fixtures/results/build" "$scratch/results-build" &&
	sed '/^prog\/first$/d; s/^prog\/second$/# the second row\nprog\/second\nprog\/gone/' \
		"$fixtures/results/expect" > "$expect" || return 1
	BUILD=$scratch/results-build KUNIT_DIR=$results_kunit expect_exit 1 \
		"$here/tools/judge/results" --expect "$expect" --write-expected &&
	expect_in "^judge/results: wrote $expect$" "$scratch/stdout" || return 1
	sed -n '/^\[kunit\]$/,$p' "$fixtures/results/expect" |
		sed 's/^prog\/second$/# the second row\nprog\/second/' > "$scratch/want"
	sed -n '/^\[kunit\]$/,$p' "$expect" | grep -v '^$' > "$scratch/got"
	grep -v '^$' "$scratch/want" | diff - "$scratch/got" > "$scratch/diff" ||
		{ fail "written: $(head -n 8 "$scratch/diff" | tr '\n' ' ')"; return; }
	cp "$expect" "$scratch/first" &&
	BUILD=$scratch/results-build KUNIT_DIR=$results_kunit expect_exit 0 \
		"$here/tools/judge/results" --expect "$expect" --write-expected &&
	cmp -s "$scratch/first" "$expect" || fail "a second write changed the file"
}

# A tool that takes every skip for harmless: a skip the expectations do
# not list fails, named with its reason; one they list counts as skipped,
# if it skipped for the reason they give.
t results_fails_an_unexpected_skip
results_fails_an_unexpected_skip() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	expect_exit 1 results_on tools-skips.ktap tests/tools.ktap &&
	expect_in '^judge/results: tools: 1 passed, 1 failed, 1 skipped$' "$scratch/stdout" &&
	expect_in '^judge/results: tools: UNEXPECTED SKIP b_test (no UML kernel yet)$' "$scratch/stdout" &&
	results_total_is '17 passed, 1 failed, 1 skipped' || return 1
	# listed to skip, but skipped for another reason: news too
	rm -rf "$scratch/results-build" && cp -a "$fixtures/results/build" "$scratch/results-build" &&
	sed 's/# SKIP the fixture says so$/# SKIP no npm here/' "$fixtures/results/tools-skips.ktap" \
		> "$scratch/results-build/tests/tools.ktap" &&
	BUILD=$scratch/results-build KUNIT_DIR=$results_kunit expect_exit 1 \
		"$here/tools/judge/results" --expect "$fixtures/results/expect" &&
	expect_in "^judge/results: tools: UNEXPECTED SKIP may_skip (skipped for 'no npm here'; the expectations list it for 'the fixture says so')$" \
		"$scratch/stdout"
}

# A binary kernel's suite (mm-tests-debian): a row listed '# LIVE WHY'
# that fails is a live bug of the kernel that ran, named with the
# package and version in the run's 'kernel' file, and counted among the
# skipped, as is the exit status 1 its program gives for it; the same row
# listed plainly fails the run; once it passes (a later upload has the
# fix), it is a pass. A model that excuses every
# failure, or none, or names no kernel, fails here.
t results_names_a_live_bug
results_names_a_live_bug() {
	local dir=$scratch/results-build expect=$scratch/expect-live deb

	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	deb=$dir/$(python_tool table shell | sed -n "s/^forklab_binaries='\{0,1\}\([^' ]*\).*/\1/p")
	[ "$deb" != "$dir/" ] || { fail "no binary kernel in the table"; return; }
	rm -rf "$dir"
	cp -a "$fixtures/results/build" "$dir" && mkdir -p "$deb/mm-tests" &&
	# prog fails 'second' and exits 1 for it, as run/mm-tests writes it.
	awk '/^    # Subtest: prog$/ { p = 1 } p && /^    1\.\.2$/ { $0 = "    1..3" }
	     /^    ok 2 second$/ { print "    not ok 2 second"
			       print "    not ok 3 (exit status) # exit status 1"; next }
	     /^ok 2 prog$/ { $0 = "not ok 2 prog # exit status 1" } { print }' \
		"$dir/mm-tests/results.ktap" > "$deb/mm-tests/results.ktap" &&
	echo 'linux-image-fake 1.0-1' > "$deb/mm-tests/kernel" || return 1
	grep -q '^    not ok 2 second$' "$deb/mm-tests/results.ktap" || { fail "no failed row"; return; }
	sed "s/^\[mm-tests\]$/[mm-tests mm-tests-${deb##*/}]/" "$fixtures/results/expect" > "$expect" &&
	printf '[mm-tests-%s]\nprog/second # LIVE abc123 missing\n' "${deb##*/}" >> "$expect" || return 1
	BUILD=$dir KUNIT_DIR=$results_kunit \
		expect_exit 0 "$here/tools/judge/results" --expect "$expect" &&
	expect_in "^judge/results: mm-tests-${deb##*/}: 3 passed, 0 failed, 0 skipped, 1 live bug\$" "$scratch/stdout" &&
	expect_in "^judge/results: mm-tests-${deb##*/}: LIVE BUG prog/second (live bug in linux-image-fake 1.0-1: abc123 missing)\$" \
		"$scratch/stdout" &&
	expect_in "^judge/results: mm-tests-${deb##*/}: LIVE BUG prog/second " "$scratch/stdout" &&
	results_total_is '22 passed, 0 failed, 2 skipped' || return 1
	# Not listed as a live bug, the same failure fails the run.
	sed '$d' "$expect" > "$expect.plain" &&
	BUILD=$dir KUNIT_DIR=$results_kunit \
		expect_exit 1 "$here/tools/judge/results" --expect "$expect.plain" &&
	expect_in "^judge/results: mm-tests-${deb##*/}: FAIL prog/second" "$scratch/stdout" || return 1
	# Fixed: the listed live bug's row passes.
	cp "$dir/mm-tests/results.ktap" "$deb/mm-tests/results.ktap" &&
	BUILD=$dir KUNIT_DIR=$results_kunit \
		expect_exit 0 "$here/tools/judge/results" --expect "$expect" &&
	expect_in "^judge/results: mm-tests-${deb##*/}: 4 passed, 0 failed, 0 skipped\$" "$scratch/stdout"
}

# One run, four readers: make check's verdict (judge/results --target),
# junit.xml, kcidb.json and the HTML page must name the same rows as not
# as expected, each with the same verdict. The run (tests/fixtures/results/
# agree/): a KUnit row that vanished and one during which the console
# printed a WARNING (console-scan fails it), a user-space skip the
# expectations do not list, and a program whose boot died (no exit
# status, its rows missing). A reader that walks the log its own way, or
# does not know the expectations, disagrees here.
t every_reader_gives_the_same_verdicts
every_reader_gives_the_same_verdicts() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local dir=$scratch/results-build agree=$fixtures/results/agree
	rm -rf "$dir"
	cp -a "$fixtures/results/build" "$dir"
	expect_exit 1 "$here/tools/judge/console-scan" --ktap "$dir/kunit.ktap" \
		"$agree/kunit-console.log"
	cp "$agree/mm-tests.ktap" "$dir/mm-tests/results.ktap"
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 1 "$here/tools/judge/results" \
		--target --expect "$fixtures/results/expect"
	cp "$scratch/stdout" "$scratch/results.out"
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/export" \
		--expect "$fixtures/results/expect"
	BUILD=$dir expect_exit 0 "$here/tools/judge/report"
	python3 - "$scratch/results.out" "$dir/junit.xml" "$dir/kcidb.json" \
		"$dir/report/index.html" <<'PY' || fail "the readers disagree"
import html, json, re, sys
import xml.etree.ElementTree as ET
out, junit, kcidb, page = sys.argv[1:5]
want = {('kunit', 'fixture_suite/plain_case'): 'FAIL',
	('kunit', 'fixture_suite/param_case/row two'): 'MISSING',
	('mm-tests', 'forktest/1 MiB SysV shm, fork_copy=lazy'): 'UNEXPECTED SKIP',
	('mm-tests', 'prog'): 'ERROR',
	('mm-tests', 'prog/first'): 'MISSING',
	('mm-tests', 'prog/second'): 'MISSING'}
def path(classname, name):
	suite, group = classname.split('.', 1)
	return suite, group if name == group else f'{group}/{name}'
said = {}
for line in open(out):
	m = re.match(r'judge/results: (kunit|mm-tests): (FAIL|ERROR|MISSING|UNEXPECTED SKIP|UNLISTED) (\S.*?)(?: \(.*\))?$', line)
	if m:
		said[m.group(1), m.group(3)] = m.group(2)
assert said == want, ('judge/results', said)
said = {}
for case in ET.parse(junit).getroot().iter('testcase'):
	for kind in ('failure', 'error'):
		el = case.find(kind)
		if el is not None:
			said[path(case.get('classname'), case.get('name'))] = el.get('message').split(':')[0]
assert said == want, ('junit.xml', said)
said = {}
status = {'FAIL': 'FAIL', 'ERROR': 'ERROR', 'MISSING': 'MISS', 'UNEXPECTED SKIP': 'FAIL'}
for t in json.load(open(kcidb))['tests']:
	v = t.get('misc', {}).get('verdict')
	if v and v not in ('PASS', 'SKIP'):
		assert t['status'] == status[v], t
		said[path(*t['misc']['name'].split('/', 1))] = v
assert said == want, ('kcidb.json', said)
listed = {path(*html.unescape(m.group(1)).split(': ', 1)[0:1], html.unescape(m.group(1)).split(': ', 1)[1])
	  for m in re.finditer(r'<li><b>(.*?)</b>', open(page).read())}
assert listed == set(want), ('report', listed)
PY
	expect_in '^5 passed, 6 failed, 0 skipped$' "$scratch/results.out"
}

# A make test after make check leaves logs newer than junit.xml: the page
# gives the results model's verdicts on those (judge/report exports them
# again), not an earlier run's.
t report_reads_the_logs_there_are
report_reads_the_logs_there_are() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local dir=$scratch/results-build
	rm -rf "$dir"
	cp -a "$fixtures/results/build" "$dir"
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/export" &&
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/report" || return 1
	! grep -qF "<li><b>mm-tests.prog: prog</b>" "$dir/report/index.html" ||
		fail "a row of a log not yet written is shown"
	# a newer user-space log (the times set, not left to the clock)
	touch -d '-2 min' "$dir/junit.xml" "$dir/kunit.ktap" &&
	cp "$fixtures/results/agree/mm-tests.ktap" "$dir/mm-tests/results.ktap" &&
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/report" &&
	expect_in "<li><b>mm-tests.prog: prog</b>" "$dir/report/index.html" || return 1
	# a newer KUnit log alone
	touch -d '-2 min' "$dir/junit.xml" "$dir/mm-tests/results.ktap" &&
	expect_exit 1 "$here/tools/judge/console-scan" --ktap "$dir/kunit.ktap" \
		"$fixtures/results/agree/kunit-console.log" &&
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/report" &&
	expect_in "<li><b>kunit.fixture_suite: plain_case</b>" "$dir/report/index.html" || return 1
	# no junit.xml at all
	rm "$dir/junit.xml" &&
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/report" &&
	[ -s "$dir/junit.xml" ] || fail "no junit.xml, and no export" || return 1
	# an export that fails: an error, not the older page
	touch -d '-2 min' "$dir/junit.xml" && touch "$dir/kunit.ktap" &&
	rm "$dir/report/index.html" &&
	BUILD=$dir KUNIT_DIR=$scratch/none expect_exit 1 "$here/tools/judge/report" &&
	expect_in 'judge/report: error: .*judge/export .* failed' "$scratch/stderr" &&
	[ ! -e "$dir/report/index.html" ] || fail "a page of older results was written"
}

# The Python tools (tools/lib/forklab/NAME.py, each run by its bash
# tool): a failure is an exit status and an error line, through the
# wrapper too (a wrapper that swallowed the module's status would pass
# every run).
t python_tools_fail_through_their_wrappers
python_tools_fail_through_their_wrappers() {
	mkdir -p "$scratch/empty" "$scratch/no-exhibits" &&
	BUILD=$scratch/empty expect_exit 1 "$here/tools/judge/export" &&
	expect_in '^judge/export: error: ' "$scratch/stderr" && one_line_stderr &&
	BUILD=$scratch/empty expect_exit 1 "$here/tools/judge/report" &&
	expect_in '^judge/report: error: no results under ' "$scratch/stderr" &&
	expect_exit 1 "$here/tools/judge/mutation-report" --out "$scratch/empty" &&
	expect_in '^judge/mutation-report: error: no .*results.tsv' "$scratch/stderr" &&
	MUSEUM=$scratch/no-exhibits expect_exit 1 "$here/tools/judge/museum-report" &&
	expect_in '^judge/museum-report: error: no exhibit in ' "$scratch/stderr"
}

# A binary kernel's results (make check KERNEL=debian) have a section of
# their own, named for the package that ran; a row that failed as a live
# bug is listed as one, not as a failure of the run.
t report_shows_a_binary_kernels_live_bugs
report_shows_a_binary_kernels_live_bugs() {
	local dir=$scratch/binary-build

	rm -rf "$dir" && mkdir -p "$dir/debian" "$dir/binaries/debian" &&
	echo "linux-image-6.1.0-99-amd64 6.1.200-1" > "$dir/binaries/debian/package" &&
	cat > "$dir/debian/junit.xml" <<'XML' || return 1
<?xml version='1.0' encoding='UTF-8'?>
<testsuites name="forklab x86_64 Linux 6.1.200" tests="3" failures="2" errors="0">
  <testsuite name="mm-tests.prog" tests="3" failures="2" errors="0" skipped="0">
    <testcase name="good row" classname="mm-tests.prog" />
    <testcase name="the row of a fix it lacks" classname="mm-tests.prog">
      <failure message="LIVE BUG: it lacks 0123456789ab">it lacks the fix
LIVE BUG (0123456789ab missing)</failure>
    </testcase>
    <testcase name="(exit status)" classname="mm-tests.prog">
      <failure message="LIVE BUG: the exit status of its live bugs">exit 1</failure>
    </testcase>
  </testsuite>
</testsuites>
XML
	BUILD=$dir expect_exit 0 "$here/tools/judge/report" &&
	expect_in "<h3>x86_64, linux-image-6.1.0-99-amd64 6.1.200-1 (debian&#x27;s binary kernel)</h3>" \
		"$dir/report/index.html" &&
	expect_in ': 3 results, 0 failed, 1 live bugs of the kernel that ran, 0 did not complete.' \
		"$dir/report/index.html" &&
	expect_in '<ul class="live">' "$dir/report/index.html" &&
	expect_in '<tr class="pass"><td>mm-tests.prog</td><td>1</td><td>0</td><td>1</td><td>0</td><td>0</td></tr>' \
		"$dir/report/index.html" || return 1
	! grep -q '<ul class="failing">' "$dir/report/index.html" ||
		fail "a live bug listed as a failure of the run"
}

# Every exhibit of museum/ has a whole header as the report reads it
# (values continued on a second line included); a target not run says so.
t museum_report_reads_every_exhibit
museum_report_reads_every_exhibit() {
	rm -rf "$scratch/build"
	expect_exit 0 env BUILD="$scratch/build" "$here/tools/judge/museum-report" &&
	expect_in '^| \[01-fork-copies-every-vma\].* | um | [0-9.]* | not run |' "$scratch/stdout" &&
	expect_in '^| \[30-hugetlb-early-cow-copy-writable\].* | x86_64 | [0-9.]* | not run |' "$scratch/stdout" &&
	expect_in '^| \[53-6.1-hugetlb-uffd-wp-kept-without-event-fork\].* | x86_64 | [0-9.]* | not run |' "$scratch/stdout" &&
	# Columns named for the kernels that ran (forklab's, with its series;
	# those without it, as their runs name them, here none ran); a
	# Live-in: header is the exhibit's claim, not a result of the run,
	# and no live bug is listed that no run showed.
	expect_in '| forklab [0-9.]* | forklab [0-9.]* | Linux 6.12 without the series | Linux 6.1 without the series | debian | s |$' \
		"$scratch/stdout" &&
	expect_in '^- Live in, as the exhibit says (not a result of this run): ' "$scratch/stdout" &&
	expect_in "^None known: no kernel without forklab's series has run" "$scratch/stdout" &&
	! grep -q "accelerator in these runs" "$scratch/stdout" &&
	# Candidates a run did not confirm, from museum/not-shown.md.
	expect_in '^## Candidates not shown$' "$scratch/stdout" &&
	expect_in '^- \*\*fork_file_thp: a file THP still allocated' "$scratch/stdout"
	! grep -qi 'unmodified [0-9]\|^- \[.*) on ' "$scratch/stdout" ||
		fail "a column or line says what no run did: $(grep -i 'unmodified [0-9]\|^- \[.*) on ' "$scratch/stdout")"
}

# The kernels without the series, as their last runs left them (each
# RES/museum: version, clean.tsv): a column each, named as the run named
# the kernel; a failure on one is a live bug of that kernel, in its cell
# and in the list. A row of another target says n/a in every column of
# an x86_64 kernel, and its exhibit is no live bug there even when a
# clean.tsv older than its Targets: line holds a failure. A reproducer
# the tree has no program for ("none") is no live bug either, nor a
# failure on forklab's kernel of a tree the exhibit is not reverted on.
t museum_report_lists_the_live_bugs_of_the_kernels_that_ran
museum_report_lists_the_live_bugs_of_the_kernels_that_ran() {
	local deb=$scratch/build/debian/museum as_is=$scratch/build/unpatched/x86_64/museum
	local forklab=$scratch/build/x86_64/museum forklab_6_1=$scratch/build/6.1/x86_64/museum
	local kernel='linux-image-6.1.0-99-amd64 6.1.200-1'

	rm -rf "$scratch/build" && mkdir -p "$deb" "$as_is" "$forklab" "$forklab_6_1" &&
	echo 6.1.192 > "$forklab_6_1/version" && echo tcg > "$forklab_6_1/accel" &&
	printf '53-6.1-hugetlb-uffd-wp-kept-without-event-fork\tnone\tno program here\n' \
		> "$forklab/clean.tsv" &&
	echo "$kernel" > "$deb/version" && echo tcg > "$deb/accel" && echo kvm > "$forklab/accel" &&
	printf '%s\t%s\t%s\n' \
		01-fork-copies-every-vma 1 'exit 1: a run before its Targets: said um' \
		30-hugetlb-early-cow-copy-writable 1 'exit 1: not ok 1 the child wrote to the page' \
		51-6.1-child-keeps-ksm-counters 1 'exit 1: not ok 1 ksm counters' \
		53-6.1-hugetlb-uffd-wp-kept-without-event-fork none 'no program uffd_hugetlb_fork' \
		> "$deb/clean.tsv" &&
	echo "Linux 6.12.117 without forklab's series (/src/as-is)" > "$as_is/version" &&
	printf '30-hugetlb-early-cow-copy-writable\t0\tclean: 1 ok\n' > "$as_is/clean.tsv" &&
	expect_exit 0 env BUILD="$scratch/build" "$here/tools/judge/museum-report" &&
	expect_in "| Linux 6.12.117 without forklab's series (/src/as-is) | Linux 6.1 without the series | $kernel | s |\$" \
		"$scratch/stdout" &&
	expect_in '^| \[01-fork-copies-every-vma\].* | um | 6\.12[0-9.]* | .* | n/a | n/a | n/a | *|$' "$scratch/stdout" &&
	# An exhibit of both targets: the x86_64 kernels' cells on its
	# x86_64 row only.
	expect_in '^| \[51-6.1-child-keeps-ksm-counters\].* | um | 6\.1\.192 | .* | n/a | n/a | n/a | *|$' "$scratch/stdout" &&
	expect_in '^| \[51-6.1-child-keeps-ksm-counters\].* | x86_64 | 6\.1\.192 | .* | LIVE BUG: exit 1: not ok 1 ksm counters | *|$' \
		"$scratch/stdout" &&
	expect_in '^| \[30-hugetlb-early-cow-copy-writable\].* | x86_64 | 6\.12[0-9.]* | .* | clean | not run | LIVE BUG: exit 1: not ok 1 the child wrote to the page | *|$' \
		"$scratch/stdout" &&
	expect_in '^| \[53-6.1-hugetlb-uffd-wp-kept-without-event-fork\].* | no program here | not run | not run | not run | no program uffd_hugetlb_fork | *|$' \
		"$scratch/stdout" &&
	expect_in "^- \[30-hugetlb-early-cow-copy-writable\](#30-hugetlb-early-cow-copy-writable) (.*) on $kernel: exit 1: not ok 1 the child wrote to the page\$" \
		"$scratch/stdout" &&
	# Each QEMU run's accelerator, as it recorded it; the runs that
	# recorded none (6.12 without the series here) are not named.
	expect_in "^QEMU's accelerator in these runs: forklab 6\.12[0-9.]* on x86_64: kvm; forklab 6\.1\.192 on x86_64: tcg; $kernel: tcg\.\$" \
		"$scratch/stdout" || return 1
	[ "$(grep -c '^- \[.*) on ' "$scratch/stdout")" = 2 ] ||
		fail "want 30 and 51 as the only live bugs: $(grep '^- \[.*) on ' "$scratch/stdout")"
}

# judge/live-reports on a binary kernel's run with two live rows of one
# fix (and its program's exit status, no row of its own) and forklab's
# runs of the tree (x86_64 and UML): a 6.1.y request from the tree's
# backport, in reply to the FAILED mail its exhibit cites, the rows
# before on the binary and after on forklab's x86_64 kernel (not UML's,
# which skipped them), the backport's diff unchanged; a Debian report
# with the run's package and version. What an earlier run wrote and this
# one does not show is gone.
live_reports() {
	local live=$fixtures/live

	"$here/tools/judge/live-reports" --before "$live/${1:-debian}.kcidb.json" \
		--after "$live/forklab-um.kcidb.json" "$live/forklab.kcidb.json" --out "$scratch/out"
}

t live_reports_write_a_stable_request_and_a_debian_report
live_reports_write_a_stable_request_and_a_debian_report() {
	local req=$scratch/out/stable/6.1.y/0017-mm-hugetlb-fix-uffd-wp-during-fork.patch
	local bug=$scratch/out/debian/linux-image-6.1.0-57-amd64-5a2f8d22ace4.txt
	local backport=$here/patches/6.1/0017-mm-hugetlb-fix-uffd-wp-during-fork.patch

	rm -rf "$scratch/out" &&
	mkdir -p "$scratch/out/stable/6.1.y" "$scratch/out/debian" "$scratch/out/.live-reports.tmp/debian" &&
	touch "$scratch/out/.live-reports.tmp/debian/left-by-a-killed-run.txt" &&
	touch "$scratch/out/stable/6.1.y/0013-fixed-since.patch" "$scratch/out/debian/fixed.txt" &&
	expect_exit 0 live_reports &&
	expect_in '^judge/live-reports: 1 stable request(s), 1 Debian report(s)' "$scratch/stdout" &&
	[ "$(find "$scratch/out" -type f | wc -l)" = 2 ] ||
		fail "want the request and the report only: $(find "$scratch/out" -type f)"
	expect_in '^Subject: \[PATCH 6.1.y\] mm/hugetlb: fix uffd-wp during fork()$' "$req" &&
	expect_in '^To: stable@vger.kernel.org$' "$req" &&
	expect_in '^In-Reply-To: <2023050718-verdict-stegosaur-3aaa@gregkh>$' "$req" &&
	expect_in '^commit 5a2f8d22ace4c8ac8798fab836dca7350fa710b1 upstream\.$' "$req" &&
	# The notes, between '---' and the diffstat: each row before and after.
	sed -n '/^---$/,/^ mm\/hugetlb.c/p' "$req" > "$scratch/notes" &&
	expect_in '^mm-tests.fork_huge/hugetlb uffd-wp, child without EVENT_FORK: no uffd-wp in its pte:$' "$scratch/notes" &&
	expect_in "^  linux-image-6.1.0-57-amd64 6.1.192-3 (x86_64): LIVE BUG$" "$scratch/notes" &&
	expect_in "^    the child's ptes' uffd-wp are not 0$" "$scratch/notes" &&
	expect_in '^  forklab 6.1.192 (x86_64, with this patch): PASS$' "$scratch/notes" &&
	! grep -q 'exit status\|(um\|SKIP' "$scratch/notes" ||
		fail "a program's status or UML's run among the rows: $(cat "$scratch/notes")"
	[ "$(grep -c ': PASS$' "$scratch/notes")" = 2 ] ||
		fail "want both rows after: $(cat "$scratch/notes")"
	cmp -s <(sed -n '/^diff /,$p' "$backport") <(sed -n '/^diff /,$p' "$req") ||
		fail "the request's diff is not the backport's"
	expect_in '^Package: src:linux$' "$bug" &&
	expect_in '^Version: 6.1.192-3$' "$bug" &&
	expect_in '^Subject: linux-image-6.1.0-57-amd64: .*5a2f8d22ace4' "$bug" &&
	expect_in '^    the child.s write raised 0 uffd-wp faults, want 1$' "$bug" &&
	expect_in 'patches/6.1/0017-mm-hugetlb-fix-uffd-wp-during-fork.patch' "$bug"
}

# Two fixes live on the binary kernel (and a row forklab itself failed,
# which is no live bug), a kernel without the series that showed none,
# and forklab's 6.12 run listed before its 6.1 run: each fix its request
# and its report; "after" is the 6.1 kernel's; "missing from" names the
# kernel that showed it only; 0018's request answers no FAILED mail (its
# exhibit cites 5.4's and 6.6's only).
t live_reports_name_each_fix_its_tree_and_its_runs
live_reports_name_each_fix_its_tree_and_its_runs() {
	local live=$fixtures/live out=$scratch/out req

	rm -rf "$out" &&
	expect_exit 0 "$here/tools/judge/live-reports" \
		--before "$live/debian-two-fixes.kcidb.json" "$live/clean-6.12.kcidb.json" \
		--after "$live/forklab-6.12.kcidb.json" "$live/forklab.kcidb.json" --out "$out" &&
	expect_in '^judge/live-reports: 2 stable request(s), 2 Debian report(s)' "$scratch/stdout" &&
	[ -f "$out/debian/linux-image-6.1.0-57-amd64-95567729173e.txt" ] &&
	[ -f "$out/debian/linux-image-6.1.0-57-amd64-5a2f8d22ace4.txt" ] ||
		fail "want a Debian report per fix: $(ls "$out/debian")"
	! grep -rq 'a row forklab fails' "$out" || fail "forklab's own failure reported as a live bug"
	for req in "$out"/stable/6.1.y/*.patch; do
		expect_in '^  forklab 6.1.192 (x86_64, with this patch): PASS$' "$req" &&
		! grep -q '6\.12' "$req" || fail "$(basename "$req"): another tree's run: $(grep -n '6\.12' "$req")"
		grep -q 'is missing from linux-image-6.1.0-57-amd64 6.1.192-3\. ' <<< "$(tr '\n' ' ' < "$req")" ||
			fail "$(basename "$req"): 'missing from' names another kernel"
	done
	req=$out/stable/6.1.y/0018-mm-userfaultfd-fix-uninitialized-output-field-for-EA.patch
	[ -f "$req" ] || fail "no 6.1.y request for 95567729173e"
	! grep -q '^In-Reply-To:\|failed to apply' "$req" ||
		fail "0018 answers a FAILED mail of another stable tree: $(grep -m1 'In-Reply-To' "$req")"
}

# A live row that names no fix, a run that is not there, and a run of
# forklab's own kernel as "before": one error line, nothing written.
t live_reports_refuse_what_they_cannot_report
live_reports_refuse_what_they_cannot_report() {
	rm -rf "$scratch/out" && mkdir -p "$scratch/out/stable" &&
	touch "$scratch/out/stable/kept" &&
	expect_exit 1 live_reports no-id &&
	expect_in "^judge/live-reports: error: .*no-id.kcidb.json: .*: a live bug without the upstream id" \
		"$scratch/stderr" && one_line_stderr &&
	expect_exit 1 live_reports absent &&
	expect_in '^judge/live-reports: error: a --before file does not exist' "$scratch/stderr" &&
	expect_exit 1 live_reports forklab &&
	expect_in "^judge/live-reports: error: .*forklab.kcidb.json: a run of forklab's kernel" "$scratch/stderr" &&
	[ -e "$scratch/out/stable/kept" ] && [ ! -e "$scratch/out/debian" ] ||
		fail "a refused run changed the reports: $(find "$scratch/out")"
}

# judge/export on the fixture build: JUnit that xmllint validates against
# the vendored junit-10.xsd, with unique (classname, name) pairs, a
# failure carrying the row's diagnostics and a crash after all-ok rows as
# a testcase of its own; KCIDB that the vendored v5.3 schema accepts, and
# a suite without a log as MISS, not absent. Against the fixture's own
# expectations: against the target's, every fixture row is UNLISTED, a
# FAIL whatever the tool made of it.
export_on() {
	local dir=$scratch/results-build

	rm -rf "$dir"
	cp -a "$fixtures/results/build" "$dir" || return 1
	# FIXTURE LOG pairs, then judge/export's options
	while [ $# -ge 2 ] && [ "${1#--}" = "$1" ]; do
		if [ "$1" = none ]; then
			rm -f "$dir/$2"
		else
			cp "$fixtures/results/$1" "$dir/$2" || return 1
		fi
		shift 2
	done
	BUILD=$dir KUNIT_DIR=$results_kunit "$here/tools/judge/export" --out "$scratch/out" \
		--expect "${results_expect:-$fixtures/results/expect}" "$@"
}

# schema_valid SCHEMA FILE: the vendored JSON schema tools/judge/schemas/
# SCHEMA (Draft-07) accepts FILE (Debian's python3-jsonschema, or a
# python3 on PATH that has it).
schema_valid() {
	local py

	for py in python3 /usr/bin/python3; do
		"$py" -c 'import jsonschema' 2>/dev/null && break
	done
	"$py" - "$here/tools/judge/schemas/$1" "$2" <<'PY'
import json, sys, jsonschema
schema, doc = (json.load(open(p)) for p in sys.argv[1:3])
errors = list(jsonschema.Draft7Validator(
	schema, format_checker=jsonschema.FormatChecker()).iter_errors(doc))
for e in errors[:3]:
	print(f'{sys.argv[2]}: {e.message}', file=sys.stderr)
sys.exit(1 if errors else 0)
PY
}

# kcidb_valid FILE: KCIDB v5.3 accepts FILE.
kcidb_valid() {
	schema_valid kcidb-v5.3.json "$1"
}

# A binary kernel's run (KERNEL=debian): KCIDB's checkout and build are
# its image package, at the version the package file names (beside the
# image, as tools/setup/binary-kernel writes it), and JUnit names that
# kernel; nothing is exported under a tree forklab builds.
t export_names_a_binary_kernel_for_its_package
export_names_a_binary_kernel_for_its_package() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local dir=$scratch/binary-export kcidb=$scratch/binary-export/debian/kcidb.json
	local junit=$scratch/binary-export/debian/junit.xml

	rm -rf "$dir" && mkdir -p "$dir/debian/mm-tests" "$dir/binaries/debian" &&
	echo tcg > "$dir/debian/mm-tests/accel" &&
	echo 'linux-image-6.1.0-99-amd64 6.1.200-1' > "$dir/binaries/debian/package" &&
	export_mm_tests_as debian "$dir/debian" BUILD="$dir" KERNEL=debian ARCH=x86_64 &&
	expect_in '"tree_name": "linux-image-6.1.0-99-amd64",' "$kcidb" &&
	expect_in '"config_name": "linux-image-6.1.0-99-amd64",' "$kcidb" &&
	expect_in '"kernel_version": "6.1.200",' "$kcidb" &&
	expect_in '"package_version": "6.1.200-1"' "$kcidb" &&
	expect_in '"id": "forklab:linux-image-6.1.0-99-amd64_6.1.200-1",' "$kcidb" &&
	expect_in '"path": "mm_tests.prog.second"' "$kcidb" &&
	expect_in '<testsuites name="forklab x86_64 (QEMU under tcg) Linux 6.1.200" ' "$junit" || return 1
	! grep -q 'linux-source\|"kunit' "$kcidb" ||
		fail "a tree's name or forklab's KUnit in a binary kernel's export: $(grep -n 'linux-source\|"kunit' "$kcidb")" ||
		return 1
	# Its build: MISS without the image, PASS with it.
	build_status_is MISS || return 1
	touch "$dir/binaries/debian/vmlinuz" &&
	BUILD=$dir KERNEL=debian ARCH=x86_64 KUNIT_DIR=$results_kunit \
		expect_exit 0 "$here/tools/judge/export" --expect "$scratch/expect-debian" &&
	build_status_is PASS || return 1
	# Without the package file there is nothing to name it by.
	rm "$dir/binaries/debian/package" &&
	BUILD=$dir KERNEL=debian ARCH=x86_64 KUNIT_DIR=$results_kunit \
		expect_exit 1 "$here/tools/judge/export" --expect "$scratch/expect-debian" &&
	one_line_stderr && expect_in 'no package file beside ' "$scratch/stderr"
}

# export_mm_tests_as SUITE RES VAR=VALUE...: the fixture's user-space
# results in RES, exported by judge/export with those variables (which
# make RES the run's results) and the fixture's expectations under
# mm-tests-SUITE ($scratch/expect-SUITE); its kcidb.json is valid.
export_mm_tests_as() {
	local suite=$1 res=$2

	shift 2
	mkdir -p "$res/mm-tests" &&
	cp "$fixtures/results/build/mm-tests/results.ktap" "$res/mm-tests/" &&
	sed "s/^\[mm-tests\]\$/[mm-tests mm-tests-$suite]/" "$fixtures/results/expect" \
		> "$scratch/expect-$suite" &&
	expect_exit 0 env "$@" KUNIT_DIR="$results_kunit" "$here/tools/judge/export" \
		--expect "$scratch/expect-$suite" &&
	kcidb_valid "$res/kcidb.json" 2> "$scratch/kcidb" ||
		fail "kcidb.json does not validate: $(cat "$scratch/kcidb")"
}

# build_status_is STATUS: kcidb.json's ($kcidb) build has that status.
build_status_is() {
	local got
	got=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["builds"][0]["status"])' \
		"$kcidb") && [ "$got" = "$1" ] || fail "build status ${got:-none}, want $1"
}

# A tree built as it is (SERIES=none): exported as Debian's source of
# that tree, its checkout without the series' hash; not as a binary
# kernel (it has no package), though it has no KUnit either.
t export_names_a_tree_without_the_series
export_names_a_tree_without_the_series() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local dir=$scratch/as-is-export res=$scratch/as-is-export/unpatched/x86_64
	local kcidb=$scratch/as-is-export/unpatched/x86_64/kcidb.json

	rm -rf "$dir" && mkdir -p "$dir/unpatched/src" &&
	cp -a "$fixtures/tree" "$dir/unpatched/src/linux" &&
	export_mm_tests_as 6.12-unpatched-x86_64 "$res" BUILD="$dir" SERIES=none ARCH=x86_64 &&
	expect_in '"tree_name": "debian-linux-source-6.12",' "$kcidb" &&
	expect_in '"id": "forklab:linux-6.12.117-noseries",' "$kcidb" &&
	expect_in '"patchset_hash": "",' "$kcidb" &&
	expect_in '"path": "mm_tests.prog.second"' "$kcidb"
}

t export_writes_junit_and_kcidb
export_writes_junit_and_kcidb() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local junit=$scratch/out/junit.xml kcidb=$scratch/out/kcidb.json
	expect_exit 0 export_on mm-tests-failed-row.ktap mm-tests/results.ktap &&
	xmllint --noout --schema "$here/tools/judge/schemas/junit-10.xsd" "$junit" \
		2> "$scratch/xmllint" || fail "junit.xml does not validate: $(cat "$scratch/xmllint")"
	kcidb_valid "$kcidb" 2> "$scratch/kcidb" || fail "kcidb.json does not validate: $(cat "$scratch/kcidb")"
	expect_in '<testcase name="param_case/row one" classname="kunit.fixture_suite"' "$junit" &&
	expect_in '<testcase name="second" classname="mm-tests.prog">' "$junit" &&
	expect_in 'fork() went on after a failure in copy_process' "$junit" &&
	expect_in '"path": "mm_tests.prog.second"' "$kcidb" &&
	expect_in '"path": "kunit.fixture_suite.param_case.row_one"' "$kcidb" &&
	expect_in '"status": "FAIL"' "$kcidb" || return 1
	local pairs
	pairs=$(grep -o '<testcase name="[^"]*" classname="[^"]*"' "$junit" | sort | uniq -d)
	[ -z "$pairs" ] || fail "repeated (classname, name): $pairs"
	# A program that printed all-ok rows and then crashed (exit 125).
	expect_exit 0 export_on mm-tests-crash.ktap mm-tests/results.ktap &&
	expect_in '<testcase name="(exit status)" classname="mm-tests.prog">' "$junit" &&
	expect_in '"path": "mm_tests.prog.exit_status"' "$kcidb" || return 1
	# The coverage gate's figures, as tests with a number.
	mkdir -p "$scratch/results-build/coverage" &&
	cp "$fixtures/gate/pass.info" "$scratch/results-build/coverage/forklab.info" &&
	cp "$fixtures/gate/source.c" "$scratch/results-build/coverage/" &&
	BUILD=$scratch/results-build KUNIT_DIR=$results_kunit GATE_SPEC=$fixtures/gate/spec \
		expect_exit 0 "$here/tools/judge/export" --out "$scratch/out" &&
	expect_in '"path": "coverage.decide.branches"' "$kcidb" &&
	grep -q '"value": 100.0' <<< "$(grep -A 3 '"number"' "$kcidb")" &&
	kcidb_valid "$kcidb" 2> /dev/null || fail "coverage tests missing or invalid"
	# No user-space log: its guest never ran.
	expect_exit 0 export_on none mm-tests/results.ktap &&
	expect_in '"status": "MISS"' "$kcidb" &&
	kcidb_valid "$kcidb" 2> /dev/null || fail "a MISS document does not validate"
}

# export_skips_second MESSAGE STATUS VERDICT [OPTION...]: judge/export
# (export_on, with OPTIONs) of the fixture build whose prog/second fails:
# both documents valid, prog/second a JUnit skip (no failure) whose
# message starts MESSAGE, KCIDB's STATUS with misc's verdict VERDICT.
export_skips_second() {
	local message=$1 status=$2 verdict=$3 junit=$scratch/out/junit.xml kcidb=$scratch/out/kcidb.json
	shift 3
	expect_exit 0 export_on mm-tests-failed-row.ktap mm-tests/results.ktap "$@" &&
	xmllint --noout --schema "$here/tools/judge/schemas/junit-10.xsd" "$junit" 2> /dev/null &&
	kcidb_valid "$kcidb" 2> /dev/null || fail "the documents do not validate" || return 1
	python3 - "$junit" "$kcidb" "$message" "$status" "$verdict" <<'PY' ||
import json, sys, xml.etree.ElementTree as ET
junit, kcidb, message, status, verdict = sys.argv[1:]
case = [c for c in ET.parse(junit).iter('testcase')
	if c.get('classname') == 'mm-tests.prog' and c.get('name') == 'second'][0]
skip = case.find('skipped')
assert skip is not None and case.find('failure') is None, ET.tostring(case)
assert skip.get('message').startswith(message), skip.get('message')
test = [t for t in json.load(open(kcidb))['tests'] if t['path'] == 'mm_tests.prog.second'][0]
assert test['status'] == status and test['misc']['verdict'] == verdict, test
PY
		fail "prog/second is not reported as $verdict"
}

# A quarantined row that failed: a JUnit skip whose message says
# QUARANTINED and why, KCIDB's FAIL with the quarantine in misc, and the
# HTML page's quarantined column and list; one that passed: its
# system-out and the page say it may leave. An export that drops the
# quarantine, or shows a quarantined failure as a pass, fails here.
t export_shows_quarantined_rows
export_shows_quarantined_rows() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local junit=$scratch/out/junit.xml kcidb=$scratch/out/kcidb.json dir=$scratch/results-build
	printf '%s\n' 'mm-tests: prog/second # 2026-12-07 fails on a loaded host (fixture)' \
		> "$scratch/quarantine"
	export_skips_second 'QUARANTINED (FAIL; quarantined: 2026-12-07 fails on' FAIL QUARANTINED \
		--quarantine "$scratch/quarantine" &&
	expect_in '"quarantine": "2026-12-07 fails on' "$kcidb" || return 1
	cp "$scratch/out/junit.xml" "$dir/junit.xml" &&
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/report" &&
	expect_in '<td>mm-tests.prog</td><td>1</td><td>0</td><td>0</td><td>1</td><td>0</td>' "$dir/report/index.html" &&
	expect_in '<ul class="quarantined">' "$dir/report/index.html" || return 1
	# passed while quarantined
	expect_exit 0 export_on --quarantine "$scratch/quarantine" &&
	expect_in '<system-out>QUARANTINED row passed (quarantined: 2026-12-07 fails' "$junit" &&
	grep -q '"status": "PASS"' <<< "$(grep -A 3 '"path": "mm_tests.prog.second"' "$kcidb")" ||
		fail "a passing quarantined row is not PASS" || return 1
	cp "$scratch/out/junit.xml" "$dir/junit.xml" &&
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/report" &&
	expect_in '<ul class="freed">' "$dir/report/index.html"
}

# An expected failure (configs/expected's 'ROW # XFAIL WHY'): KCIDB's
# SKIP with misc's verdict XFAIL, and a JUnit skip whose message says
# XFAIL and why; neither a pass nor a failure. An export that shows it
# as a pass, or drops its reason, fails here.
t export_shows_expected_failures
export_shows_expected_failures() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local results_expect=$scratch/expect
	sed 's|^prog/second$|& # XFAIL needs what the fixture lacks|' "$fixtures/results/expect" \
		> "$results_expect" &&
	export_skips_second 'XFAIL: needs what the fixture lacks' SKIP XFAIL
}

# The accelerator QEMU ran under (run/kunit's and run/mm-tests' 'accel'
# file beside the KTAP: kvm or tcg) in kcidb.json's build and each test
# of that suite, and in junit.xml's name (the HTML page's heading); none
# without the file (UML). An export that drops it fails here.
t export_records_the_accelerator
export_records_the_accelerator() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local kcidb=$scratch/out/kcidb.json junit=$scratch/out/junit.xml dir=$scratch/results-build
	expect_exit 0 export_on || return 1
	! grep -q accelerator "$kcidb" || fail "an accelerator without an accel file" || return 1
	echo tcg > "$dir/mm-tests/accel" &&
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/export" \
		--out "$scratch/out" --expect "$fixtures/results/expect" &&
	kcidb_valid "$kcidb" 2> /dev/null || fail "kcidb.json does not validate" || return 1
	python3 - "$kcidb" "$junit" <<'PY' || fail "the accelerator is not recorded"
import json, sys, xml.etree.ElementTree as ET
doc = json.load(open(sys.argv[1]))
assert doc['builds'][0]['misc']['accelerator'] == 'tcg', doc['builds']
mm = [t for t in doc['tests'] if t['path'].startswith('mm_tests.')]
assert mm and all(t['misc']['accelerator'] == 'tcg' for t in mm), mm
assert ' under tcg) ' in ET.parse(sys.argv[2]).getroot().get('name')
PY
}

# The KCIDB checkout and build say what this run's prepare and build did:
# valid only when prepare-tree finished the tree (its stamp), the build's
# status what run/kunit's make left in OBJ/build.status (an image from an
# earlier build is no PASS), MISS with no record.
t export_says_what_was_built
export_says_what_was_built() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	local kcidb=$scratch/out/kcidb.json dir=$scratch/results-build
	# kcidb_field EXPR WANT: the document's EXPR (Python, on d) is WANT.
	kcidb_field() {
		python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
			"$kcidb" "$1" > "$scratch/field" || fail "cannot read $1"
		[ "$(cat "$scratch/field")" = "$2" ] ||
			fail "$1 is $(cat "$scratch/field"), want $2"
	}
	expect_exit 0 export_on
	kcidb_field "d['checkouts'][0]['valid']" False
	kcidb_field "d['builds'][0]['status']" MISS
	mkdir -p "$dir/src" "$dir/uml"
	echo hash > "$dir/src/linux.stamp"
	echo FAIL > "$dir/uml/build.status"
	: > "$dir/uml/linux"
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/export" --out "$scratch/out"
	kcidb_field "d['checkouts'][0]['valid']" True
	kcidb_field "d['builds'][0]['status']" FAIL
	echo PASS > "$dir/uml/build.status"
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/export" --out "$scratch/out"
	kcidb_field "d['builds'][0]['status']" PASS
	rm "$dir/uml/linux"
	BUILD=$dir KUNIT_DIR=$results_kunit expect_exit 0 "$here/tools/judge/export" --out "$scratch/out"
	kcidb_field "d['builds'][0]['status']" MISS
	kcidb_valid "$kcidb" 2> /dev/null || fail "kcidb.json does not validate"
}

# judge/merge joins make policies' shards (SHARD=K/N over the sorted
# policies) into RES/policies, one directory per policy, and refuses a
# policy that is in two shards; a failed policy fails the merge.
t merge_joins_policy_shards
merge_joins_policy_shards() {
	local b=$scratch/build res k p

	res=$(BUILD=$b "$here/tools/lib/target" um 0 res) || return 1
	for k in 0 1; do
		mkdir -p "$res/policies-$k-of-2" &&
		printf '%s\n' always skip-shared > "$res/policies-$k-of-2/shard.list" || return 1
	done
	for p in always:0 skip-shared:1; do
		mkdir -p "$res/policies-${p#*:}-of-2/${p%:*}" &&
		printf 'KTAP version 1\n1..1\nok 1 row\n' |
			tee "$res/policies-${p#*:}-of-2/${p%:*}/kunit.ktap" \
			> "$res/policies-${p#*:}-of-2/${p%:*}/results.ktap" || return 1
	done
	cp -a "$res/policies-0-of-2" "$scratch/policy-shard" &&
	cp -a "$res/policies-0-of-2/always" "$res/policies-1-of-2/" &&
	BUILD=$b expect_exit 1 "$here/tools/judge/merge" && one_line_stderr &&
	expect_in 'always is in more than one shard' "$scratch/stderr" &&
	rm -r "$res/policies-1-of-2/always" &&
	BUILD=$b expect_exit 0 "$here/tools/judge/merge" &&
	expect_in '^ok 1 row' "$res/policies/skip-shared/results.ktap" &&
	expect_in '^ok 1 row' "$res/policies/always/kunit.ktap" || return 1
	[ ! -e "$res/policies-0-of-2" ] || { fail "the merge left its shards"; return; }
	# Shards of different runs (shard.list differs), and a policy in no
	# shard, are refused, and the shards stay.
	for k in 0 1; do
		mkdir -p "$res/policies-$k-of-2/x" && echo x > "$res/policies-$k-of-2/shard.list"
	done
	echo y > "$res/policies-1-of-2/shard.list" &&
	BUILD=$b expect_exit 1 "$here/tools/judge/merge" && one_line_stderr &&
	expect_in "shard.list differs" "$scratch/stderr" &&
	printf '%s\n' x always > "$res/policies-0-of-2/shard.list" &&
	cp "$res/policies-0-of-2/shard.list" "$res/policies-1-of-2/shard.list" &&
	rmdir "$res/policies-1-of-2/x" &&
	BUILD=$b expect_exit 1 "$here/tools/judge/merge" && one_line_stderr &&
	expect_in "always is in no shard" "$scratch/stderr" &&
	[ -d "$res/policies-0-of-2" ] || { fail "a refused merge removed its shards"; return; }
	rm -rf "$res"/policies-*-of-2
	# A failed row in a shard fails the joined run.
	printf 'KTAP version 1\n1..1\nnot ok 1 row\n' > "$scratch/policy-shard/always/results.ktap" &&
	mv "$scratch/policy-shard" "$res/policies-0-of-1" &&
	printf '%s\n' always > "$res/policies-0-of-1/shard.list" &&
	BUILD=$b expect_exit 1 "$here/tools/judge/merge"
}

# The vendored schema is a check, not a formality: a null, a path KCIDB's
# pattern refuses and an id without its origin are each rejected.
t kcidb_schema_rejects_bad_documents
kcidb_schema_rejects_bad_documents() {
	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	expect_exit 0 export_on || return 1
	local bad
	for bad in '.tests[0].comment = null' '.tests[0].path = "kunit.a b"' \
		'.builds[0].id = "Forklab-no-origin"'; do
		python3 - "$scratch/out/kcidb.json" "$bad" > "$scratch/bad.json" <<'PY' || return 1
import json, sys
doc = json.load(open(sys.argv[1]))
where, value = sys.argv[2].split(' = ')
obj = doc
parts = where.strip('.').replace('[', '.').replace(']', '').split('.')
for p in parts[:-1]:
	obj = obj[int(p)] if p.isdigit() else obj[p]
obj[parts[-1]] = json.loads(value)
json.dump(doc, sys.stdout)
PY
		if kcidb_valid "$scratch/bad.json" 2> /dev/null; then
			fail "the schema accepted $bad"
			return
		fi
	done
}

# judge/report's page, rendered by headless Chromium (Debian's chromium):
# the results by suite and the mutants are in its DOM, Stryker's viewer
# (npm mutation-testing-elements, installed into BUILD/npm on first use)
# is inlined and draws the mutant, Killed, in its totals and on its
# file's page (read from its shadow DOM), and the screenshot
# (build/tests/report.png, for a reviewer to look at) is not blank.
# Skipped without chromium or the bundle.
t report_renders_in_chromium
report_renders_in_chromium() {
	local dir=$scratch/results-build png=$build/tests/report.png

	[ -f "$results_kunit/kunit_parser.py" ] ||
		{ skip "no kunit_parser.py yet ('make tree' prepares the tree)"; return; }
	command -v chromium > /dev/null || { skip "no chromium (make deps installs it)"; return; }
	expect_exit 0 export_on mm-tests-failed-row.ktap mm-tests/results.ktap || return 1
	cp "$scratch/out/junit.xml" "$scratch/out/kcidb.json" "$dir/" &&
	mkdir -p "$dir/mutate" && printf '01-killed\tkilled\t3\tfake_suite: anon_vma rule\t\t\n' \
		> "$dir/mutate/results.tsv" &&
	BUILD=$dir MUTANTS=$fixtures/mutants expect_exit 0 "$here/tools/judge/mutation-report" || return 1
	local bundle=$build/npm/node_modules/mutation-testing-elements/dist/mutation-test-elements.js
	if [ ! -f "$bundle" ]; then
		timeout 300 npm install --silent --prefix "$build/npm" mutation-testing-elements@3.9.0 \
			> /dev/null 2>&1 || { skip "npm could not install mutation-testing-elements"; return; }
	fi
	BUILD=$dir MTE_BUNDLE=$bundle expect_exit 0 "$here/tools/judge/report" || return 1
	local page=$dir/report/index.html
	timeout 120 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=5000 \
		--dump-dom "file://$page" > "$scratch/dom" 2> /dev/null ||
		{ fail "chromium could not load the report"; return; }
	expect_in 'mm-tests.prog' "$scratch/dom" &&
	expect_in 'fork() went on after a failure in copy_process' "$scratch/dom" &&
	expect_in '<td>01-killed</td><td>Killed</td>' "$scratch/dom" &&
	expect_in '<mutation-test-report-app' "$scratch/dom" || return 1
	# What the viewer drew, from inside its shadow DOM (which --dump-dom
	# leaves out): a copy of the page with a probe that writes the
	# rendered text into the page, at its front page and at the file's.
	sed 's|</body>|<script>setTimeout(function () {\
		function text(n) { var s = n.shadowRoot ? text(n.shadowRoot) : "";\
			for (var c of n.childNodes) s += c.nodeType === 3 ? c.data + " " : text(c);\
			return s; }\
		var app = document.querySelector("mutation-test-report-app"), pre = document.createElement("pre");\
		pre.id = "viewer"; pre.textContent = app \&\& app.shadowRoot ? text(app.shadowRoot).replace(/\\s+/g, " ") : "none";\
		document.body.appendChild(pre); }, 3000);</script></body>|' "$page" > "$dir/report/probe.html" &&
	timeout 120 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=8000 \
		--dump-dom "file://$dir/report/probe.html" 2> /dev/null |
		sed -n 's|.*<pre id="viewer">\(.*\)</pre>.*|\1|p' > "$scratch/viewer" &&
	timeout 120 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=8000 \
		--dump-dom "file://$dir/report/probe.html#mutant/memory.c" 2> /dev/null |
		sed -n 's|.*<pre id="viewer">\(.*\)</pre>.*|\1|p' > "$scratch/viewer-file" ||
		{ fail "chromium could not load the probed report"; return; }
	expect_in 'Mutation Score Killed Survived' "$scratch/viewer" &&
	expect_in 'All files 100.00 100.00 1 0 ' "$scratch/viewer" &&
	expect_in 'Killed ( 1 )' "$scratch/viewer-file" || return 1
	mkdir -p "$(dirname "$png")" && rm -f "$png"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--window-size=1280,1600 --virtual-time-budget=5000 --screenshot="$png" \
		"file://$page" > /dev/null 2>&1
	[ "$(stat -c %s "$png" 2>/dev/null || echo 0)" -gt 20000 ] ||
		fail "no screenshot, or a blank one: $png"
}
