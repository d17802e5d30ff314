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
# forklab runs Debian's programs, which make deps installs into /usr/bin:
# that directory first, so that a shim earlier in PATH neither slows every
# tool nor changes what runs (pyenv's python3 shim took 0.58 s a start on
# 2026-12-05's machine, Debian's python3 0.05 s; every tool starts one).
case ":$PATH:" in
:/usr/bin:*) ;;
*) export PATH=/usr/bin:$PATH ;;
esac
# One order of names on every host: the mutants' shards follow their
# glob's order, which is the locale's (en_US puts 100-* before 10-*), and
# sort's and ls's are too. Every category, so that the user's LC_ALL
# cannot override it; C.UTF-8 keeps UTF-8 text.
export LC_ALL=C.UTF-8

# die MESSAGE...: one error line; exit status $die_status (default 1).
die() {
	echo "$prog: error: $*" >&2
	exit "${die_status:-1}"
}

# python_tool MODULE ARGS...: run the Python tool of
# tools/lib/forklab/MODULE.py, the package found on PYTHONPATH as
# python3 -m takes it (no tool puts it on sys.path itself).
python_tool() {
	local module=$1

	shift
	PYTHONPATH="$here/tools/lib${PYTHONPATH:+:$PYTHONPATH}" python3 -m "forklab.$module" "$@"
}

# The table (configs/forklab.toml, tools/lib/forklab/table.py): the
# trees, targets, policies and patch header rules, as bash variables:
# forklab_trees, forklab_targets, forklab_policies (names, the default
# first), forklab_expectations (the expectations file), table_log[SUITE]
# and table_policy_log[SUITE] (a suite's log below a results folder, and
# below its policies' folder forklab_policies_dir/POLICY), table_npm[PACKAGE]
# (the version [npm] pins), forklab_quarantine (the quarantine file),
# forklab_binaries
# and table_tree_FIELD[TREE], table_target_FIELD[TARGET],
# table_binary_FIELD[BINARY] (flavours: NAME=PACKAGE words),
# table_header_RULE[FIELD] (the table's comments say what each is).
forklab_trees='' forklab_targets='' forklab_policies='' forklab_expectations=''
forklab_policies_dir=''
forklab_quarantine=''
forklab_binaries=''
declare -A table_log=() table_policy_log=() table_npm=() table_tree_package=() table_tree_patches=() table_tree_build=() \
	table_tree_kconfig=() table_tree_coverage=() table_target_arch=() \
	table_target_sanitize=() table_target_suffix=() table_target_obj=() \
	table_target_image=() table_target_res=() table_target_kconfig=() \
	table_target_kconfig_add=() table_target_gate=() table_target_gcov=() \
	table_target_runner=() table_target_mem=() table_target_jobs_extra=() \
	table_target_emulator=() table_target_emulator_args=() table_target_kvm=() \
	table_target_kernel_args=() table_target_gigantic_args=() \
	table_target_kunit_args=() table_target_cold_ccache=() table_target_make=() \
	table_target_guest=() table_target_launch=() table_target_root_args=() \
	table_target_host_root_args=() table_target_swap_dev=() table_target_swap_args=() \
	table_target_initrd_args=() table_target_unpatched=() table_binary_package=() table_binary_flavours=() \
	table_target_gdb_symbols=() table_target_gdb_stub_args=() table_target_gdb_kernel_args=() \
	table_target_gdb_commands=() \
	table_binary_target=() table_binary_modules=() table_binary_build=() table_binary_tree=() \
	table_header_values=() table_header_default=() table_header_once=()
table_decl=$(python_tool table shell) || exit 1
eval "$table_decl"
unset table_decl

# The kernel tree, KERNEL= (default: the table's first, 6.12): Debian's
# linux-source package of that line, with a patch series of its own. A
# tree other than the first builds everything (tree, objects, results)
# under build/KERNEL/ (its table entry's build), so that the trees stay
# built side by side.
#   kernel_line     the stable line, as KERNEL= names it: 6.12, 6.1
#   kernel_package  the Debian package of its source
#   kernel_tarball  the tarball that package installs
#   kernel_patches  its series' directory (a file 'series' and the patches)
#   kernel_binary   KERNEL= naming a binary kernel ([[binaries]]: a
#                   distribution's, not built here): its name; its tree
#                   is the line it is of (the programs' headers, the
#                   rows run.list keeps for it), and its target the one
#                   whose runner boots it (ARCH= its arch by default)
# The results of every tree and binary start below top_build.
top_build=$build
kernel_binary=
if [ -n "${KERNEL:-}" ] && [[ " $forklab_binaries " = *" $KERNEL "* ]]; then
	kernel_binary=$KERNEL
	kernel_line=${table_binary_tree[$KERNEL]}
	: "${ARCH:=${table_target_arch[${table_binary_target[$KERNEL]}]}}"
