# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tools/bench/lib.sh: what make bench's guest benchmarks (tools/bench/fork,
# tools/bench/cost, tools/bench/kbuild) share, sourced after
# tools/lib/forklab.sh:
#
#   bench_image        the kernel a benchmark boots: the bench kernel of the
#                      target last set (tools/bench/kernel builds it), or its
#                      test kernel with BENCH_KERNEL=test
#   ktap_start FILE    an empty collection of boots' KTAP in FILE.body
#   ktap_add FILE KTAP append one boot's KTAP, its results renumbered
#   ktap_end FILE      FILE: one KTAP document, checked by kunit.py parse

bench_kernel=${BENCH_KERNEL:-bench}

bench_image() {
	case "$bench_kernel" in
	bench) echo "$build/bench-kernel/$target_arch/${target_image#"$target_obj"/}" ;;
	test) echo "$target_image" ;;
	*) die "BENCH_KERNEL=$bench_kernel: want bench or test" ;;
	esac
}

ktap_start() {
	: > "$1.body"
	echo 0 > "$1.count"
}

# Renumber "ok N" across boots; the plan is written once, by ktap_end.
ktap_add() {
	local n

	n=$(cat "$1.count")
	awk -v base="$n" '/^(not )?ok [0-9]+ /{ for (f = 1; f <= NF; f++)
			if ($f ~ /^[0-9]+$/) { $f += base; break } }
		/^TAP version|^1\.\./{ next } { print }' "$2" >> "$1.body"
	echo $((n + $(grep -cE '^(not )?ok [0-9]+ ' "$2"))) > "$1.count"
}

ktap_end() {
	{ echo "TAP version 13"; echo "1..$(cat "$1.count")"; cat "$1.body"; } > "$1"
	rm -f "$1.body" "$1.count"
	python3 "$kunit_py" parse "$1" > "$1.parse.log" || {
		cat "$1.parse.log" >&2
		die "${1##*/}: a check failed (above)"
	}
	rm -f "$1.parse.log"
}
