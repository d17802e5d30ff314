# SPDX-License-Identifier: GPL-2.0
"""Compare two runs: each suite's rows whose verdict differs from run A
to run B, as the results model reads them without expectations.

A run is a results folder (build/, build/x86_64, build/6.1: where a
target writes its results, tools/lib/target's res), a policy's folder
in one (build/policies/always: make policies' run of the suites under
fork_copy=always), or a copy of either that --save kept in
build/runs/NAME. A suite is the same suite on every target and tree
(the folders have one layout), named by its base name; its log's path
is configs/forklab.toml's ([results]):

  kunit             kunit.ktap
  mm-tests          mm-tests/results.ktap
  museum            museum/museum.ktap
  mutants           mutate/mutants.ktap
  tools             tests/tools.ktap (the default target's folder only)
  kunit-POLICY      policies/POLICY/kunit.ktap
  mm-tests-POLICY   policies/POLICY/results.ktap

and in a policy's folder (one with a results.ktap of its own):

  kunit             kunit.ktap
  mm-tests          results.ktap

A suite is in a run when its log is there. When A or B is a policy's
folder, only the suites a policy's folder holds are compared: A=build
B=build/policies/always is lazy's make check against always, suite for
suite, and the other suites of build/ are no change of policy. With
--common, only the suites both runs have are compared, each of the
others named on one line ('SUITE: in A only, not compared'): two trees'
runs (A=build B=build/6.1) where one ran suites the other did not. Every row of a suite in
either run is read with judge(parser, name, log, None), its verdict
PASS, SKIP, FAIL or ERROR (a suite whose log cannot be read has the one
row '(no results)'), and a row is paired with the row of the same path
in the other run (the second of a path with the second), else with one
whose path differs only in its numbers ('no leak: RssFile (kB) 836 ->
840'). Each pair that differs is one change, of one kind:

  PASS->FAIL       A passed it, B failed it (FAIL or ERROR)
  FAIL->PASS       A failed it (FAIL or ERROR), B passed it
  new              B has it, A does not
  gone             A has it, B does not
  skip             A or B skipped it and the other did not, or both did
                   for other reasons
  failure changed  both failed it, one FAIL and the other ERROR

A regression is a row B fails (FAIL, ERROR; MISSING for a log that is
empty) that A did not fail with the same verdict, or did not have.

Prints one line per changed row, 'judge/compare: SUITE: KIND PATH: A
VERDICT, B VERDICT', then per suite and over all the counts of each
kind and of the regressions. Writes the same as JSON to --out (default
BUILD/compare.json):

  {"a": PATH, "b": PATH, "regressions": N,
   "counts": {KIND: N, ...}, "left_out": {SUITE: "A" or "B", ...},
   "suites": {SUITE: {"rows_a": N or null, "rows_b": N or null,
                      "counts": {KIND: N, ...}, "regressions": N,
                      "rows": [{"path": ROW, "a": VERDICT or null,
                                "b": VERDICT or null, "kind": KIND,
                                "regression": BOOL,
                                "why_a": TEXT, "why_b": TEXT}, ...]}}}

rows_a or rows_b is null for a suite that run does not have; a row's a
or b is null for a row that run does not have; why is what the row
said after '#' (a skip's reason, a failure's cause), or ''.

Exit status: 0 when B has no regression against A, 1 when it has, 2 on
a bad argument or a run without a suite log.

--boots LOG...: the KTAP logs of boots of one kernel instead (make
repeat): one line per row whose verdict is not the same in all of them,
'judge/compare: row PATH: PASS in runs 1-3, FAIL in run 4' (a row a boot
lacks: 'absent'), then how many rows changed; exit status 1 when any did.
"""

import argparse
import collections
import json
import os
import re
import shutil
import signal
import sys
import tempfile

import forklab
from forklab import HERE, ktap, results, table

# Messages start with the tool's path below tools/.
PROG = 'judge/compare'