else
	kernel_line=${KERNEL:-${forklab_trees%% *}}
	[[ " $forklab_trees " = *" $kernel_line "* ]] ||
		die "KERNEL=$kernel_line: forklab builds ${forklab_trees// / or }${forklab_binaries:+ and boots ${forklab_binaries// / or }}"
fi
kernel_patches=$here/${table_tree_patches[$kernel_line]}
build=$build${table_tree_build[$kernel_line]:+/${table_tree_build[$kernel_line]}}
# SERIES=none: the tree as it is, without forklab's series and suites
# (Debian's source as Debian builds it, or a KERNEL_SRC of any version):
# forklab's config, the user-space suite and the museum's reproducers
# only, everything below $build/unpatched. kernel_series is none or ''.
kernel_series=${SERIES:-}
case "$kernel_series" in
'') ;;
none)
	[ -z "$kernel_binary" ] ||
		die "SERIES=none builds a tree; KERNEL=$kernel_binary is a binary kernel, not built here"
	build=$build/unpatched ;;
*) die "SERIES=$kernel_series: want SERIES=none (the tree without forklab's series) or no SERIES" ;;
esac
kernel_package=${table_tree_package[$kernel_line]}
kernel_tarball=/usr/src/$kernel_package.tar.xz
tree=$build/src/linux
kunit_py=$tree/tools/testing/kunit/kunit.py


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

# The targets, as make names them (the table's [[targets]]): ARCH=um (UML,
# the default), ARCH=um SANITIZE=1 (the same suites on a kernel with
# configs/sanitize.config: KASAN, lockdep, kmemleak, UBSAN; a build of
# its own) and ARCH=x86_64 (an x86_64 kernel under QEMU, for what UML
# lacks: hugetlb, THP, uffd-wp, PAT). Each: "ARCH SANITIZE".
targets=()
for t in $forklab_targets; do
	targets+=("${table_target_arch[$t]} ${table_target_sanitize[$t]}")
done
unset t

