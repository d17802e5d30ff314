# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tools/lib/forklab.sh: what every bash tool of forklab shares, sourced
# first (as selftests' scripts source kselftest/ktap_helpers.sh):
#
#   # shellcheck source=tools/lib/forklab.sh
#   . "$(dirname "$0")/../lib/forklab.sh"
#
# It sets
#   prog    the tool's name below tools/ (run/kunit): its messages start so
#   here    the forklab checkout
#   build   $BUILD, default $here/build: everything a tool writes goes there
#   tree    the prepared kernel tree, $build/src/linux
#   kunit_py  the tree's kunit.py
# and defines die, bad_usage, python_tool and target, the one table of
# what differs between the targets forklab builds. No tool decides by ARCH itself: it
# asks target, and tests/lib.sh checks that none does.

prog=${0%/*}
prog=${prog##*/}/${0##*/}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-$here/build}

# die MESSAGE...: one error line; exit status $die_status (default 1).
die() {
	echo "$prog: error: $*" >&2
	exit "${die_status:-1}"
}

# The kernel tree, KERNEL=: 6.12 (the default) or 6.1, Debian 12's own.
# Each comes from Debian's linux-source package of that version and has a
# patch series of its own; 6.1 builds everything (tree, objects, results)
# under build/6.1/, so that the two trees stay built side by side.
#   kernel_line     the stable line, as KERNEL= names it: 6.12, 6.1
#   kernel_package  the Debian package of its source
#   kernel_tarball  the tarball that package installs
#   kernel_patches  its series' directory (a file 'series' and the patches)
# forklab_trees: every tree, as KERNEL= names them.
forklab_trees="6.12 6.1"
kernel_line=${KERNEL:-6.12}
case "$kernel_line" in
6.12) kernel_patches=$here/patches ;;
6.1) kernel_patches=$here/patches/6.1; build=$build/6.1 ;;
*) die "KERNEL=$kernel_line: forklab builds 6.12 or 6.1" ;;
esac
kernel_package=linux-source-$kernel_line
kernel_tarball=/usr/src/$kernel_package.tar.xz
tree=$build/src/linux
kunit_py=$tree/tools/testing/kunit/kunit.py

# python_tool MODULE ARGS...: run the Python tool of
# tools/lib/forklab/MODULE.py, the package found on PYTHONPATH as
# python3 -m takes it (no tool puts it on sys.path itself).
python_tool() {
	local module=$1

	shift
	PYTHONPATH="$here/tools/lib${PYTHONPATH:+:$PYTHONPATH}" python3 -m "forklab.$module" "$@"
}

# bad_usage MESSAGE...: a bad argument: one line, exit status 2.
bad_usage() {
	echo "$prog: $* (see --help)" >&2
	exit 2
}