# The kinds of change, in the order the counts give them.
PASS_TO_FAIL, FAIL_TO_PASS, NEW, GONE, SKIP, FAILURE_CHANGED = (
	'PASS->FAIL', 'FAIL->PASS', 'new', 'gone', 'skip', 'failure changed')
KINDS = (PASS_TO_FAIL, FAIL_TO_PASS, NEW, GONE, SKIP, FAILURE_CHANGED)

# The verdicts that pass a row; without expectations every other one
# (FAIL, ERROR, MISSING for an empty log) fails it.
PASSING = (results.PASS, results.SKIP)

# The small files beside a log that the results model reads: the kernel
# that ran (a live bug's), the rows a run chose to run, the accelerator
# its emulator ran under. --save keeps them.
BESIDE = ('kernel', 'selected', 'accel')

# A saved run's name: a file name, and no option.
NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]*$')


def suite_logs():
	"""[(suite, log path below a results folder)]: the layout of every
	target's and tree's results (configs/forklab.toml's [results], which
	tools/judge/results reads below each res), in the order judge/results
	gives the suites."""
	logs = table.logs()
	policies, policy_logs = table.policy_logs()
	for policy in table.policies():
		logs += [(f'{suite}-{policy}', os.path.join(policies, policy, rel))
			 for suite, rel in policy_logs]
	return logs


def is_policy_folder(folder):
	"""Is @folder a policy's (RES/policies/POLICY): does it hold a log
	at a path of the policy layout that a results folder has not?"""
	plain = {rel for _, rel in table.logs()}
	return any(os.path.isfile(os.path.join(folder, rel))
		   for _, rel in table.policy_logs()[1] if rel not in plain)


def logs_in(folder):
	"""{suite: log} of the suite logs in @folder (a results folder, or a
	policy's)."""
	layout = table.policy_logs()[1] if is_policy_folder(folder) else suite_logs()
	return {suite: os.path.join(folder, rel) for suite, rel in layout
		if os.path.isfile(os.path.join(folder, rel))}


def runs_dir():
	return os.path.join(os.environ.get('BUILD') or os.path.join(HERE, 'build'), 'runs')


def resolve(run):
	"""The results folder @run names: a folder, else a saved run's name."""
	if os.path.isdir(run):
		folder = run
	elif NAME.match(run) and os.path.isdir(os.path.join(runs_dir(), run)):
		folder = os.path.join(runs_dir(), run)
	else:
		saved = sorted(n for n in os.listdir(runs_dir()) if NAME.match(n)) \
			if os.path.isdir(runs_dir()) else []
		forklab.die(PROG, f"{run}: no results folder and no saved run "
			    f"(saved: {', '.join(saved) or 'none'}; make save NAME=... keeps one)",
			    forklab.BAD_INPUT)
	if not logs_in(folder):
		forklab.die(PROG, f'{run}: no suite log in it (want one of '
			    f'{", ".join(rel for _, rel in suite_logs())})', forklab.BAD_INPUT)
	return folder


# --- the comparison ------------------------------------------------------------

# A row's name without its numbers: configs/expected's '{n}', what a row
# that measures something ('no leak: RssFile (kB) 836 -> 840', '(55
# points)') keeps from run to run.
NUMBER = re.compile(r'[0-9]+')


def pairs(rows_a, rows_b):
	"""[(row of A or None, row of B or None)]: each row paired with the
	first unpaired row of the other run of the same path, else of the
	same path but for its numbers; A's order, then B's rows left."""
	def waiting(indices, key):
		out = collections.defaultdict(collections.deque)
		for j in indices:
			out[key(rows_b[j].path)].append(j)
		return out

	match = [None] * len(rows_a)
	for key in (lambda path: path, lambda path: NUMBER.sub('{n}', path)):
		taken = set(match)
		left = waiting([j for j in range(len(rows_b)) if j not in taken], key)
		for i, row in enumerate(rows_a):
			if match[i] is None and left[key(row.path)]:
				match[i] = left[key(row.path)].popleft()
	out = [(row, None if j is None else rows_b[j]) for row, j in zip(rows_a, match)]
	taken = set(match)
	return out + [(None, row) for j, row in enumerate(rows_b) if j not in taken]