# target ARCH [SANITIZE]: set the target_* variables of that target on
# the tree KERNEL= names (every path below $build), or die naming what
# was wrong. The fields are the table's (configs/forklab.toml says what
# each is), made paths:
#
#   target_name        the target's name in a patch's "Targets:" line
#   target_tree        the prepared kernel tree
#   target_obj, target_image, target_res  below $build
#   target_kconfig     the kunitconfig
#   target_kconfig_add kconfig lines added to it, one per line: the
#                      tree's and the target's
#   target_expected    the rows each suite must report (one file for
#                      every target and tree)
#   target_gate        the coverage gate's spec; empty: no coverage kept
#                      (a UML guest's counts go to a scratch directory)
#   target_runner      the tool that boots one program in the guest
#   target_jobs        guests booted at a time by the user-space suite
#   target_emulator_args, target_kunit_args, target_launch,
#   target_root_args, target_host_root_args, target_swap_args,
#   target_initrd_args, target_gdb_stub_args, target_gdb_commands  arrays
#   target_initrd      the initramfs a binary kernel boots with (KERNEL=
#                      naming one: then target_image, target_res and
#                      target_suffix are the binary's, and no gate)
#   target_kunit       1 when the kernel has forklab's KUnit suites (not a
#                      binary kernel's, nor a tree's without the series)
#   target_suite       what the names of its suites add to kunit and
#                      mm-tests: tree_suffix, then target_suffix
#                      (-6.1-x86_64), or the binary's (-debian)
#   target_accel       '': accel_choose fills emulator_args' {accel}
# and target_arch, target_suffix, target_gcov, target_mem, target_kvm,
# target_emulator, target_kernel_args, target_gigantic_args, target_guest,
# target_swap_dev, target_cold_ccache, target_gdb_symbols,
# target_gdb_kernel_args and target_make as the table has them.
target() {
	local arch=$1 sanitize=${2:-0} t name='' file

	case "$sanitize" in
	0|1) ;;
	*) die "SANITIZE=$sanitize: want 0 or 1" ;;
	esac
	for t in $forklab_targets; do
		[ "${table_target_arch[$t]}" != "$arch" ] ||
			[ "${table_target_sanitize[$t]}" != "$sanitize" ] || name=$t
	done
	if [ -z "$name" ]; then
		for t in $forklab_targets; do
			[ "${table_target_arch[$t]}" != "$arch" ] || name=$t
		done
		[ -n "$name" ] || die "ARCH=$arch: forklab builds $(for t in $forklab_targets; do
			echo "${table_target_arch[$t]}"; done | sort -u | paste -sd ' ' - | sed 's/ / or /g')"
		die "SANITIZE=$sanitize is not built for ARCH=$arch"
	fi
	target_name=$name
	target_arch=$arch
	target_tree=$tree
	target_suffix=${table_target_suffix[$name]}
	target_obj=$build/${table_target_obj[$name]}
	target_image=$target_obj/${table_target_image[$name]}
	target_res=$build${table_target_res[$name]:+/${table_target_res[$name]}}
	target_kconfig=$here/${table_target_kconfig[$name]}
	target_kconfig_add=
	for file in ${table_tree_kconfig[$kernel_line]} ${table_target_kconfig_add[$name]}; do
		target_kconfig_add+=${target_kconfig_add:+$'\n'}$(grep -E \
			'^(CONFIG_|# CONFIG_.* is not set)' "$here/$file")
	done
	target_expected=$here/$forklab_expectations
	target_gate=
	[ "${table_target_gate[$name]}" = 0 ] ||
		target_gate=$here/${table_tree_coverage[$kernel_line]}/$arch.spec
	target_gcov=${table_target_gcov[$name]}
	target_runner=$here/${table_target_runner[$name]}
	target_mem=${table_target_mem[$name]}
	target_jobs=$(($(nproc) + ${table_target_jobs_extra[$name]}))
	target_emulator=${table_target_emulator[$name]}
	eval "target_emulator_args=(${table_target_emulator_args[$name]})"
	target_kvm=${table_target_kvm[$name]}
	target_accel=''
	target_kernel_args=${table_target_kernel_args[$name]}
	target_gigantic_args=${table_target_gigantic_args[$name]}
	eval "target_kunit_args=(${table_target_kunit_args[$name]})"
	target_kunit_args=("${target_kunit_args[@]//\{emulator_args\}/${target_emulator_args[*]}}")
	target_guest=${table_target_guest[$name]}
	target_launch=() target_root_args=() target_host_root_args=() target_swap_args=()
	target_initrd_args=()
	eval "target_launch=(${table_target_launch[$name]})"
	eval "target_root_args=(${table_target_root_args[$name]})"
	eval "target_host_root_args=(${table_target_host_root_args[$name]})"
	target_swap_dev=${table_target_swap_dev[$name]}
	eval "target_swap_args=(${table_target_swap_args[$name]})"
	eval "target_initrd_args=(${table_target_initrd_args[$name]})"
	target_cold_ccache=${table_target_cold_ccache[$name]}
	target_gdb_symbols=${table_target_gdb_symbols[$name]}
	target_gdb_stub_args=() target_gdb_commands=()
	eval "target_gdb_stub_args=(${table_target_gdb_stub_args[$name]})"
	target_gdb_kernel_args=${table_target_gdb_kernel_args[$name]}
	eval "target_gdb_commands=(${table_target_gdb_commands[$name]})"
	target_make=${table_target_make[$name]}
	target_initrd=
	target_kunit=1
	target_suite=$(tree_suffix "$kernel_line" "$kernel_series")$target_suffix
	if [ "$kernel_series" = none ]; then
		# The tree without the series: no KUnit suites (the series
		# wires them in), no coverage gate (its spec is the series').
		[ "${table_target_unpatched[$name]}" = 1 ] ||
			die "SERIES=none builds $(for t in $forklab_targets; do
				[ "${table_target_unpatched[$t]}" = 0 ] || echo "ARCH=${table_target_arch[$t]}"
			done | paste -sd ' ' -) only: ${table_target_guest[$name]} needs the series (configs/forklab.toml, unpatched)"
		target_gate='' target_kunit=''
		target_make="make check ARCH=$arch SERIES=none"
	fi
	[ -n "$kernel_binary" ] || return 0
	# A binary kernel: its image and initramfs from tools/setup/
	# binary-kernel, its results of its own, no coverage.
	[ "$name" = "${table_binary_target[$kernel_binary]}" ] ||
		die "KERNEL=$kernel_binary boots on ARCH=${table_target_arch[${table_binary_target[$kernel_binary]}]} only"
	target_image=$top_build/${table_binary_build[$kernel_binary]}/vmlinuz
	target_initrd=$top_build/${table_binary_build[$kernel_binary]}/initrd.cpio
	target_res=$(binary_res "$kernel_binary")
	target_suffix=-$kernel_binary
	target_suite=$target_suffix
	target_gate='' target_kunit=''
	target_make="make check KERNEL=$kernel_binary"
}

