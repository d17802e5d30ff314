# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tests/lib.sh: what holds for every tool: each is in the index
# tools/README, has --help and refuses a bad argument in one line; every
# bash tool sources tools/lib/forklab.sh, and takes what differs between
# the targets from its table only.
# Sourced by tests/run (t, tk, expect_exit, ... are its).

# The tools the index lists (a line: ROLE/NAME, two blanks or more, what
# it does), one per line.
indexed_tools() {
	sed -n 's|^\([a-z]*/[^ ]*\)  .*|\1|p' "$here/tools/README"
}

# An index that lags behind tools/: a tool missing from it, or a line for
# a tool that is gone (renamed), fails here.
t tools_index_lists_every_tool
tools_index_lists_every_tool() {
	(cd "$here/tools" && find . -name __pycache__ -prune -o -mindepth 2 \( -type f -o -type l \) -print |
		sed 's|^\./||' | sort) > "$scratch/tools"
	indexed_tools | sort > "$scratch/indexed"
	diff "$scratch/tools" "$scratch/indexed" > "$scratch/diff" ||
		fail "tools/README against tools/ (< not listed, > no such tool): $(tr '\n' ' ' < "$scratch/diff")"
}

# Every environment variable a tool reads is in the table's [env], with
# what it is for, and every one there is read somewhere; tests/run has
# unset all of the user's choice and the stand-ins (a user's KERNEL_SRC
# once chose what the tools' tests tested). A tool reads NAME where it
# writes ${NAME:-...}, ${NAME-...}, ${NAME} or os.environ.get('NAME'). A
# new variable read by a tool, a channel from one tool to another through
# the environment (UML_GCOV was one), or a stale entry fails here.
t tools_read_only_the_listed_variables
tools_read_only_the_listed_variables() {
	local name listed missing='' stale='' left=''
	listed=" $(python_tool table env --names | tr '\n' ' ') "
	for name in $( { grep -rhoE '\$\{[A-Z][A-Z0-9_]*(:?[-+=?]|\}|\[)' "$here/tools"
		grep -rhoE "os\.environ(\.get)?[[(]'[A-Z][A-Z0-9_]*'" "$here/tools"; } |
		grep -oE '[A-Z][A-Z0-9_]+' | sort -u); do
		case " BASH_SOURCE BASH_REMATCH $listed" in
		*" $name "*) ;;
		*) missing+=" $name" ;;
		esac
	done
	[ -z "$missing" ] || { fail "read by a tool, not in configs/forklab.toml's [env]:$missing"; return; }
	for name in $listed; do
		grep -rqE -- "\\\$(\\{${name}[-:+=?}[]|\\(${name}\\))|environ(\\.get)?[[(]'$name'" \
			"$here/tools" "$here/Makefile" || stale+=" $name"
	done
	[ -z "$stale" ] || { fail "in [env], read by no tool:$stale"; return; }
	for name in $(python_tool table env --names --kind choice --kind stand-in); do
		! printenv "$name" > /dev/null || left+=" $name"
	done
	[ -z "$left" ] || fail "tests/run left set:$left"
}

# The library fixes the locale: a tool globs and sorts names in one order
# whatever the user's (mutants/ shards by its glob's order). en_US.UTF-8,
# built here with localedef, puts 100-* before 10-*; through the library,
# under LC_ALL, LANG or LC_COLLATE, the order is C's.
t tools_order_names_alike_in_every_locale
tools_order_names_alike_in_every_locale() {
	local locales=$scratch/locales names=$scratch/names want='09-d 10-a 100-b 11-c' got var

	command -v localedef > /dev/null && [ -d /usr/share/i18n/locales ] ||
		{ skip "no localedef or locale sources (Debian's locales)"; return; }
	rm -rf "$locales" "$names" && mkdir -p "$locales" "$names" &&
	touch "$names/09-d" "$names/10-a" "$names/100-b" "$names/11-c" || return 1
	localedef -i en_US -f UTF-8 "$locales/en_US.UTF-8" > /dev/null 2>&1 ||
		{ skip "localedef cannot build en_US.UTF-8 here"; return; }
	# Without the library, that locale's order differs (else this test
	# proves nothing).
	got=$(cd "$names" && env -u LC_ALL LOCPATH="$locales" LANG=en_US.UTF-8 bash -c 'echo *')
	[ "$got" = '09-d 100-b 10-a 11-c' ] || { fail "en_US.UTF-8 did not reorder: $got"; return; }
	for var in LC_ALL LANG LC_COLLATE; do
		got=$(cd "$names" && env -u LC_ALL LOCPATH="$locales" "$var=en_US.UTF-8" \
			bash -c '. "$1/tools/lib/forklab.sh"; echo *; printf "%s\n" * | sort | paste -sd " "' \
			_ "$here")
		[ "$got" = "$want"$'\n'"$want" ] || { fail "$var=en_US.UTF-8: glob and sort gave $got"; return; }
	done
}