def kind_of(a, b):
	"""The kind of change from row @a to row @b (either None: absent);
	None if they agree."""
	if a is None:
		return NEW
	if b is None:
		return GONE
	if results.SKIP in (a.verdict, b.verdict):
		if a.verdict != b.verdict or a.skip_why != b.skip_why:
			return SKIP
		return None
	if a.verdict == b.verdict:
		return None
	if a.verdict == results.PASS:
		return PASS_TO_FAIL
	if b.verdict == results.PASS:
		return FAIL_TO_PASS
	return FAILURE_CHANGED


def regression(a, b):
	"""Does B fail the row where A did not fail it so, or had none?"""
	return b is not None and b.verdict not in PASSING and \
		(a is None or a.verdict != b.verdict)


def compare_suite(a, b):
	"""The changes from Suite @a to Suite @b (either None: not run):
	[{path, path_a, a, b, kind, regression, why_a, why_b}]."""
	changes = []
	for ra, rb in pairs(a.rows if a else [], b.rows if b else []):
		kind = kind_of(ra, rb)
		if kind is None:
			continue
		path = (rb or ra).path
		changes.append({'path': path,
				'path_a': ra.path if ra and ra.path != path else None,
				'a': ra.verdict if ra else None,
				'b': rb.verdict if rb else None,
				'kind': kind,
				'regression': regression(ra, rb),
				'why_a': ra.why if ra else '',
				'why_b': rb.why if rb else ''})
	return changes


def counts(changes):
	return {kind: sum(c['kind'] == kind for c in changes) for kind in KINDS}


def compare(parser, folder_a, folder_b, common=False):
	"""The JSON document (the module's doc gives its shape) of the
	changes from results folder @folder_a to @folder_b; @common: of the
	suites both have."""
	logs_a, logs_b = logs_in(folder_a), logs_in(folder_b)
	# A policy's folder: its suites only (the module's doc says why).
	compared = table.policy_logs()[1] \
		if is_policy_folder(folder_a) or is_policy_folder(folder_b) else suite_logs()
	suites, left_out = {}, {}
	for suite, _ in compared:
		if suite not in logs_a and suite not in logs_b:
			continue
		if common and (suite not in logs_a or suite not in logs_b):
			left_out[suite] = 'A' if suite in logs_a else 'B'
			continue
		a = results.judge(parser, suite, logs_a[suite], None) if suite in logs_a else None
		b = results.judge(parser, suite, logs_b[suite], None) if suite in logs_b else None
		changes = compare_suite(a, b)
		suites[suite] = {'rows_a': len(a.rows) if a else None,
				 'rows_b': len(b.rows) if b else None,
				 'counts': counts(changes),
				 'regressions': sum(c['regression'] for c in changes),
				 'rows': changes}
	every = [c for s in suites.values() for c in s['rows']]
	return {'a': os.path.abspath(folder_a), 'b': os.path.abspath(folder_b),
		'regressions': sum(c['regression'] for c in every),
		'counts': counts(every), 'left_out': left_out, 'suites': suites}


def verdict_text(run, verdict, why):
	if verdict is None:
		return f'{run} none'
	return f'{run} {verdict}' + (f' ({why})' if why else '')


def summary(what, counted, regressions):
	return f'{PROG}: {what}: ' + ', '.join(f'{n} {kind}' for kind, n in counted.items()) + \
		f'; {regressions} regression{"s" * (regressions != 1)}'


