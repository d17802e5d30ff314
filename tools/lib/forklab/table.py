# SPDX-License-Identifier: GPL-2.0
"""lib/table: configs/forklab.toml, the one table of forklab's trees,
targets, policies, patch header rules and CI steps, for the Python
tools (import forklab.table) and, printed, for the bash ones:

  shell               bash declarations of the whole table (tools/lib/
                      forklab.sh evaluates them once)
  ci-steps WHERE      CI's steps for .ci/run (here) or the matrix
                      (matrix): 'CAP MAKE_ARGS' a line, MAKE_ARGS as the
                      table writes them (quoted for the shell)
  share-runs          tools/ci/share's runs: 'NAME RUNNER ARCH SANITIZE
                      TREE PATCHES SHARDS' a line
  header PATCH FIELD  the words of PATCH's FIELD: line, by the table's
                      rules for it (its default when it has none)
  caught-by TEXT      exit 0 if a row of stdin ('GROUP: ROW' a line) is
                      the one a Caught-by: TEXT names, else 1

Exit status: 0; 1 with one error line on a table or patch that breaks
a rule; 2 on a bad argument.
"""

import os
import shlex
import signal
import sys
import tomllib

import forklab
from forklab import HERE, die

PROG = 'lib/table'
PATH = os.path.join(HERE, 'configs', 'forklab.toml')
TREE_FIELDS = ('name', 'package', 'patches', 'build', 'kconfig', 'coverage')
TARGET_FIELDS = ('name', 'arch', 'sanitize', 'suffix', 'obj', 'image', 'res', 'kconfig',
		 'kconfig_add', 'gate', 'gcov', 'runner', 'mem', 'jobs_extra',
		 'emulator', 'emulator_args', 'kvm', 'kernel_args', 'gigantic_args', 'kunit_args',
		 'guest', 'launch', 'root_args', 'host_root_args', 'swap_dev', 'swap_args',
		 'initrd_args', 'unpatched', 'cold_ccache', 'gdb_symbols', 'gdb_stub_args',
		 'gdb_kernel_args', 'gdb_commands', 'make')
BINARY_FIELDS = ('name', 'package', 'flavours', 'tree', 'target', 'modules', 'build')
CI_WHERE = ('here', 'matrix', 'both')


class TableError(Exception):
	"""A table, or a patch's header, that breaks a rule: its message is
	the error line."""


def _check(table):
	if not isinstance(table.get('expectations'), str):
		raise TableError('no expectations = FILE')
	if not isinstance(table.get('quarantine'), str):
		raise TableError('no quarantine = FILE')
	for key, fields in (('trees', TREE_FIELDS), ('targets', TARGET_FIELDS)):
		entries = table.get(key)
		if not entries:
			raise TableError(f'no [[{key}]]')
		names = [e.get('name') for e in entries]
		if len(set(names)) != len(names):
			raise TableError(f'[[{key}]]: a name twice')
		for e in entries:
			missing = [f for f in fields if f not in e]
			if missing:
				raise TableError(f'[[{key}]] {e.get("name")}: no {", ".join(missing)}')
	for b in table.get('binaries', []):
		missing = [f for f in BINARY_FIELDS if f not in b]
		if missing:
			raise TableError(f'[[binaries]] {b.get("name")}: no {", ".join(missing)}')
		if b['target'] not in names_of(table, 'targets'):
			raise TableError(f'[[binaries]] {b["name"]}: no target {b["target"]!r}')
		if b['tree'] not in names_of(table, 'trees'):
			raise TableError(f'[[binaries]] {b["name"]}: no tree {b["tree"]!r}')
		if b['name'] in names_of(table, 'trees'):
			raise TableError(f'[[binaries]] {b["name"]}: the name of a tree (KERNEL= names either)')
	pairs = [(t['arch'], t['sanitize']) for t in table['targets']]
	if len(set(pairs)) != len(pairs):
		raise TableError('[[targets]]: two with the same arch and sanitize')
	if not table.get('policies', {}).get('names'):
		raise TableError('no [policies] names')
	res = table.get('results', {})
	if not res.get('logs') or not isinstance(res.get('policies'), str) or \
			not set(res.get('policy_logs') or ['?']) <= set(res['logs']):
		raise TableError('[results]: want logs, policies and policy_logs (suites of logs)')
	for field, rule in table.get('headers', {}).items():
		values = rule.get('values')
		if values and rule.get('default') not in names_of(table, values):
			raise TableError(f'[headers.{field}]: default {rule.get("default")!r} is no name of {values}')
	for step in table.get('ci', []):
		if step.get('where') not in CI_WHERE or not isinstance(step.get('cap'), int) \
				or not step.get('make'):
			raise TableError(f'[[ci]] {step.get("make")!r}: want make, cap (seconds) and where ({", ".join(CI_WHERE)})')
	for run in table.get('ci_share', []):
		if run.get('target') not in names_of(table, 'targets') or \
				run.get('tree') not in names_of(table, 'trees'):
			raise TableError(f'[[ci_share]] {run.get("name")}: no such target or tree')
	for name, var in table.get('env', {}).items():
		if not isinstance(var, dict) or var.get('kind') not in ENV_KINDS or \
				not isinstance(var.get('doc'), str):
			raise TableError(f'[env] {name}: want {{ kind = {"|".join(ENV_KINDS)}, doc = "..." }}')
	return table


