# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The tests of tools/ci/ (sourced by tests/run).

# The matrix is the table's CI steps for it ('matrix' and 'both'), each
# once, make mutate once per shard, make policies once per policy up to
# the shards: a step left out, or shards that miss one, fail here.
t matrix_is_every_ci_step
matrix_is_every_ci_step() {
	MATRIX_SHARDS=2 expect_exit 0 "$here/tools/ci/matrix" || return 1
	python3 - "$scratch/stdout" "$here/configs/forklab.toml" <<'PY' || fail "the matrix is not the table's CI steps"
import json, re, sys, tomllib
jobs = json.load(open(sys.argv[1]))['include']
steps = [s['make'] for s in tomllib.load(open(sys.argv[2], 'rb'))['ci'] if s['where'] != 'here']
assert 'mutate' in steps and 'check' in steps, steps
names = [j['make'] for j in jobs]
assert len(set(names)) == len(names), 'a job twice'
want = []
for s in steps:
	goal = s.split()[0]
	n = 2 if goal == 'mutate' else min(2, len(re.search(r'POLICIES="?([^"]*)"?', s).group(1).split())) if goal == 'policies' else None
	want += [f'{s} SHARD={k}/{n}' for k in range(n)] if n else [s]
assert names == want, (names, want)
table = tomllib.load(open(sys.argv[2], 'rb'))
arch_of = {t['name']: t['arch'] for t in table['targets']}
for b in table.get('binaries', []):
	# a binary kernel's jobs, without ARCH=: its target's cache
	for j in jobs:
		if f"KERNEL={b['name']}" in j['make'].split() and 'ARCH=' not in j['make']:
			assert j['cache'] == f"{arch_of[b['target']]}-0-{b['name']}", j
for j in jobs:
	assert j['setup'] == '' or j['setup'].startswith('test'), j
	assert ('ARCH=x86_64' in j['make']) == ('ARCH=x86_64' in j['setup']) or not j['setup'], j
PY
	# --builds: each x86_64 target and tree the jobs boot, once (UML's
	# jobs build their own: its objects name their checkout; a binary
	# kernel is downloaded, not built).
	MATRIX_SHARDS=2 expect_exit 0 "$here/tools/ci/matrix" --builds &&
	python3 - "$scratch/stdout" "$here/tools/ci/matrix" "$here/configs/forklab.toml" <<'PY' || fail "--builds is not the x86_64 caches of the jobs"
import json, subprocess, sys, tomllib
builds = [b['cache'] for b in json.load(open(sys.argv[1]))['include']]
jobs = json.loads(subprocess.run([sys.argv[2]], capture_output=True, text=True).stdout)['include']
binaries = [b['name'] for b in tomllib.load(open(sys.argv[3], 'rb')).get('binaries', [])]
want = []
for j in jobs:
	if j['cache'].startswith('x86_64-') and j['cache'] not in want and \
	   j['cache'].split('-', 2)[2] not in binaries:
		want.append(j['cache'])
assert builds == want, (builds, want)
PY
	MATRIX_SHARDS=0 expect_exit 2 "$here/tools/ci/matrix" && one_line_stderr
}