# accel_choose IMAGE [INITRD [ACCEL]]: the accelerator the target's
# emulator runs its guests under, the {accel} of its emulator_args: ACCEL
# if given (kvm or tcg), else kvm when the target's KVM device
# (KVM_DEVICE stands in for it) opens read-write, answers as a KVM device
# and a probe boot of IMAGE (with INITRD, a binary kernel's) under KVM
# runs a program (accel_probe); tcg otherwise. Nothing
# a guest does depends on which (the same CPU model either way). The
# answer is kept for the machine, BUILD/kvm-probe/KEY (KEY: the host's name,
# kernel and CPU, the emulator's version, the device), so that one boot
# probes and a new machine probes again; the one that probes prints it.
# Sets target_accel (kvm, tcg; '' for a target without an emulator) and
# fills {accel} in target_emulator_args and target_kunit_args.
accel_choose() {
	local image=$1 initrd=${2:-} dev=${KVM_DEVICE:-$target_kvm} key cache lock answer

	target_accel=${3:-}
	[ -n "$target_emulator" ] || return 0
	if [ -z "$target_accel" ]; then
		# No part of the key may fail the tools' set -e: a machine
		# without the device (stat fails) is a key too.
		key=$({ uname -nrm; grep -m 2 -e '^model name' -e '^flags' /proc/cpuinfo
			"$target_emulator" --version | head -n 1; echo "$dev"
			stat -L -c '%F %t:%T' "$dev" 2>&1 || :; } | sha256sum | cut -c 1-16)
		mkdir -p "$top_build/kvm-probe"
		cache=$top_build/kvm-probe/$key
		# Guests boot in parallel (tools/run/mm-tests): one probes.
		exec {lock}> "$cache.lock"
		flock "$lock"
		if [ ! -s "$cache" ]; then
			answer=$(accel_probe "$image" "$initrd" "$dev")
			echo "$prog: $target_guest runs under ${answer%% *}: ${answer#* } (kept for this machine in $cache)" >&2
			echo "$answer" > "$cache.tmp" && mv "$cache.tmp" "$cache"
		fi
		exec {lock}>&-
		answer=$(cat "$cache")
		target_accel=${answer%% *}
	fi
	case "$target_accel" in
	kvm|tcg) ;;
	*) die "accelerator '$target_accel': want kvm or tcg" ;;
	esac
	target_emulator_args=("${target_emulator_args[@]//\{accel\}/$target_accel}")
	target_kunit_args=("${target_kunit_args[@]//\{accel\}/$target_accel}")
}

# accel_probe IMAGE INITRD DEVICE: 'kvm WHY' when DEVICE opens read-write,
# answers KVM_GET_API_VERSION with 12 (a file that opens but is no KVM
# device does not: /dev/null), and the target's runner, forced to KVM,
# boots IMAGE and runs a program there within 60 s with every CPU feature
# the model asks for (a /dev/kvm that opens may still not run a guest:
# on the machine forklab is developed on, a guest under KVM printed
# nothing, and its KVM lacks PKU, which fork_arch's row needs); 'tcg
# WHY' otherwise.
accel_probe() {
	local image=$1 initrd=$2 dev=$3 probe=$top_build/kvm-probe/true rc=0

	[ -e "$dev" ] || { echo "tcg $dev: no such device"; return; }
	{ exec 3<> "$dev"; } 2> /dev/null || { echo "tcg $dev does not open read-write"; return; }
	exec 3>&-
	python3 -c 'import fcntl, os, sys
sys.exit(fcntl.ioctl(os.open(sys.argv[1], os.O_RDWR), 0xAE00) != 12)' "$dev" 2> /dev/null ||
		{ echo "tcg $dev opens but is no KVM device (KVM_GET_API_VERSION)"; return; }
	[ -x "$probe" ] || { printf 'int main(void) { return 0; }\n' |
		gcc -static -x c -o "$probe" -; } ||
		{ echo "tcg the probe's program did not build"; return; }
	timeout -k 10 90 "$target_runner" --under kvm --timeout 60 --swap 0 --kernel "$image" \
		${initrd:+--initrd "$initrd"} --console "$top_build/kvm-probe/probe.console" "$probe" \
		< /dev/null > "$top_build/kvm-probe/probe.log" 2>&1 ||
		rc=$?
	if [ "$rc" != 0 ]; then
		echo "tcg the probe boot under KVM failed (exit $rc; $top_build/kvm-probe/probe.log)"
	elif grep -q "doesn't support requested feature" "$top_build/kvm-probe/probe.console"; then
		# The CPU model would not be the same as under TCG.
		echo "tcg KVM here lacks CPU features the model asks for ($(grep -o \
			"requested feature: [^ ]*" "$top_build/kvm-probe/probe.console" | cut -d' ' -f3 |
			paste -sd ' ' -))"
	else
		echo "kvm $dev ran a probe boot of $image"
	fi
}