_table = None

# [env]'s kinds of variable.
ENV_KINDS = ('choice', 'stand-in', 'kept')


def load(path=PATH):
	"""The table, checked (TableError if it breaks a rule)."""
	global _table
	if _table is not None and path == PATH:
		return _table
	try:
		with open(path, 'rb') as f:
			table = tomllib.load(f)
	except OSError as e:
		raise TableError(f'{path}: {e.strerror}') from e
	except tomllib.TOMLDecodeError as e:
		raise TableError(f'{path}: {e}') from e
	try:
		table = _check(table)
	except TableError as e:
		raise TableError(f'{os.path.relpath(path, HERE)}: {e}') from e
	if path == PATH:
		_table = table
	return table


def names_of(table, key):
	"""The names of the table's trees or targets, the default first."""
	return [e['name'] for e in table.get(key, [])]


def trees():
	return names_of(load(), 'trees')


def tree(name):
	for t in load()['trees']:
		if t['name'] == name:
			return t
	raise TableError(f'no tree {name!r} (want: {" ".join(trees())})')


def policies():
	return list(load()['policies']['names'])


def npm(package):
	"""The version [npm] pins @package at."""
	return load()['npm'][package]


def logs():
	"""[(suite, log path below a results folder)]: [results] logs."""
	return list(load()['results']['logs'].items())


def policy_logs():
	"""(the policies' folder below a results folder, [(suite, log path
	below a policy's folder)]): [results] policies and policy_logs."""
	res = load()['results']
	return res['policies'], list(res['policy_logs'].items())


def header(path, field):
	"""The words of the patch's FIELD: line (its default when it has
	none), by the table's rules: a second line, where the rule says
	once, or a word that is no name of what the rule takes, is an
	error."""
	rule = load().get('headers', {}).get(field, {})
	with open(path, errors='backslashreplace') as f:
		lines = [line.rstrip('\r\n')[len(field) + 1:].strip() for line in f
			 if line.startswith(field + ':')]
	name = os.path.basename(path)
	if rule.get('once') and len(lines) > 1:
		raise TableError(f"{name}: more than one '{field}:' line")
	if not lines:
		return rule.get('default', '').split()
	words = lines[0].split()
	values = rule.get('values')
	if values:
		allowed = names_of(load(), values)
		for word in words:
			if word not in allowed:
				raise TableError(f"{name}: '{field}: {lines[0]}': no {values[:-1]} "
						 f"'{word}' (want: {' '.join(allowed)})")
	return words


def caught_by(text, failed_row):
	"""Is FAILED_ROW ('GROUP: ROW' as the results model names it) the
	one a Caught-by: TEXT names (the table's match 'row'): it starts
	with TEXT, or TEXT follows a ': ' in it (a ROW, or the tail of a
	nested one). tools/run/mutants' awk applies the same rule."""
	return failed_row.startswith(text) or f': {text}' in failed_row