# .ci/run makes the table's CI steps for it ('here' and 'both'), in
# order, each under its cap, and leaves the 'matrix' ones to the matrix
# (stand-ins for make and judge/results in a copy; a step that fails
# stops the ones after it).
t ci_run_makes_its_steps_only
ci_run_makes_its_steps_only() {
	local repo=$scratch/repo

	mkdir -p "$repo/.ci" "$repo/tools/judge" "$repo/tools/lib" "$repo/configs" \
		"$scratch/bin" || return 1
	cp "$here/.ci/run" "$repo/.ci/run" &&
	cp -r "$here/tools/lib/forklab" "$repo/tools/lib/" &&
	cp "$here/configs/forklab.toml" "$repo/configs/" || return 1
	printf '#!/bin/sh\necho "0 passed, 0 failed, 0 skipped"\n' > "$repo/tools/judge/results"
	# One line per make, its arguments joined by '|': a quoted argument
	# split in two shows.
	printf '#!/bin/bash\n(IFS="|"; echo "$*") >> "%s"\n[ "$1" != "${FAIL_GOAL:-}" ]\n' \
		"$scratch/made" > "$scratch/bin/make"
	chmod +x "$repo/tools/judge/results" "$scratch/bin/make"
	PATH=$scratch/bin:$PATH expect_exit 0 bash "$repo/.ci/run" || return 1
	python3 -c 'import shlex, sys, tomllib
[print("|".join(shlex.split(s["make"]))) for s in tomllib.load(open(sys.argv[1], "rb"))["ci"]
 if s["where"] != "matrix"]' "$here/configs/forklab.toml" > "$scratch/want"
	diff "$scratch/want" "$scratch/made" > "$scratch/diff" ||
		fail ".ci/run did not make its steps alone: $(cat "$scratch/diff")" || return 1
	! grep -qx 'mutate' "$scratch/made" || fail "a matrix step ran here" || return 1
	rm -f "$scratch/made"
	FAIL_GOAL=lint PATH=$scratch/bin:$PATH expect_exit 1 bash "$repo/.ci/run" &&
	[ "$(cat "$scratch/made")" = "$(sed '/^lint$/q' "$scratch/want")" ] ||
		fail "a failed step did not stop the steps after it: $(cat "$scratch/made")"
}

# The GitHub workflow passes npm's @action-validator/cli (installed into
# BUILD/npm on first use), and the validator refuses a broken one.
t github_workflow_validates
github_workflow_validates() {
	local validator=$build/npm/node_modules/.bin/action-validator
	local workflow=$here/.github/workflows/forklab.yml

	if [ ! -x "$validator" ]; then
		command -v npm > /dev/null ||
			{ skip "no npm to install @action-validator/cli with"; return; }
		timeout 300 npm install --silent --prefix "$build/npm" @action-validator/cli@0.6.0 \
			> "$scratch/npm" 2>&1 ||
			{ skip "npm could not install @action-validator/cli: $(tail -n 1 "$scratch/npm")"; return; }
	fi
	expect_exit 0 "$validator" "$workflow" || return 1
	sed 's/^    runs-on: ubuntu-latest$/    runs_on: ubuntu-latest/' "$workflow" > "$scratch/bad.yml"
	expect_exit 1 "$validator" "$scratch/bad.yml"
}

# .gitlab-ci.yml and the child pipeline tools/ci/gitlab-jobs writes (one
# job per matrix entry, then the merge) pass GitLab's own schema
# (vendored: tools/judge/schemas/gitlab-ci.json), which refuses a job
# with a misspelt keyword and a trigger strategy GitLab does not have.
t gitlab_pipelines_validate
gitlab_pipelines_validate() {
	MATRIX_SHARDS=2 expect_exit 0 "$here/tools/ci/gitlab-jobs" || return 1
	python3 - "$here/tools/judge/schemas/gitlab-ci.json" "$here/.gitlab-ci.yml" \
		"$scratch/stdout" "$here/tools/ci/matrix" > "$scratch/check" 2>&1 <<'PY' ||
import json, subprocess, sys
import jsonschema, yaml
validator = jsonschema.Draft7Validator(json.load(open(sys.argv[1])))
parent, child = (yaml.safe_load(open(f)) for f in sys.argv[2:4])
for name, doc in (('.gitlab-ci.yml', parent), ('the child pipeline', child)):
	errors = [f'{list(e.path)}: {e.message[:120]}' for e in validator.iter_errors(doc)]
	assert not errors, (name, errors)
matrix = json.loads(subprocess.run([sys.argv[4]], capture_output=True, text=True,
				   env={'MATRIX_SHARDS': '2', 'PATH': '/usr/bin:/bin'}).stdout)
jobs = [j for j in child if j not in ('variables', 'stages', 'merge') and not j.startswith('build ')]
assert jobs == [e['name'] for e in matrix['include']], 'not one job per matrix entry'
builds = [j for j in child if j.startswith('build ')]
assert builds and all(child[j]['stage'] == 'build' for j in builds), 'no build stage'
assert child['merge']['stage'] == child['stages'][-1] and child['merge']['when'] == 'always'
child['merge']['scripts'] = child['merge'].pop('script')
parent['forklab']['trigger']['strategy'] = 'wait'
for name, doc in (('a misspelt keyword', child), ('a bad strategy', parent)):
	assert any(True for _ in validator.iter_errors(doc)), f'{name} passed the schema'
PY
		fail "$(tail -n 1 "$scratch/check")"
}

