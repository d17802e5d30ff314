# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tests/lint.sh: the tests of tools/lint/: a finding not in the exceptions
# fails, one in them does not, and an exception that matches nothing
# fails. On a few of forklab's own files, with exceptions files of the
# test's own.
# Sourced by tests/run (t, tk, expect_exit, ... are its).

# lint_with EXCEPTIONS PATH...: tools/lint/run on PATH... against the
# exceptions file EXCEPTIONS.
lint_with() {
	local exceptions=$1
	shift
	LINT_EXCEPTIONS=$exceptions "$here/tools/lint/run" "$@"
}

# A lint that drops findings, or takes the exceptions for more than they
# say: mm-tests/forklab.h uses volatile, which checkpatch flags; without
# the line that keeps it, the run fails and names file, line and type.
t lint_fails_an_unlisted_finding
lint_fails_an_unlisted_finding() {
	[ -x "$build/src/linux/scripts/checkpatch.pl" ] ||
		{ skip "no prepared tree yet ('make tree' prepares it)"; return; }
	grep -v ' VOLATILE ' "$here/tools/lint/exceptions" > "$scratch/exceptions" &&
	expect_exit 1 lint_with "$scratch/exceptions" mm-tests/forklab.h &&
	expect_in '^checkpatch mm-tests/forklab.h:[0-9]*: VOLATILE: ' "$scratch/stdout" &&
	expect_exit 0 lint_with "$here/tools/lint/exceptions" mm-tests/forklab.h
}

# An exceptions list that outgrows the code: a line for a finding the
# file does not have fails, named; a line without a reason is refused.
t lint_fails_a_stale_exception
lint_fails_a_stale_exception() {
	[ -x "$build/src/linux/scripts/checkpatch.pl" ] ||
		{ skip "no prepared tree yet ('make tree' prepares it)"; return; }
	{ cat "$here/tools/lint/exceptions"
	  echo "checkpatch mm-tests/forklab.h LONG_LINE a line it does not have"; } \
		> "$scratch/exceptions" &&
	expect_exit 1 lint_with "$scratch/exceptions" mm-tests/forklab.h &&
	expect_in "'checkpatch mm-tests/forklab.h LONG_LINE' matches nothing" "$scratch/stdout" &&
	echo "checkpatch mm-tests/forklab.h LONG_LINE" > "$scratch/no-reason" &&
	expect_exit 1 lint_with "$scratch/no-reason" mm-tests/forklab.h &&
	one_line_stderr && expect_in 'want LINTER PATH CODE REASON' "$scratch/stderr"
}