def _bash_assoc(name, pairs):
	body = ' '.join(f'[{shlex.quote(k)}]={shlex.quote(v)}' for k, v in pairs)
	return f'declare -gA {name}=({body})'


def _word(value):
	if isinstance(value, bool):
		return '1' if value else '0'
	if isinstance(value, list):
		return ' '.join(shlex.quote(v) for v in value)
	return str(value)


def shell():
	"""The table as bash declarations (tools/lib/forklab.sh)."""
	table = load()
	out = [f'forklab_trees={shlex.quote(" ".join(names_of(table, "trees")))}',
	       f'forklab_targets={shlex.quote(" ".join(names_of(table, "targets")))}',
	       f'forklab_policies={shlex.quote(" ".join(policies()))}',
	       f'forklab_expectations={shlex.quote(table["expectations"])}',
	       _bash_assoc('table_log', table['results']['logs'].items()),
	       _bash_assoc('table_policy_log', table['results']['policy_logs'].items()),
	       f'forklab_policies_dir={shlex.quote(table["results"]["policies"])}',
	       _bash_assoc('table_npm', table.get('npm', {}).items()),
	       f'forklab_quarantine={shlex.quote(table["quarantine"])}']
	for field in TREE_FIELDS[1:]:
		out.append(_bash_assoc(f'table_tree_{field}',
				       [(t['name'], _word(t[field])) for t in table['trees']]))
	for field in TARGET_FIELDS[1:]:
		out.append(_bash_assoc(f'table_target_{field}',
				       [(t['name'], _word(t[field])) for t in table['targets']]))
	binaries = table.get('binaries', [])
	out.append(f'forklab_binaries={shlex.quote(" ".join(names_of(table, "binaries")))}')
	for field in BINARY_FIELDS[1:]:
		out.append(_bash_assoc(f'table_binary_{field}',
				       [(b['name'], _word(b[field] if field != 'flavours' else
						  [f'{k}={v}' for k, v in b[field].items()]))
					for b in binaries]))
	for key in ('values', 'default', 'once'):
		out.append(_bash_assoc(f'table_header_{key}',
				       [(f, _word(r.get(key, ''))) for f, r in
					table.get('headers', {}).items()]))
	return '\n'.join(out)


def main():
	parser = forklab.ArgumentParser(prog=PROG, description=__doc__.split('\n\n')[0])
	sub = parser.add_subparsers(dest='what', required=True)
	sub.add_parser('shell')
	steps = sub.add_parser('ci-steps')
	steps.add_argument('where', choices=('here', 'matrix'))
	sub.add_parser('share-runs')
	head = sub.add_parser('header')
	head.add_argument('patch')
	head.add_argument('field')
	caught = sub.add_parser('caught-by')
	caught.add_argument('text')
	env = sub.add_parser('env', help='[env]: NAME KIND DOC, a line each')
	env.add_argument('--kind', action='append', choices=ENV_KINDS,
			 help='those of this kind only (again: or that one)')
	env.add_argument('--names', action='store_true', help='the names only')
	args = parser.parse_args()
	signal.signal(signal.SIGPIPE, signal.SIG_DFL)
	try:
		table = load()
		if args.what == 'shell':
			print(shell())
		elif args.what == 'ci-steps':
			for step in table.get('ci', []):
				if step['where'] in (args.where, 'both'):
					print(step['cap'], step['make'])
		elif args.what == 'share-runs':
			targets = {t['name']: t for t in table['targets']}
			for run in table.get('ci_share', []):
				t = targets[run['target']]
				print(run['name'], run['runner'], t['arch'], t['sanitize'],
				      run['tree'], run['patches'], run['shards'])
		elif args.what == 'env':
			for name, var in table.get('env', {}).items():
				if not args.kind or var['kind'] in args.kind:
					print(name if args.names else f'{name:<20} {var["kind"]:<8} {var["doc"]}')
		elif args.what == 'caught-by':
			rows = sys.stdin.read().splitlines()
			sys.exit(0 if any(caught_by(args.text, r) for r in rows) else 1)
		else:
			print(' '.join(header(args.patch, args.field)))
	except TableError as e:
		die(PROG, str(e))
	except OSError as e:
		die(PROG, f'{e.filename}: {e.strerror}')


if __name__ == '__main__':
	main()
