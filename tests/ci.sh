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

# npm_tool PACKAGE: install PACKAGE into BUILD/npm (tools/setup/npm) if
# it is not there; skip the test when it cannot be.
npm_tool() {
	BUILD=$build "$here/tools/setup/npm" "$1" > "$scratch/npm" 2>&1 ||
		skip "no $1: $(tail -n 1 "$scratch/npm")"
}

# The GitHub workflow passes npm's @action-validator/cli (installed into
# BUILD/npm on first use), and the validator refuses a broken one.
t github_workflow_validates
github_workflow_validates() {
	local validator=$build/npm/node_modules/.bin/action-validator
	local workflow=$here/.github/workflows/forklab.yml

	npm_tool @action-validator/cli || return 0
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

# .gitlab-ci.yml on an engine: gitlab-ci-local (npm, BUILD/npm), its
# shell executor, in a git copy of the checkout. The engine runs the
# parent pipeline (the matrix job: tools/ci/gitlab-jobs, for real), the
# child pipeline its trigger includes from that job's artifact, and
# every child job in its stage; stand-ins for make (each job's make
# lines logged), apt-get, mount and judge/results, so that no kernel is
# built. Each job must make what tools/ci/matrix says (make deps, its
# setup, its step), the builds before the run jobs, the merge after
# them; with a step that fails, its job fails and the merge still runs
# (when: always). A child pipeline the engine cannot run, a job that
# lost its setup or a merge that waits for every job to pass fails here.
t gitlab_pipeline_runs_on_gitlab_ci_local
gitlab_pipeline_runs_on_gitlab_ci_local() {
	local gcl=$build/npm/node_modules/.bin/gitlab-ci-local repo=$scratch/engine/repo
	local bin=$scratch/engine/bin

	npm_tool gitlab-ci-local || return 0
	rm -rf "$scratch/engine"
	mkdir -p "$repo" "$bin" "$scratch/engine/home" || return 1
	# The checkout's files as git lists them (a copy without .git: all
	# but build/), committed in a repository of their own.
	if git -C "$here" rev-parse --git-dir > /dev/null 2>&1; then
		(cd "$here" && git ls-files -z --cached --others --exclude-standard |
			tar --null --ignore-failed-read -T - -cf - 2> /dev/null) | tar -xf - -C "$repo"
	else
		(cd "$here" && find . \( -path ./build -o -path ./.git \) -prune -o -type f -print0 |
			tar --null -T - -cf -) | tar -xf - -C "$repo"
	fi
	[ -f "$repo/.gitlab-ci.yml" ] || fail "no copy of the checkout" || return 1
	printf '#!/bin/sh\necho "0 passed, 0 failed, 0 skipped"\n' > "$repo/tools/judge/results"
	local made=$scratch/engine/made
	# (the goal in engine/fail fails: the engine passes the jobs no
	# variable of the environment it runs in)
	printf '#!/bin/bash\n(IFS="|"; echo "make|$CI_JOB_NAME|$*") >> "%s"\n[ "$1" != "$(cat "%s")" ]\n' \
		"$made" "$scratch/engine/fail" > "$bin/make"
	: > "$scratch/engine/fail"
	printf '#!/bin/sh\necho "%s|$CI_JOB_NAME|$*" >> "%s"\n' apt-get "$made" > "$bin/apt-get"
	printf '#!/bin/sh\necho "%s|$CI_JOB_NAME|$*" >> "%s"\n' mount "$made" > "$bin/mount"
	chmod +x "$bin"/* "$repo/tools/judge/results" &&
	(cd "$repo" && git init -q && git add -A &&
		git -c user.name=forklab -c user.email=forklab@localhost commit -qm copy) ||
		fail "cannot make the copy a git repository" || return 1
	engine() {	# the pipeline, its output in $scratch/engine/out
		(cd "$repo" && PATH="$bin:$PATH" timeout -k 10 300 "$gcl" \
			--force-shell-executor --no-color --home "$scratch/engine/home") \
			> "$scratch/engine/out" 2>&1
	}
	engine || fail "gitlab-ci-local failed: $(grep -m 3 'FAIL\|rror' "$scratch/engine/out")" ||
		return 1
	python3 - "$made" "$scratch/engine/out" "$here/tools/ci/matrix" "$repo/.gitlab-ci.yml" \
		> "$scratch/check" 2>&1 <<'PY' || fail "$(tail -n 1 "$scratch/check")" || return 1
import json, os, re, shlex, subprocess, sys, yaml
made, out, matrix, parent = sys.argv[1:5]
shards = yaml.safe_load(open(parent))['variables']['MATRIX_SHARDS']
env = dict(os.environ, MATRIX_SHARDS=shards)
jobs = json.loads(subprocess.run([matrix], capture_output=True, text=True, env=env).stdout)['include']
builds = json.loads(subprocess.run([matrix, '--builds'], capture_output=True, text=True, env=env).stdout)['include']
want = {f'build {b["cache"]}': [['deps'], shlex.split(b['make'])] for b in builds}
for j in jobs:
	want[j['name']] = [['deps']] + ([shlex.split(j['setup'])] if j['setup'] else []) + [shlex.split(j['make'])]
want['merge'] = [['tree'], ['merge'], ['differences'], ['report']]
lines = [l.rstrip('\n').split('|') for l in open(made)]
got = {}
for tool, job, *args in lines:
	if tool == 'make':
		got.setdefault(job, []).append(args)
missing = sorted(set(want) - set(got))
assert not missing, f'jobs the engine did not run: {missing}'
for job in want:
	assert got[job] == want[job], f'{job}: made {got[job]}, want {want[job]}'
assert set(got) == set(want), f'jobs nobody asked for: {sorted(set(got) - set(want))}'
index = lambda pred: [i for i, (t, job, *a) in enumerate(lines) if pred(job)]
run = index(lambda job: job in {j['name'] for j in jobs})
assert max(index(lambda job: job.startswith('build '))) < min(run), 'a run job before the builds'
assert min(index(lambda job: job == 'merge')) > max(run), 'the merge before a run job'
mounts = {job for t, job, *a in lines if t == 'mount'}
assert mounts == {j['name'] for j in jobs}, f'/dev/shm not remounted in {sorted({j["name"] for j in jobs} - mounts)}'
text = open(out).read()
for job in want:
	assert re.search(rf'PASS +\[forklab\] -> {re.escape(job)} *$', text, re.M), f'{job}: no PASS'
PY
	# A step that fails: its job fails, the merge runs all the same.
	rm -f "$made"
	echo lint > "$scratch/engine/fail"
	engine
	grep -Eq 'FAIL +(\[forklab\] -> )?lint *$' "$scratch/engine/out" ||
		fail "a failed make lint did not fail its job" || return 1
	grep -q '^make|merge|report$' "$made" ||
		fail "the merge did not run after a failed job"
}

# CI's share of the matrix's proof runs (tools/ci/share): what a change
# touches (the exhibit itself, a series patch editing a file the patch
# edits, its Caught-by: program; a program or KUnit suite a mutant's
# description names), and a shard that rotates with the
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
	# A mutant (no Caught-by:) by the program its description names
	# (39: "fork_uffd: two UFFD_EVENT_FORK messages"), not 34-91's
	# others; by a KUnit suite a changed file defines (26 names
	# forklab_fork_entries, fork_entries_test.c's), not another's (35's
	# forklab_fork_anon_vma).
	expect_exit 0 "$share" --list --changed mm-tests/fork_uffd.c --count 0
	expect_in '^mutate-um 39-uffd-context-per-vma touched$' "$scratch/stdout"
	! grep -q '^mutate-um 59-.* touched' "$scratch/stdout" ||
		fail "a mutant fork_memcg kills taken for one fork_uffd.c kills"
	expect_exit 0 "$share" --list --changed kunit/fork_entries_test.c --count 0
	expect_in '^mutate-um 26-migration-entry-stays-writable-in-parent touched$' "$scratch/stdout"
	! grep -q '^mutate-um 35-.* touched' "$scratch/stdout" ||
		fail "a mutant of forklab_fork_anon_vma taken for fork_entries_test.c's"
	# Every changed file counts, not the first; a name inside another
	# (forklab in forklab_fork_entries) is no name.
	expect_exit 0 "$share" --list --changed "mm-tests/fork_uffd.c mm-tests/fork_memcg.c" --count 0
	expect_in '^mutate-um 39-uffd-context-per-vma touched$' "$scratch/stdout"
	expect_in '^mutate-um 59-swap-entry-not-duplicated touched$' "$scratch/stdout"
	expect_exit 0 "$share" --list --changed mm-tests/forklab.c --count 0
	! grep -q '^mutate-um .* touched$' "$scratch/stdout" ||
		fail "mutants taken for forklab.c: $(grep touched "$scratch/stdout" | head -n 3 | tr '\n' ' ')"
	# Nothing touched: N consecutive commits (N the table's shards) run
	# each um mutant once.
	n=$(python_tool table share-runs | awk '$1 == "mutate-um" { print $7 }')
	[ -n "$n" ] || { fail "no mutate-um run in the table"; return; }
	for ((k = 0; k < n; k++)); do
		"$share" --list --run mutate-um --changed '' --count "$k" | cut -d' ' -f2
	done | sort > "$scratch/ran"
	# um's mutants on 6.12 (no Targets: line is um; no Trees: line 6.12).
	(cd "$here/mutants" && grep -L '^Targets:' ./*.patch; grep -l '^Targets:.*\bum\b' ./*.patch) |
		while read -r p; do
			! grep -q '^Trees:' "$here/mutants/$p" ||
				grep -q '^Trees:.*\b6\.12\b' "$here/mutants/$p" || continue
			echo "$p"
		done | sed 's|^\./||; s|\.patch$||' | sort -u > "$scratch/all"
	diff "$scratch/all" "$scratch/ran" > "$scratch/diff" ||
		fail "$n shards are not every um mutant once: $(head -n 5 "$scratch/diff" | tr '\n' ' ')"
	expect_exit 2 "$share" --count many &&
	one_line_stderr &&
	expect_exit 2 "$share" --list --run nosuch &&
	one_line_stderr &&
	# A run's whole name (not a prefix of one), any run of the table's.
	expect_exit 2 "$share" --list --run mutate --changed '' --count 0 &&
	one_line_stderr &&
	expect_exit 0 "$share" --list --run museum-um --changed '' --count 0 &&
	expect_in '^museum-um ' "$scratch/stdout"
}
