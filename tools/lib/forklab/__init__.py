# SPDX-License-Identifier: GPL-2.0
"""What forklab's Python tools share, as tools/lib/forklab.sh is for the
bash ones: one die(), a target's fields as paths (tools/lib/target, per
tree), and a prepared tree's version. Its modules: table (configs/
forklab.toml: the trees, targets, policies, header rules, CI steps),
ktap (the tree's KTAP parser), results (the results model: every
verdict on a run's rows), and one per tool (tools/judge/export runs
export.py as python3 -m forklab.export).

Every tool's exit status, bash or Python: 0 when what it checks holds;
1 when it does not, or the tool failed (one error line: die()); 2 when
it was given a bad argument or an input it cannot judge (argparse's
usage error, BAD_INPUT), so that a judge's 1 is always a verdict."""

import argparse
import os
import subprocess
import sys

# The checkout: this file is tools/lib/forklab/__init__.py.
HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


# The exit status of a bad argument or input (argparse's own).
BAD_INPUT = 2


def die(prog, message, status=1):
	"""One error line, 'PROG: error: MESSAGE', and exit STATUS."""
	print(f'{prog}: error: {message}', file=sys.stderr)
	sys.exit(status)


class ArgumentParser(argparse.ArgumentParser):
	"""argparse's, with a bad argument's usage error on one line."""

	def error(self, message):
		die(self.prog, f'{message} (see --help)', BAD_INPUT)


def _target(prog, args, tree, series=None):
	env = dict(os.environ, KERNEL=tree) if tree else dict(os.environ)
	if series is not None:
		env['SERIES'] = series
	out = subprocess.run([os.path.join(HERE, 'tools/lib/target'), *args],
			     capture_output=True, text=True, env=env)
	if out.returncode:
		die(prog, out.stderr.strip() or 'tools/lib/target failed')
	return out.stdout


def target(prog, arch=None, sanitize=None, tree=None, series=None):
	"""{field: value} of a target (default: the ARCH and SANITIZE of the
	environment) on a tree (default: KERNEL's), with its series or
	without (series 'none'; default: SERIES's)."""
	arch = arch or os.environ.get('ARCH') or _target(prog, ['--arch'], tree).strip()
	sanitize = sanitize or os.environ.get('SANITIZE', '0')
	return dict(line.split('=', 1) for line in
		    _target(prog, [arch, sanitize], tree, series).splitlines() if '=' in line)


def targets(prog, tree=None):
	"""[(name, ARCH, SANITIZE)] of every target, as a Targets: line names them."""
	return [tuple(line.split()) for line in _target(prog, ['--list'], tree).splitlines()]


def tree_version(tree_dir):
	"""The version in a prepared tree's Makefile (6.12.118); '' if none."""
	fields = {}
	try:
		with open(os.path.join(tree_dir, 'Makefile')) as f:
			for line in f:
				key, sep, value = line.partition(' = ')
				if sep and key in ('VERSION', 'PATCHLEVEL', 'SUBLEVEL'):
					fields.setdefault(key, value.strip())
	except OSError:
		return ''
	if len(fields) < 3:
		return ''
	return f'{fields["VERSION"]}.{fields["PATCHLEVEL"]}.{fields["SUBLEVEL"]}'
