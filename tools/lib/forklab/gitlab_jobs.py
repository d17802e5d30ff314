# SPDX-License-Identifier: GPL-2.0
"""ci/gitlab-jobs: .ci/run's steps as a GitLab CI child pipeline
(.gitlab-ci.yml's matrix job writes it, its trigger job runs it): a job
per kernel that tools/ci/matrix --builds says to build once first, one
per entry of tools/ci/matrix (make mutate and make policies in shards),
then a merge job that joins the shards, counts every suite and writes
the HTML report, as
.github/workflows/forklab.yml does on GitHub. Printed as JSON, which is
YAML too; tools/judge/schemas/gitlab-ci.json is GitLab's schema for it.
Exit status 0; 1 with one error line when tools/ci/matrix fails; 2 on a
bad argument."""

import json
import os
import subprocess

import forklab
from forklab import HERE

PROG = 'ci/gitlab-jobs'
IMAGE = 'debian:12'
# What every job installs before make can run; make deps does the rest.
BEFORE = ['apt-get update -qq && apt-get install -y -qq git make > /dev/null']


def run_job(entry):
	"""One matrix entry as a job: its setup, then its step within its cap;
	what it leaves for the merge as artifacts, kept when it fails too."""
	paths = [g for g in entry['results'].splitlines() if not g.startswith('!')]
	exclude = [g[1:] for g in entry['results'].splitlines() if g.startswith('!')]
	script = ['make deps']
	if entry['setup']:
		script.append(f'make {entry["setup"]}')
	script.append(f'timeout -k 60 {entry["cap"]} make {entry["make"]}')
	artifacts = {'when': 'always', 'expire_in': '1 week', 'paths': paths}
	if exclude:
		artifacts['exclude'] = exclude
	if entry['make'].split()[0] == 'check':
		artifacts['reports'] = {'junit': 'build/**/junit.xml'}
	return {
		'stage': 'run',
		'image': IMAGE,
		'timeout': '90m',
		# UML maps its memory from /dev/shm, which Docker mounts noexec
		# and small: the runner must be privileged (docs/running.md).
		'before_script': BEFORE + ['mount -o remount,exec,size=6g /dev/shm'],
		'script': script,
		'cache': {'key': f'ccache-{entry["cache"]}', 'paths': ['.ccache/'],
			  'when': 'always'},
		'artifacts': artifacts,
	}


def build_job(entry):
	"""One target's kernel, built once into its ccache before the jobs
	that boot it (tools/ci/matrix --builds)."""
	return {
		'stage': 'build',
		'image': IMAGE,
		'timeout': '60m',
		'before_script': BEFORE,
		'script': ['make deps', f'make {entry["make"]}'],
		'cache': {'key': f'ccache-{entry["cache"]}', 'paths': ['.ccache/'],
			  'when': 'always'},
	}


def pipeline(matrix, builds):
	jobs = {
		'variables': {
			# The same kernel bytes on every runner: ccache hits.
			'KBUILD_BUILD_TIMESTAMP': '1970-01-01 00:00:00 UTC',
			'KBUILD_BUILD_USER': 'forklab',
			'KBUILD_BUILD_HOST': 'forklab',
			# A GitLab cache holds paths inside the checkout only.
			'CCACHE_DIR': '$CI_PROJECT_DIR/.ccache',
		},
		'stages': ['build', 'run', 'merge'],
	}
	for entry in builds['include']:
		jobs[f'build {entry["cache"]}'] = build_job(entry)
	for entry in matrix['include']:
		jobs[entry['name']] = run_job(entry)
	# Every run job's artifacts (the default: all of earlier stages),
	# also after some failed; a shard's failure fails the merge, and the
	# counts still run.
	jobs['merge'] = {
		'stage': 'merge',
		'image': IMAGE,
		'when': 'always',
		'before_script': BEFORE,
		'script': ['make tree',
			   'status=0; make merge || status=1; tools/judge/results || status=1; '
			   'make differences || status=1; make report || status=1; exit $status'],
		'artifacts': {
			'when': 'always',
			'expire_in': '1 month',
			'paths': ['build/**/junit.xml', 'build/**/kcidb.json',
				  'build/**/mutation-report.json', 'build/report/index.html',
				  'build/compare/'],
			'reports': {'junit': 'build/**/junit.xml'},
		},
	}
	return jobs


def main():
	parser = forklab.ArgumentParser(prog=PROG, description=__doc__.split('\n\n')[0],
					 epilog='Environment: MATRIX_SHARDS (as tools/ci/matrix).')
	parser.parse_args()
	outs = [subprocess.run([os.path.join(HERE, 'tools/ci/matrix'), *args],
			       capture_output=True, text=True) for args in ([], ['--builds'])]
	for out in outs:
		if out.returncode:
			forklab.die(PROG, out.stderr.strip().removeprefix('ci/matrix: error: ') or
				    'tools/ci/matrix failed')
	print(json.dumps(pipeline(*(json.loads(out.stdout) for out in outs)), indent=2))


if __name__ == '__main__':
	main()