def report(doc):
	"""The lines make compare prints of @doc."""
	lines = []
	for suite, s in doc['suites'].items():
		for c in s['rows']:
			lines.append(f'{PROG}: {suite}: {c["kind"]} {c["path"]}' +
				     (f' (in A: {c["path_a"]})' if c['path_a'] else '') + ': ' +
				     verdict_text('A', c['a'], c['why_a']) + ', ' +
				     verdict_text('B', c['b'], c['why_b']) +
				     (' [regression]' if c['regression'] else ''))
		rows = ', '.join(f'{"no" if n is None else n} row{"s" * (n != 1)} in {run}'
				 for run, n in (('A', s['rows_a']), ('B', s['rows_b'])))
		lines.append(summary(f'{suite} ({rows})', s['counts'], s['regressions']))
	lines += [f'{PROG}: {suite}: in {run} only, not compared' for suite, run in doc['left_out'].items()]
	lines.append(summary(f'{len(doc["suites"])} suites', doc['counts'], doc['regressions']))
	return lines


def write_json(path, doc):
	"""@doc into @path whole, or not at all."""
	folder = os.path.dirname(os.path.abspath(path))
	os.makedirs(folder, exist_ok=True)
	fd, tmp = tempfile.mkstemp(dir=folder, prefix='.compare.')
	try:
		with os.fdopen(fd, 'w') as f:
			json.dump(doc, f, indent=1)
			f.write('\n')
		os.rename(tmp, path)
	except BaseException:
		os.unlink(tmp)
		raise


# --- make repeat: boots of one kernel ----------------------------------------------

def boot_changes(parser, logs):
	"""[(row path, [verdict, or None where absent, of each log])] of
	the rows whose verdict is not the same in every one of @logs (the
	KTAP of boots of one kernel), each row paired with the first boot's
	as make compare pairs two runs' rows."""
	suites = [results.judge(parser, 'kunit', log, None) for log in logs]
	first = suites[0].rows
	seen = [[r.path, [r.verdict] + [None] * (len(logs) - 1)] for r in first]
	index = {id(r): i for i, r in enumerate(first)}
	new = {}
	for n, suite in enumerate(suites[1:], 1):
		for a, b in pairs(first, suite.rows):
			if a is not None:
				seen[index[id(a)]][1][n] = b.verdict if b else None
				continue
			if b.path not in new:
				new[b.path] = len(seen)
				seen.append([b.path, [None] * len(logs)])
			seen[new[b.path]][1][n] = b.verdict
	return [(path, verdicts) for path, verdicts in seen if len(set(verdicts)) > 1]


def runs_text(verdicts):
	"""'PASS in runs 1-3, FAIL in run 4': which boots (from 1) gave
	which verdict, in the order they first came."""
	by = {}
	for n, verdict in enumerate(verdicts, 1):
		by.setdefault(verdict or 'absent', []).append(n)
	parts = []
	for verdict, runs in by.items():
		spans = []
		for n in runs:
			if spans and spans[-1][1] == n - 1:
				spans[-1][1] = n
			else:
				spans.append([n, n])
		text = ', '.join(f'{a}' if a == b else f'{a}-{b}' for a, b in spans)
		parts.append(f'{verdict} in run{"s" * (len(runs) > 1)} {text}')
	return ', '.join(parts)


# --- make save -------------------------------------------------------------------

def save(name, folder):
	"""Copy the suite logs of results folder @folder, and the files the
	model reads beside them, into build/runs/@name; its path. Nothing is
	left half-written: the copy is renamed into place when whole."""
	if not NAME.match(name):
		forklab.die(PROG, f"NAME={name}: want letters, digits, '.', '_' or '-', "
			    f"a letter or digit first", forklab.BAD_INPUT)
	dest = os.path.join(runs_dir(), name)
	if os.path.lexists(dest):
		forklab.die(PROG, f'{dest}: a run is saved under that name already', forklab.BAD_INPUT)
	logs = logs_in(folder)
	if not logs:
		forklab.die(PROG, f'{folder}: no suite log in it', forklab.BAD_INPUT)
	os.makedirs(runs_dir(), exist_ok=True)
	tmp = tempfile.mkdtemp(dir=runs_dir(), prefix=f'.{name}.')
	try:
		# mkdtemp's 0700, made what mkdir would have made
		umask = os.umask(0)
		os.umask(umask)
		os.chmod(tmp, 0o777 & ~umask)
		for log in logs.values():
			into = os.path.join(tmp, os.path.relpath(os.path.dirname(log), folder))
			os.makedirs(into, exist_ok=True)
			shutil.copy2(log, into)
			for f in BESIDE:
				beside = os.path.join(os.path.dirname(log), f)
				if os.path.isfile(beside):
					shutil.copy2(beside, into)
		os.rename(tmp, dest)
	except BaseException:
		shutil.rmtree(tmp, ignore_errors=True)
		raise
	return dest, len(logs)