# kernel_ran: the kernel the target boots, as a live bug's line names it
# (the results model reads it from a 'kernel' file beside a log): a binary
# kernel's package and version (tools/setup/binary-kernel's package
# file), a tree's without the series by its version and source (the
# Debian package its tarball came from, or KERNEL_SRC); nothing for
# forklab's own kernels.
kernel_ran() {
	local from

	if [ -n "$kernel_binary" ]; then
		cat "${target_image%/*}/package" 2> /dev/null ||
			die "${target_image%/*}/package: not written by tools/setup/binary-kernel"
	elif [ "$kernel_series" = none ]; then
		from=$(head -n 1 "$build/src/linux.from" 2> /dev/null) || from=
		case "$from" in
		tarball*) from="$kernel_package $(dpkg-query -W -f='${Version}' "$kernel_package" 2> /dev/null)" ;;
		*) from=${from#* } ;;
		esac
		echo "Linux $(kernel_version "$tree") without forklab's series (${from:-source unknown})"
	fi
}

# binary_res BINARY: where a binary kernel's results go.
binary_res() {
	echo "$top_build/$1"
}

# target_on_tree TREE ARCH SANITIZE [SERIES]: target ARCH SANITIZE on the
# tree TREE (SERIES=none: unpatched), whatever KERNEL= and SERIES= name
# (its paths below BUILD's, as a run with KERNEL=TREE has them).
target_on_tree() {
	local kernel_line=$1 build=${BUILD:-$here/build} tree kernel_binary=
	local kernel_series=${4:-}

	build=$build${table_tree_build[$1]:+/${table_tree_build[$1]}}
	[ -z "$kernel_series" ] || build=$build/unpatched
	tree=$build/src/linux
	target "$2" "$3"
}

# tree_suffix TREE [SERIES]: what the names of a tree's suites add: ''
# for the first tree with its series, -6.1 for another, -6.12-unpatched
# and -6.1-unpatched for a tree without it (SERIES=none); the target's
# suffix follows (mm-tests-6.1-x86_64).
tree_suffix() {
	if [ "${2:-}" = none ]; then
		echo "-$1-unpatched"
	elif [ "$1" != "${forklab_trees%% *}" ]; then
		echo "-$1"
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

# header_words PATCH FIELD: the words of PATCH's FIELD: line (Targets,
# Trees), or the table's default for it; a second line where the table
# says once, or a word that is no name of a target (tree), dies naming
# it: the patch would run nowhere. The table's rules, as
# tools/lib/forklab/table.py applies them for the Python tools.
header_words() {
	local patch=$1 field=$2 listed names word

	[ "${table_header_once[$field]:-0}" = 0 ] ||
		[ "$(grep -c "^$field:" "$patch")" -le 1 ] ||
		die "${patch##*/}: more than one '$field:' line"
	listed=$(sed -n "s/^$field:[[:space:]]*//p" "$patch" | tr -d '\r')
	case "${table_header_values[$field]:-}" in
	targets) names=$forklab_targets ;;
	trees) names=$forklab_trees ;;
	*) names='' ;;
	esac
	for word in $listed; do
		[ -z "$names" ] || [[ " $names " = *" $word "* ]] ||
			die "${patch##*/}: '$field: $listed': no ${table_header_values[$field]%s} '$word' (want: $names)"
	done
	echo "${listed:-${table_header_default[$field]:-}}"
}