# SHARD=K/N (K from 0), as cargo-mutants' --shard: a tool that runs a
# list (mutants, programs, policies) runs the items of the sorted list
# whose index is K modulo N, so that the N shards, given the same
# arguments, are disjoint and together the whole run; each writes its
# results where the whole run would, with shard_suffix (-K-of-N) added
# to the directory's name, and tools/judge/merge joins them. shard_parse
# sets shard_k, shard_n and shard_suffix (all empty without SHARD).
shard_parse() {
	shard_k='' shard_n='' shard_suffix=''
	[ -n "${SHARD:-}" ] || return 0
	[[ "$SHARD" =~ ^[0-9]+/[1-9][0-9]*$ ]] &&
		[ "$((10#${SHARD%/*}))" -lt "$((10#${SHARD#*/}))" ] ||
		bad_usage "SHARD=$SHARD: want K/N with 0 <= K < N"
	shard_k=$((10#${SHARD%/*})) shard_n=$((10#${SHARD#*/}))
	shard_suffix=-$shard_k-of-$shard_n
}

# shard_mine I: is item I (from 0) of the sorted list this shard's?
shard_mine() {
	[ -z "$shard_n" ] || [ $(($1 % shard_n)) = "$shard_k" ]
}

# progress TEXT: where a run that takes minutes is (mutant i of n, boot
# i of n, what is left), on stderr: on a terminal one line that the next
# call rewrites, elsewhere (a CI log) a line each. progress_clear before
# a line of other output clears it; progress_done ends it (keeping its
# last text) once the run is through.
progress() {
	if [ -t 2 ]; then
		printf '\r\033[K%s: %s' "$prog" "$*" >&2
	else
		echo "$prog: $*" >&2
	fi
}

progress_clear() {
	[ ! -t 2 ] || printf '\r\033[K' >&2
}

progress_done() {
	[ ! -t 2 ] || echo >&2
}

# The targets, as make names them: ARCH=um (UML, the default), ARCH=um
# SANITIZE=1 (the same suites on a kernel with configs/sanitize.config:
# KASAN, lockdep, kmemleak, UBSAN; a build of its own) and ARCH=x86_64
# (an x86_64 kernel under QEMU, for what UML lacks: hugetlb, THP, uffd-wp,
# PAT). Each line: ARCH, SANITIZE, then the fields target() sets.
targets=("um 0" "um 1" "x86_64 0")

# target ARCH [SANITIZE]: set the target_* variables of that target (every
# path below $build), or die naming what was wrong:
#
#   target_arch        the kernel's ARCH (um, x86_64)
#   target_name        the target's name in a patch's "Targets:" line
#                      (mutants/, museum/): um, x86_64, sanitize
#   target_tree        the prepared kernel tree (KERNEL= chooses which)
#   target_suffix      what results adds to a suite's name: -sanitize, -x86_64
#   target_obj         the kernel's build directory (O=)
#   target_image       the kernel image a guest boots
#   target_res         the target's results: kunit.ktap, kunit.json,
#                      mm-tests/, policies/, mutate/, coverage/, gcov/
#   target_kconfig     the kunitconfig (configs/ARCH.config)
#   target_kconfig_add kconfig lines added to it, one per line
#                      (configs/6.1.config on KERNEL=6.1)
#   target_expected    the rows each suite must report (configs/expected/ARCH;
#                      configs/expected/6.1/ARCH on KERNEL=6.1)
#   target_gate        the coverage gate's spec; empty: no coverage kept
#                      (a UML guest's counts go to a scratch directory)
#   target_gcov        how gcov data leaves a guest: exit (UML writes its
#                      .gcda files when it exits, under GCOV_PREFIX or
#                      beside the objects) or copy (init copies them out of
#                      debugfs into a directory the runner names)
#   target_runner      the tool that boots one program in the guest
#   target_mem         the guest's memory unless a run asks for more
#   target_jobs        guests booted at a time by the user-space suite: a
#                      UML guest also waits on its host threads (one more
#                      than CPUs), a TCG guest keeps its CPU busy
#   target_emulator    the program that runs the guest (its version is
#                      part of what a result depends on); empty for UML
#   target_emulator_args  its arguments: TCG, the same on every host (a
#                      /dev/kvm that opens may still not run a guest)
#   target_kernel_args the command line every boot adds: the huge pages
#                      the suites use
#   target_gigantic_args  what a guest of 3 GiB or more adds: one 1 GiB page
#   target_kunit_args  kunit.py's arguments for the target (array)
#   target_cold_ccache a build from nothing hits ccache (1) or only misses
#                      (0: every UML object embeds its .gcda path, and a
#                      miss costs a second preprocessing)
#   target_make        how to ask make for the target, for messages
target() {
	local arch=$1 sanitize=${2:-0}

	case "$sanitize" in
	0|1) ;;
	*) die "SANITIZE=$sanitize: want 0 or 1" ;;
	esac
	target_arch=$arch
	target_name=$arch
	target_tree=$tree
	target_kconfig=$here/configs/$arch.config
	target_kconfig_add=
	target_expected=$here/configs/expected/$arch
	target_gate=$here/coverage/$arch.spec
	case "$arch" in
	um)
		target_suffix=
		target_obj=$build/uml
		target_image=$target_obj/linux
		target_res=$build
		target_gcov='exit'
		target_runner=$here/tools/guest/uml-run
		target_mem=512M
		target_jobs=$(($(nproc) + 1))
		target_emulator=
		target_emulator_args=()
		target_kernel_args=
		target_gigantic_args=
		target_kunit_args=()
		target_cold_ccache=0
		target_make="make test" ;;
	x86_64)
		target_suffix=-x86_64
		target_obj=$build/x86_64/kernel
		target_image=$target_obj/arch/x86/boot/bzImage
		target_res=$build/x86_64
		target_gcov=copy
		target_runner=$here/tools/guest/qemu-run
		target_mem=1024M
		target_jobs=$(nproc)
		target_emulator=qemu-system-x86_64
		target_emulator_args=(-accel tcg)
		target_kernel_args="hugepagesz=2M hugepages=16"
		target_gigantic_args="hugepagesz=1G hugepages=1"
		target_kunit_args=(--arch=x86_64
			"--qemu_args=${target_emulator_args[*]}")
		target_cold_ccache=1
		target_make="make test ARCH=x86_64" ;;
	*) die "ARCH=$arch: forklab builds um or x86_64" ;;
	esac
	# A tree other than 6.12: its config lines (configs/KERNEL.config),
	# expected rows (configs/expected/KERNEL/ARCH) and gate
	# (coverage/KERNEL/ARCH.spec).
	if [ "$kernel_line" != 6.12 ]; then
		target_kconfig_add=$(grep -E '^(CONFIG_|# CONFIG_.* is not set)' \
			"$here/configs/$kernel_line.config")
		target_expected=$here/configs/expected/$kernel_line/$arch
		target_gate=$here/coverage/$kernel_line/$arch.spec
	fi
	if [ "$sanitize" = 1 ]; then
		[ "$arch" = um ] || die "SANITIZE=1 is for ARCH=um only"
		target_name=sanitize
		target_suffix=-sanitize
		target_obj=$build/uml-sanitize
		target_image=$target_obj/linux
		target_res=$build/sanitize
		target_kconfig_add+=${target_kconfig_add:+$'\n'}$(grep -E \
			'^(CONFIG_|# CONFIG_.* is not set)' "$here/configs/sanitize.config")
		target_gate=
		target_make="make check SANITIZE=1"
	fi
}