# CI's share of the matrix's proof runs (tools/ci/share): what a change
# touches (the exhibit itself, a series patch editing a file the patch
# edits, its Caught-by: program), and a shard that rotates with the
# commit count, so that over N landings every mutant runs once. A share
# that missed what the change touched, or whose shards overlapped or left
# one out, fails here.
t ci_share_takes_the_change_and_a_rotating_shard
ci_share_takes_the_change_and_a_rotating_shard() {
	local share=$here/tools/ci/share k n
	expect_exit 0 "$share" --list --changed museum/04-unprivileged-uffd-event-fork.patch --count 0
	expect_in '^museum-um 04-unprivileged-uffd-event-fork touched$' "$scratch/stdout"
	expect_exit 0 "$share" --list --changed mm-tests/fork_mappings.c --count 0
	expect_in '^museum-um 03-child-keeps-ksm-counters touched$' "$scratch/stdout"
	! grep -q '^museum-um 04-.* touched' "$scratch/stdout" ||
		fail "an exhibit caught by fork_uffd taken for one fork_mappings.c catches"
	expect_exit 0 "$share" --list --count 0 \
		--changed patches/0008-mm-choose-which-vmas-fork-copies-the-page-tables-of.patch
	expect_in '^mutate-um 01-drop-anon-vma-check touched$' "$scratch/stdout"
	expect_exit 0 "$share" --list --count 0 \
		--changed patches/0011-mm-hugetlb-don-t-map-folios-writable-without-VM_WRIT.patch
	! grep -q '^mutate-um .* touched$' "$scratch/stdout" ||
		fail "a um mutant of another file taken as touched"
	# Nothing touched: N consecutive commits (N the table's shards) run
	# each um mutant once.
	n=$(python_tool table share-runs | awk '$1 == "mutate-um" { print $7 }')
	[ -n "$n" ] || { fail "no mutate-um run in the table"; return; }
	for ((k = 0; k < n; k++)); do
		"$share" --list --run mutate-um --changed '' --count "$k" | cut -d' ' -f2
	done | LC_ALL=C sort > "$scratch/ran"
	# um's mutants on 6.12 (no Targets: line is um; no Trees: line 6.12).
	(cd "$here/mutants" && grep -L '^Targets:' ./*.patch; grep -l '^Targets:.*\bum\b' ./*.patch) |
		while read -r p; do
			! grep -q '^Trees:' "$here/mutants/$p" ||
				grep -q '^Trees:.*\b6\.12\b' "$here/mutants/$p" || continue
			echo "$p"
		done | sed 's|^\./||; s|\.patch$||' | LC_ALL=C sort -u > "$scratch/all"
	diff "$scratch/all" "$scratch/ran" > "$scratch/diff" ||
		fail "$n shards are not every um mutant once: $(head -n 5 "$scratch/diff" | tr '\n' ' ')"
	expect_exit 2 "$share" --count many &&
	one_line_stderr &&
	expect_exit 2 "$share" --list --run nosuch &&
	one_line_stderr
}