# Every executable tool the index lists answers --help with its usage.
t tools_have_help
tools_have_help() {
	local tool
	for tool in $(indexed_tools); do
		case "$tool" in
		# sources, data: not tools one runs
		*.c|*.h|*.sh|*.py|*/exceptions|*/schemas/*) continue ;;
		esac
		[ -x "$here/tools/$tool" ] || { fail "$tool is not executable"; return; }
		expect_exit 0 "$here/tools/$tool" --help &&
		expect_in 'Usage\|usage' "$scratch/stdout" || return 1
	done
}

t tools_reject_bad_arguments
tools_reject_bad_arguments() {
	local tool
	for tool in setup/deps setup/prepare-tree judge/coverage judge/results \
		bench/build-times run/mutants judge/console-scan run/stress run/repeat \
		judge/rows judge/compare lib/target; do
		expect_exit 2 "$here/tools/$tool" --no-such-flag &&
		one_line_stderr || return 1
	done
}

# A tool with a prologue, a die() or an argument parser of its own, which
# drifts from the others' (a second exit status for the same error):
# every tool is a bash script that sources the library; a Python tool is
# a module of it (tools/lib/forklab/) that the script runs, and takes its
# die() and ArgumentParser from forklab/__init__.py.
t tools_source_the_library
tools_source_the_library() {
	local tool f
	(cd "$here/tools/lib/forklab" && grep -nE '^def die\(|^class .*\(argparse\.ArgumentParser\)|argparse\.ArgumentParser\(' -- *.py) |
		grep -v '^__init__\.py:' > "$scratch/own" || true
	[ ! -s "$scratch/own" ] ||
		{ fail "a module with a die() or parser of its own: $(head -n 1 "$scratch/own")"; return; }
	for tool in $(indexed_tools); do
		f=$here/tools/$tool
		case $tool in
		lib/*|*.c|*.h|*.sh|*/exceptions|*/schemas/*|guest/qemu-run) continue ;;
		esac
		[ "$(head -n 1 "$f")" = '#!/usr/bin/env bash' ] ||
			{ fail "$tool is not a bash script that runs the library's module"; return; }
		grep -q '^\. "$(dirname "$0")/\(\.\./lib/\)\{0,1\}forklab\.sh"$' "$f" ||
			{ fail "$tool does not source tools/lib/forklab.sh"; return; }
		! grep -qE '^(die|bad_usage)\(\)|^(here|build|prog)=' "$f" ||
			{ fail "$tool defines its own: $(grep -E '^(die|bad_usage)\(\)|^(here|build|prog)=' "$f" | head -n 1)"; return; }
	done
}

# The target decided outside the table: a tool that spells a target's
# build or results path, its kernel image, how it boots (its root, console,
# firmware, swap device), its emulator or arguments, its
# kconfig, expectations or gate spec, switches on the target or compares
# it, or names one the table does not know (uml). Comments are not code;
# the table (tools/lib/) is the one place allowed. The Makefile asks
# tools/lib/target, so it holds no such value either. (The Python tools
# name targets only as labels of their data: bench/report's titles.)
t target_table_is_the_only_home
target_table_is_the_only_home() {
	local values='hostfs=|ttyS0|qboot|virtio-9p|ubd0=|bzImage|build/uml|uml-sanitize|build/sanitize|x86_64/kernel|\$build"?/(uml|x86_64)|-accel|hugepagesz=|qemu-system-x86_64|configs/(um|x86_64|sanitize)\.config|configs/expected/(um|x86_64)|coverage/(um|x86_64)\.spec|case .*ARCH|case +"?\$\{?(target_)?arch|= *"?(um|x86_64)"? *\]|filter x86_64|(^|[[:space:]\x27"|(])uml([[:space:]\x27"|)]|$)'
	# (grep's exit 1 is "nothing found", the passing case.)
	{ (cd "$here" && grep -rnE "$values" tools Makefile) |
		grep -v '^tools/lib/' |
		grep -vE '^[^:]*:[0-9]+:[[:space:]]*#|^[^:]*\.[ch]:[0-9]+:[[:space:]]*(\*|/\*)' > "$scratch/found"; } || true
	[ ! -s "$scratch/found" ] ||
		fail "target values outside tools/lib: $(head -n 5 "$scratch/found" | tr '\n' ' ')"
}

# The table's answers: each target's own build and results directory, the
# sanitizer build apart from the plain one, one error line for a target
# that does not exist; and make takes RES from it (make check SANITIZE=1
# prints the sanitizer run's KUnit log, not the plain one's).
t target_table_answers_for_each_target
target_table_answers_for_each_target() {
	local t obj res seen=
	for t in "um 0" "um 1" "x86_64 0"; do
		expect_exit 0 "$here/tools/lib/target" "${t% *}" "${t#* }" || return
		obj=$(sed -n 's/^obj=//p' "$scratch/stdout")
		res=$(sed -n 's/^res=//p' "$scratch/stdout")
		[ -n "$obj" ] && [ -n "$res" ] || { fail "$t: no obj or res"; return; }
		for f in image kconfig expected runner; do
			grep -q "^$f=/" "$scratch/stdout" || { fail "$t: no $f"; return; }
		done
		# The files the table names exist (the gate's where there is one).
		for f in kconfig expected gate runner; do
			f=$(sed -n "s/^$f=//p" "$scratch/stdout")
			[ -z "$f" ] || [ -e "$f" ] || { fail "$t: no such file $f"; return; }
		done
		case " $seen " in
		*" $obj "*|*" $res "*) fail "$t shares a directory: $obj $res"; return ;;
		esac
		seen+=" $obj $res"
	done
	expect_exit 1 "$here/tools/lib/target" x86_64 1 && one_line_stderr &&
	expect_exit 1 "$here/tools/lib/target" sparc && one_line_stderr &&
	expect_in 'ARCH=sparc' "$scratch/stderr" &&
	res=$(BUILD=$build "$here/tools/lib/target" um 1 res) &&
	expect_exit 0 make -s -n -C "$here" test SANITIZE=1 &&
	expect_in "$res/kunit-run.log" "$scratch/stdout" &&
	expect_exit 2 make -s -n -C "$here" test ARCH=sparc &&
	one_line_stderr
}

# configs/forklab.toml is the one place a tree or a policy is added
# (docs/contributing.md's recipe): in a copy of the tools and configs/
# with a third tree (6.6) and a fourth policy (never) added to the table,
# and nothing else changed, the tools know both: a target's paths and
# expectations on KERNEL=6.6, make results' suites, make policies' list,
# the user-space runner's FORK_COPY=, a patch's Trees: line. A tool that
# names the trees or the policies itself fails here.
t a_tree_and_a_policy_are_table_entries
a_tree_and_a_policy_are_table_entries() {
	local copy=$scratch/copy b=$scratch/b

	mkdir -p "$copy" && cp -r "$here/tools" "$here/configs" "$copy/" || return 1
	sed -i 's/^names = \["lazy", "always", "skip-shared"\]$/names = ["lazy", "always", "skip-shared", "never"]/' \
		"$copy/configs/forklab.toml" &&
	grep -q '"never"' "$copy/configs/forklab.toml" || { fail "no policy line to add to"; return; }
	printf '%s\n' '[[trees]]' 'name = "6.6"' 'package = "linux-source-6.6"' \
		'patches = "patches/6.6"' 'build = "6.6"' 'kconfig = ""' \
		'coverage = "coverage/6.6"' \
		>> "$copy/configs/forklab.toml"
	KERNEL=6.6 BUILD=$b expect_exit 0 "$copy/tools/lib/target" x86_64 0 &&
	expect_in "^res=$b/6.6/x86_64$" "$scratch/stdout" &&
	expect_in "^expected=$copy/configs/expected$" "$scratch/stdout" &&
	expect_in "^gate=$copy/coverage/6.6/x86_64.spec$" "$scratch/stdout" || return 1
	expect_exit 0 "$copy/tools/run/policies" --list &&
	expect_in '^never$' "$scratch/stdout" &&
	BUILD=$b expect_exit 0 "$copy/tools/judge/results" --help &&
	expect_in '^  kunit-6.6-x86_64 ' "$scratch/stdout" &&
	expect_in '^  mm-tests-6.6-never ' "$scratch/stdout" || return 1
	# The policy is taken (the run then fails for want of a tree), 6.6's
	# name is a tree's in a patch's Trees: line.
	BUILD=$b KERNEL=6.6 FORK_COPY=never expect_exit 1 "$copy/tools/run/mm-tests" &&
	! grep -q 'FORK_COPY' "$scratch/stderr" &&
	printf 'Trees: 6.6 6.1\n' > "$scratch/p.patch" &&
	PYTHONPATH=$copy/tools/lib expect_exit 0 python3 -m forklab.table header \
		"$scratch/p.patch" Trees &&
	expect_in '^6.6 6.1$' "$scratch/stdout"
}

# Progress on a terminal is one line that each step rewrites (carriage
# return, erase line), ended by one newline; in a log (CI) it is a plain
# line a step. A run that printed a line a step on a terminal, or escape
# codes into a log, fails here.
t progress_updates_one_line_on_a_terminal
progress_updates_one_line_on_a_terminal() {
	local steps='. "$1/tools/lib/forklab.sh"; for i in 1 2 3; do progress "$i of 3 done"; done; progress_done'

	bash -c "$steps" x/run/demo "$here" 2> "$scratch/log" &&
	[ "$(cat "$scratch/log")" = "$(printf 'run/demo: %s of 3 done\n' 1 2 3)" ] ||
		{ fail "not a plain line a step in a log: $(od -c "$scratch/log" | head -n 3)"; return; }
	script -qec "bash -c '$steps' x/run/demo '$here'" /dev/null < /dev/null > "$scratch/tty" ||
		{ fail "script(1) could not run the steps on a terminal"; return; }
	[ "$(tr -d '\r' < "$scratch/tty" | wc -l)" = 1 ] &&
	grep -q $'\r\033\\[Krun/demo: 3 of 3 done' "$scratch/tty" ||
		fail "not one updating line on a terminal: $(od -c "$scratch/tty" | head -n 3)"
}

# A run's results are shown again (reuse_key, reuse_ok: run/kunit,
# run/mm-tests) only for the same inputs: the same lines, the same
# contents of each file. A key of a file's name alone shows the last
# kernel's results for one rebuilt at the same path; RERUN=1 runs again
# whatever the key.
t reuse_key_follows_what_a_run_read
reuse_key_follows_what_a_run_read() {
	local key
	echo one > "$scratch/reuse-image"
	key=$(echo "run args" | reuse_key "$scratch/reuse-image")
	reuse_record "$scratch/reuse-key" "$key"
	reuse_ok "$scratch/reuse-key" "$(echo "run args" | reuse_key "$scratch/reuse-image")" ||
		fail "the same run is not reused"
	! reuse_ok "$scratch/reuse-key" "$(echo "other args" | reuse_key "$scratch/reuse-image")" ||
		fail "a run with other arguments reuses the last one's results"
	echo two > "$scratch/reuse-image"
	! reuse_ok "$scratch/reuse-key" "$(echo "run args" | reuse_key "$scratch/reuse-image")" ||
		fail "an image rebuilt at the same path reuses the last one's results"
	! RERUN=1 reuse_ok "$scratch/reuse-key" "$key" || fail "RERUN=1 reuses the last run's results"
}