# VERSION.PATCHLEVEL.SUBLEVEL from the top Makefile. (Not 'make
# kernelversion': under a parent make, that prints "Entering directory".)
kernel_version() {
	awk '$2 == "=" && $1 == "VERSION" { v = $3 }
	     $2 == "=" && $1 == "PATCHLEVEL" { p = $3 }
	     $2 == "=" && $1 == "SUBLEVEL" { s = $3 }
	     END { print v "." p "." s }' "$1/Makefile"
}

# for_this_target PATCH: does PATCH (mutants/, museum/) run on the target
# last set? Its one "Targets:" line names it (target_name), names
# separated by spaces; none means um. A second Targets: line, or a name
# that is no target's, is an error: the patch would run nowhere.
for_this_target() {
	local listed name names

	names=" $("$here/tools/lib/target" --list | cut -d' ' -f1 | tr '\n' ' ')"
	[ "$(grep -c '^Targets:' "$1")" -le 1 ] ||
		die "${1##*/}: more than one 'Targets:' line"
	listed=$(sed -n 's/^Targets:[[:space:]]*//p' "$1" | tr -d '\r')
	for name in ${listed:-um}; do
		[[ "$names" = *" $name "* ]] ||
			die "${1##*/}: 'Targets: $listed': no target '$name' (want:$names)"
	done
	[[ " ${listed:-um} " = *" $target_name "* ]]
}

# for_this_tree PATCH: does PATCH (mutants/, museum/) apply to the tree
# KERNEL= names? Its one "Trees:" line names the trees (6.12, 6.1)
# it was written for and checked against; none means 6.12. A name that
# is no tree's, or a second Trees: line, is an error.
for_this_tree() {
	local listed name

	[ "$(grep -c '^Trees:' "$1")" -le 1 ] ||
		die "${1##*/}: more than one 'Trees:' line"
	listed=$(sed -n 's/^Trees:[[:space:]]*//p' "$1" | tr -d '\r')
	for name in ${listed:-6.12}; do
		case "$name" in
		6.12|6.1) ;;
		*) die "${1##*/}: 'Trees: $listed': no tree '$name' (want: 6.12 6.1)" ;;
		esac
	done
	[[ " ${listed:-6.12} " = *" $kernel_line "* ]]
}

# target_of_runner NAME: the target whose runner is NAME (uml-run,
# qemu-run): the guest tools are one script under two names.
target_of_runner() {
	local t

	for t in "${targets[@]}"; do
		target "${t% *}" "${t#* }"
		[ "${target_runner##*/}" != "$1" ] || return 0
	done
	die "no target boots with $1"
}