def main(argv):
	ap = forklab.ArgumentParser(prog=PROG,
		description=__doc__.split('\n\n')[0],
		formatter_class=argparse.RawDescriptionHelpFormatter,
		epilog=__doc__.split('\n\n', 1)[1])
	ap.add_argument('--kunit-dir', required=True,
			help="the directory of the tree's kunit_parser.py")
	ap.add_argument('--out', metavar='FILE',
			help='the JSON file written (default BUILD/compare.json)')
	ap.add_argument('--common', action='store_true',
			help='only the suites both runs have')
	ap.add_argument('--save', metavar='NAME',
			help='copy the suite logs of the one RUN (a results folder) to '
			'BUILD/runs/NAME instead, for a later A= or B=')
	ap.add_argument('--boots', action='store_true',
			help='each RUN is instead the KTAP log of one boot of the same kernel '
			'(make repeat): print the rows whose verdict changed between them, '
			"'row X: PASS in runs 1-3, FAIL in run 4'; exit 1 if any did")
	ap.add_argument('runs', nargs='+', metavar='RUN',
			help='A then B (A=RUN and B=RUN as make writes them): a results '
			'folder, or the NAME of a saved run')
	args = ap.parse_args(argv)
	signal.signal(signal.SIGPIPE, signal.SIG_DFL)
	if args.boots:
		parser = ktap.load_parser(args.kunit_dir)
		if parser is None:
			forklab.die(PROG, f'no kunit_parser.py in {args.kunit_dir}', forklab.BAD_INPUT)
		changed = boot_changes(parser, args.runs)
		for path, verdicts in changed:
			print(f'{PROG}: row {path}: {runs_text(verdicts)}')
		print(f'{PROG}: {len(args.runs)} boots, {len(changed)} '
		      f'row{"s" * (len(changed) != 1)} changed verdict between them')
		return 1 if changed else 0
	if args.save is not None:
		if len(args.runs) != 1 or not os.path.isdir(args.runs[0]):
			ap.error('--save NAME takes one results folder')
		try:
			dest, n = save(args.save, args.runs[0])
		except OSError as e:
			forklab.die(PROG, f'cannot save {args.runs[0]}: {e}')
		print(f'{PROG}: saved {n} suite log{"s" * (n != 1)} of {args.runs[0]} '
		      f'as {args.save}: {dest}')
		return 0
	named, order = {}, ['A', 'B']
	for run in args.runs:
		key, eq, value = run.partition('=')
		if not (eq and key in order):
			key, value = (order or ['?'])[0], run
		if key not in order:
			ap.error(f'want two runs, A=RUN B=RUN: {run!r} is one more')
		if not value:
			ap.error(f'{key}= names no run (want a results folder or a saved NAME)')
		order.remove(key)
		named[key] = value
	if order:
		ap.error('want two runs, A=RUN B=RUN')
	folder_a, folder_b = resolve(named['A']), resolve(named['B'])
	parser = ktap.load_parser(args.kunit_dir)
	if parser is None:
		forklab.die(PROG, f'no kunit_parser.py in {args.kunit_dir}', forklab.BAD_INPUT)
	doc = compare(parser, folder_a, folder_b, args.common)
	out = args.out or os.path.join(os.path.dirname(runs_dir()), 'compare.json')
	try:
		write_json(out, doc)
	except OSError as e:
		forklab.die(PROG, f'{out}: {e.strerror}')
	print('\n'.join(report(doc)))
	print(f'{PROG}: JSON: {out}')
	return 1 if doc['regressions'] else 0


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
