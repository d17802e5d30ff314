# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The tests of tools/ci/ (sourced by tests/run).

# The matrix is .ci/run's steps, each once, make mutate once per shard:
# a step left out, or shards that miss one, fail here.
t matrix_is_every_ci_step
matrix_is_every_ci_step() {
	MATRIX_SHARDS=2 expect_exit 0 "$here/tools/ci/matrix" || return 1
	python3 - "$scratch/stdout" "$here/.ci/run" <<'PY' || fail "the matrix is not .ci/run's steps"
import json, re, sys
jobs = json.load(open(sys.argv[1]))['include']
steps = [m.group(1) for m in re.finditer(r'^step [0-9]+ (.*)$', open(sys.argv[2]).read(), re.M)]
names = [j['make'] for j in jobs]
assert len(set(names)) == len(names), 'a job twice'
want = []
for s in steps:
	want += [f'{s} SHARD={k}/2' for k in range(2)] if s.split()[0] == 'mutate' else [s]
assert names == want, (names, want)
for j in jobs:
	assert j['setup'] == '' or j['setup'].startswith('test'), j
	assert ('ARCH=x86_64' in j['make']) == ('ARCH=x86_64' in j['setup']) or not j['setup'], j
PY
	MATRIX_SHARDS=0 expect_exit 2 "$here/tools/ci/matrix" && one_line_stderr &&
	CI_RUN=$scratch/none expect_exit 1 "$here/tools/ci/matrix" && one_line_stderr
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