# reuse_key [FILE...] < LINES: what a run's verdict depends on, as one
# hash: LINES (how it boots and what it runs, one item per line), the
# contents of each FILE (the image, the programs, the tools that judge),
# and the target's emulator. A tool that passed records the key beside its
# results (reuse_record); a run with the same key shows those results
# instead of booting again (reuse_ok), unless RERUN=1.
reuse_key() {
	{
		cat
		cat -- "$@" | sha256sum
		[ -z "${target_emulator:-}" ] || "$target_emulator" --version
	} | sha256sum | cut -d' ' -f1
}

# reuse_ok KEYFILE KEY: KEY is that of the last passing run.
reuse_ok() {
	[ "${RERUN:-0}" != 1 ] && [ "$(cat "$1" 2>/dev/null)" = "$2" ]
}

# reuse_record KEYFILE KEY
reuse_record() {
	echo "$2" > "$1"
}

# A museum exhibit's reproducer (docs/museum.md), as tools/run/mutants
# boots it on the exhibit's kernel and tools/run/museum on the unmodified
# one. RUN_GUEST replaces the target's runner in the tools' tests.
#
# reproducer PATCH: its "Reproducer:" line as words: the program's path
# under build/mm-tests, then its arguments; nothing if it has none.
reproducer() {
	sed -n 's/^Reproducer: *//p' "$1" | head -n 1
}

# reproducer_program WORD: the built program a "Reproducer:" line names:
# museum/NAME is museum/NAME.c's, mm-tests/NAME a program of mm-tests/
# (the tree's selftests among them); both under build/mm-tests.
reproducer_program() {
	case "$1" in
	mm-tests/*) echo "$build/mm-tests/${1#mm-tests/}" ;;
	*) echo "$build/mm-tests/$1" ;;
	esac
}

# run_reproducer PATCH IMAGE LOG: boot PATCH's reproducer on IMAGE, its
# output in LOG; the status is the program's (124: the timeout ended it,
# 125: the kernel complained or died).
run_reproducer() {
	local words cmdline

	read -r -a words <<< "$(reproducer "$1")"
	cmdline=$(sed -n 's/^Reproducer-cmdline: *//p' "$1" | head -n 1)
	"${RUN_GUEST:-$target_runner}" --kernel "$2" --cmdline "$cmdline" \
		"$(reproducer_program "${words[0]}")" "${words[@]:1}" > "$3" 2>&1
}

# showed_bug LOG STATUS: the reproducer's run showed the bug: a failing
# KTAP line, a kernel complaint or panic, or a hang the timeout ended. A
# skip (4), a program that could not run (126, 127) or a guest that did
# not boot shows nothing.
showed_bug() {
	case "$2" in
	0|4|126|127) return 1 ;;
	124) return 0 ;;
	esac
	grep -q -E '^not ok|WARNING:|BUG:|Oops|Bad rss-counter|Kernel panic|Kernel mode fault' "$1"
}

# clean_run LOG STATUS: the reproducer passed, and tested something: one
# 'ok' line at least that is not a skip. One reader: 'grep | grep -q'
# under pipefail fails when grep -q quits before a long log (cow's 761
# rows) is written into the pipe, and the writer dies of SIGPIPE.
clean_run() {
	[ "$2" = 0 ] && awk '/^ok / && !/# SKIP/ { found = 1; exit }
		END { exit !found }' "$1"
}

# shown LOG STATUS: what a reproducer's run showed, in one line: its first
# failing KTAP line (with the diagnostic line just before it, which says
# what the program saw), or the first kernel complaint, else its last
# line; on a clean run, how many of its tests passed.
shown() {
	local line

	line=$(awk '/^# / { diag = substr($0, 3) }
		/^not ok/ { print $0 (diag != "" ? " (" diag ")" : ""); found = 1; exit }
		/^ok/ { diag = "" }
		END { exit !found }' "$1" ||
		grep -m 1 -E 'WARNING:|BUG:|Oops|Bad rss-counter|panic' "$1" ||
		grep -v '^$' "$1" | tail -n 1)
	case "$2" in
	0) echo "clean: $(grep -E '^ok ' "$1" | grep -cv '# SKIP') ok, $(grep -E '^ok ' "$1" | grep -c '# SKIP') skipped" ;;
	124) echo "hung: the timeout ended it" ;;
	*) echo "exit $2: $line" ;;
	esac | tr '\t' ' ' | cut -c 1-200
}