# for_this_target PATCH: does PATCH (mutants/, museum/) run on the target
# last set? Its "Targets:" line names it (target_name).
for_this_target() {
	local words

	words=$(header_words "$1" Targets) || exit 1
	[[ " $words " = *" $target_name "* ]]
}

# for_this_tree PATCH: does PATCH (mutants/, museum/) apply to the tree
# KERNEL= names? Its "Trees:" line names the trees it was written for and
# checked against.
for_this_tree() {
	local words

	words=$(header_words "$1" Trees) || exit 1
	[[ " $words " = *" $kernel_line "* ]]
}

# target_of_runner NAME: the target whose runner is NAME (uml-run,
# qemu-run): the guest tools are one script under two names.
target_of_runner() {
	local t

	for t in "${targets[@]}"; do
		# Each target as built here, then the one found as KERNEL=
		# and SERIES= have it (a binary kernel's boots on its own
		# target only, a tree without the series on x86_64).
		kernel_binary='' kernel_series='' target "${t% *}" "${t#* }"
		[ "${target_runner##*/}" != "$1" ] || { target "${t% *}" "${t#* }"; return 0; }
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
	# A binary kernel boots with its initramfs (KERNEL=debian); QEMU
	# under the accelerator the caller chose (accel_choose), if it did.
	"${RUN_GUEST:-$target_runner}" --kernel "$2" --cmdline "$cmdline" \
		${target_initrd:+--initrd "$target_initrd"} \
		${target_accel:+--under "$target_accel"} \
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

# reproducer_row PATCH: the row of the exhibit's reproducer that shows its
# bug, when its Caught-by: line names a row of that program ("PROG: ROW");
# nothing otherwise. A program of many rows (fork_huge) fails on a kernel
# for other exhibits' bugs too: on a kernel as it is, only this row says
# whether the exhibit's bug is there.
reproducer_row() {
	local program caught

	program=$(reproducer "$1" | cut -d' ' -f1)
	program=${program##*/}
	caught=$(sed -n 's/^Caught-by: *//p' "$1" | head -n 1)
	case "$caught" in
	"$program: "?*) echo "${caught#"$program": }" ;;
	esac
}

# row_result LOG ROW: "ok" or "not ok", the first KTAP line of LOG whose
# description starts with ROW; nothing if it has none.
row_result() {
	awk -v row="$2" '/^(not )?ok [0-9]+ / {
		desc = $0; sub(/^(not )?ok [0-9]+ /, "", desc)
		if (index(desc, row) == 1) { print (/^not/ ? "not ok" : "ok"); exit } }' "$1"
}

# clean_run LOG STATUS: the reproducer passed, and tested something: one
# 'ok' line at least that is not a skip. One reader: 'grep | grep -q'
# under pipefail fails when grep -q quits before a long log (cow's 761
# rows) is written into the pipe, and the writer dies of SIGPIPE.
clean_run() {
	[ "$2" = 0 ] && awk '/^ok / && !/# SKIP/ { found = 1; exit }
		END { exit !found }' "$1"
}

# shown LOG STATUS [ROW]: what a reproducer's run showed, in one line: its
# first failing KTAP line (ROW: the first whose description starts with
# ROW; with the diagnostic line just before it, which says what the
# program saw), or the first kernel complaint, else its last line; on a
# clean run, how many of its tests passed.
shown() {
	local line

	line=$(awk -v row="${3:-}" '/^# / { diag = substr($0, 3) }
		/^not ok/ { desc = $0; sub(/^not ok [0-9]+ /, "", desc) }
		/^not ok/ && (row == "" || index(desc, row) == 1) {
			print $0 (diag != "" ? " (" diag ")" : ""); found = 1; exit }
		/^(not )?ok/ { diag = "" }	# a note belongs to the next row only
		END { exit !found }' "$1" ||
		grep -m 1 -E 'WARNING:|BUG:|Oops|Bad rss-counter|panic' "$1" ||
		grep -v '^$' "$1" | tail -n 1)
	case "$2" in
	0) echo "clean: $(grep -E '^ok ' "$1" | grep -cv '# SKIP') ok, $(grep -E '^ok ' "$1" | grep -c '# SKIP') skipped" ;;
	124) echo "hung: the timeout ended it" ;;
	*) echo "exit $2: $line" ;;
	esac | tr '\t' ' ' | cut -c 1-200
}
