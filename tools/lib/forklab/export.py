# SPDX-License-Identifier: GPL-2.0
"""judge/export: a target's results in the formats CI systems read:
RES/junit.xml (JUnit XML, as Jenkins' xunit plugin's junit-10.xsd has
it: vendored in tools/judge/schemas/) and RES/kcidb.json (KernelCI's
KCIDB I/O schema v5.3: its JSON-schema export is vendored there too),
from the target's KUnit and user-space KTAP (RES/kunit.ktap,
RES/mm-tests/results.ktap, RES/upstream/results.ktap when make
upstream-runners ran and RES/repros/results.ktap when make repros
ran, in which judge/console-scan already failed the
tests the kernel complained in), as the results model (tools/lib/forklab/
results.py) judges their rows against the target's expectations: the
verdicts make check and make results give, row for row.

JUnit: one testsuite per KUnit suite (classname kunit.SUITE) and per
user-space program (mm-tests.PROGRAM) and reproducer (repros.NAME:
TITLE); a testcase per row, parameterised
rows named CASE/PARAM; failure (FAIL, UNEXPECTED SKIP, UNLISTED) and
error (ERROR, MISSING: an expected row the log lacks) carry the verdict,
why and the row's diagnostics, skipped its reason (a quarantined row
that failed: skipped, its message 'QUARANTINED (VERDICT; quarantined:
DATE WHY)'; one that passed says so in its system-out); a program that failed
after all its rows passed (a crash, a kernel complaint) is a testcase of
its own, '(exit status)'. KCIDB: one
checkout (origin forklab: the tree's version and the patch series'
hash), one build (the target), one test per row with path
kunit.SUITE.CASE[.PARAM] or mm_tests.PROGRAM.ROW (sanitised to KCIDB's
pattern, the raw name and the model's verdict in misc; status MISS for a
missing row, FAIL for an unexpected skip or row; a quarantined row's
misc has its quarantine, 'DATE WHY'); the checkout valid when
prepare-tree finished the tree, the build's status from its last make
(OBJ/build.status), and on QEMU the accelerator it ran under (kvm or
tcg, the 'accel' file beside each log) in the build's misc, each
test's misc and the JUnit document's name; the coverage gate's figures as tests
coverage.FUNCTION.lines / .branches with the covered share as their
number where something was counted. A suite with no log (it did not run, or its guest did not boot)
is one test with status MISS, and a JUnit testcase with an error.

RES and the tree are those of the target ARCH, SANITIZE and KERNEL name
(tools/lib/target); GATE_SPEC replaces the target's gate spec, as for
judge/coverage. Exit status 0; 1 with one error line (no results
directory, no KTAP parser in the tree); 2 on a bad argument.
"""

import hashlib
import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET

import forklab
from forklab import ktap, results, table

PROG = 'judge/export'
HERE = forklab.HERE
ORIGIN = 'forklab'
# The suites of a target, each its JUnit classname prefix and KCIDB path
# root; their logs are the table's ([results] logs).
SUITES = [('kunit', 'kunit'), ('mm-tests', 'mm_tests'), ('upstream', 'upstream')]
# make repros' rows, when it ran: the reproducers of a folder of the
# user's, judged without expectations (a testsuite per reproducer).
REPROS = ('repros', 'repros')
# The suites a target need not have run: make upstream-runners' and
# make repros'.
OPTIONAL = {'upstream', REPROS[0]}


def suite_logs():
	"""[(JUnit prefix, KCIDB root, log below a results folder)] of every
	suite judge/export reads, its log by [results] logs."""
	logs = dict(table.logs())
	return [(prefix, root, logs[prefix]) for prefix, root in SUITES + [REPROS]]


def series_hash(kernel):
	"""sha256 of the patch series the tree was prepared with, in order."""
	d = os.path.join(HERE, table.tree(kernel)['patches'])
	h = hashlib.sha256()
	try:
		with open(os.path.join(d, 'series')) as f:
			names = [n.strip() for n in f if n.strip() and not n.startswith('#')]
		for name in names:
			with open(os.path.join(d, name), 'rb') as p:
				h.update(p.read())
	except OSError:
		return ''
	return h.hexdigest()


def compiler(obj):
	try:
		with open(os.path.join(obj, 'include/generated/compile.h')) as f:
			m = re.search(r'LINUX_COMPILER\s+"([^"]*)"', f.read())
		return m.group(1) if m else ''
	except OSError:
		return ''


def build_status(t):
	"""The KCIDB status of the target's last build: what tools/run/kunit
	wrote in OBJ/build.status when it ran make (PASS, FAIL); MISS when no
	build was recorded or its image is gone."""
	try:
		with open(os.path.join(t['obj'], 'build.status')) as f:
			status = f.read().strip()
	except OSError:
		return 'MISS'
	if status == 'PASS' and not os.path.isfile(t['image']):
		return 'MISS'
	return status if status in ('PASS', 'FAIL') else 'MISS'


# The results model's verdicts as KCIDB statuses and JUnit elements. A
# row the expectations list and the log lacks is KCIDB's MISS; a skip
# they do not list and a row they do not list fail, as make check fails
# them (misc says which verdict it was); so does a live bug, a row the
# kernel that ran fails for a bug it has (make check passes it). An
# expected failure (an upstream test that needs what the target lacks)
# is a skip, its reason in the message and misc's verdict.
# A quarantined row (configs/quarantine) that failed has the KCIDB
# status of the verdict it had (misc: verdict QUARANTINED, the
# quarantine's date and reason) and is a JUnit skip whose message starts
# QUARANTINED: neither passed nor a failure of the run.
KCIDB_STATUS = {results.PASS: 'PASS', results.SKIP: 'SKIP', results.FAIL: 'FAIL',
		results.ERROR: 'ERROR', results.UNEXPECTED_SKIP: 'FAIL',
		results.MISSING: 'MISS', results.UNLISTED: 'FAIL', results.LIVE: 'FAIL',
		results.XFAIL: 'SKIP'}
JUNIT_ELEMENT = {results.FAIL: 'failure', results.UNEXPECTED_SKIP: 'failure', results.LIVE: 'failure',
		 results.UNLISTED: 'failure', results.ERROR: 'error',
		 results.MISSING: 'error', results.SKIP: 'skipped', results.XFAIL: 'skipped',
		 results.QUARANTINED: 'skipped'}


def text_of(row):
	"""A row's diagnostics, then its verdict and why."""
	head = row.verdict if row.verdict not in results.AS_EXPECTED else ''
	if row.verdict == results.LIVE:
		# The row failed: the kernel that ran has the bug it shows.
		head = f'{results.LIVE} ({row.live_why})'
	if row.verdict == results.QUARANTINED:
		head = f'{results.QUARANTINED} ({row.quarantined}; quarantined: {row.quarantine})'
	why = ': '.join(x for x in (head, row.why) if x)
	return '\n'.join(row.said + ([why] if why else []))


def read_suite(parser, name, log, expected, quarantined):
	"""{group: [(names below the group, Row)]} of one suite (a group: a
	KUnit suite, a program), as the results model judged its rows, the
	rows @quarantined (results.load_quarantine's) held against it."""
	suite = results.judge(parser, name, log, expected)
	# Every quarantine line's suite is one to know: the other targets'
	# are judge/results' to check.
	results.quarantine([suite], quarantined, {s for s, _ in quarantined})
	groups = {}
	for row in suite.rows:
		group, below = row.names[0], row.names[1:] or row.names[:1]
		groups.setdefault(group, []).append((below, row))
	return suite, groups


def coverage_rows(t):
	"""[(function, measure, covered, total, status)] of the target's
	coverage gate (judge/coverage-gate over RES/coverage/forklab.info),
	or [] when the target has no gate or no coverage yet."""
	info = os.path.join(t['res'], 'coverage', 'forklab.info')
	spec = os.environ.get('GATE_SPEC') or t.get('gate')
	if not spec or not os.path.isfile(info):
		return []
	out = subprocess.run([os.path.join(HERE, 'tools/judge/coverage-gate'),
			      '--spec', spec, info], capture_output=True, text=True)
	rows = []
	count = re.compile(r'\d+/\d+|-')
	for line in out.stdout.splitlines():
		# function file calls lines branches require result...
		f = line.split()
		if len(f) < 7 or not count.fullmatch(f[3]) or not count.fullmatch(f[4]):
			continue
		require, result = f[5].split(','), ' '.join(f[6:])
		for measure, value in (('lines', f[3]), ('branches', f[4])):
			if f[2] == '-':		# not in the tracefile: never ran
				rows.append((f[0], measure, None, None, 'MISS'))
				continue
			if value == '-':	# none of this measure in it
				continue
			covered, total = (int(x) for x in value.split('/'))
			if result == 'FAIL' and (measure in require or 'hit' in require):
				status = 'FAIL'
			elif result == 'ok' or result == 'FAIL':
				status = 'PASS'
			else:		# 'reported': figures, no requirement
				status = 'DONE'
			rows.append((f[0], measure, covered, total, status))
	return rows


def kcidb_part(name):
	"""A name as a part of a KCIDB path: [a-zA-Z0-9_-]+."""
	return re.sub(r'[^a-zA-Z0-9_-]+', '_', name).strip('_') or '_'


def unique(name, seen, sep=' #'):
	"""@name, or the first of name #2, #3, ... not in @seen (added)."""
	n, i = name, 1
	while n in seen:
		i += 1
		n = f'{name}{sep}{i}'
	seen.add(n)
	return n


def tree_checkout(t, kernel):
	"""KCIDB's checkout and build of a kernel built here: the tree's
	version and the series' hash (none: SERIES=none)."""
	version = forklab.tree_version(t['tree']) or '0.0.0'
	series = series_hash(kernel) if t['kunit'] else ''
	checkout_id = f'{ORIGIN}:linux-{version}-{series[:12] or "noseries"}'
	# The checkout is valid when prepare-tree finished it: it writes
	# the tree's stamp last, after every patch applied, and removes it
	# before it starts again.
	valid = os.path.isfile(os.path.join(os.path.dirname(t['tree']), 'linux.stamp'))
	checkout = {'id': checkout_id, 'origin': ORIGIN,
		    'tree_name': f'debian-linux-source-{kernel}',
		    'patchset_hash': series, 'valid': valid,
		    'misc': {'kernel_version': version}}
	build = {'id': f'{checkout_id}-{t["name"]}', 'checkout_id': checkout_id, 'origin': ORIGIN,
		 'architecture': t['arch'], 'config_name': t['name'],
		 'status': build_status(t),
		 'misc': {'target': t['name'], 'sanitize': os.environ.get('SANITIZE', '0') == '1'}}
	cc = compiler(t['obj'])
	if cc:
		build['compiler'] = cc
	return checkout, build


def binary_checkout(t):
	"""KCIDB's checkout and build of a binary kernel: the image package
	and its version (tools/setup/binary-kernel's 'package' file), not
	built here."""
	try:
		with open(os.path.join(os.path.dirname(t['image']), 'package')) as f:
			package, package_version = f.readline().split()
	except (OSError, ValueError):
		forklab.die(PROG, f'no package file beside {t["image"]}: run make check first')
	version = package_version.split('-')[0]
	checkout_id = f'{ORIGIN}:{package}_{package_version}'
	checkout = {'id': checkout_id, 'origin': ORIGIN, 'tree_name': package,
		    'valid': True,
		    'misc': {'kernel_version': version, 'package': package,
			     'package_version': package_version}}
	build = {'id': f'{checkout_id}-{t["name"]}', 'checkout_id': checkout_id, 'origin': ORIGIN,
		 'architecture': t['arch'], 'config_name': package,
		 'status': 'PASS' if os.path.isfile(t['image']) else 'MISS',
		 'misc': {'target': t['name'], 'binary': True}}
	return checkout, build


def main():
	ap = forklab.ArgumentParser(prog=PROG, description=__doc__.split('\n\n')[0])
	ap.add_argument('--out', help='where junit.xml and kcidb.json go (default: RES)')
	ap.add_argument('--expect', metavar='FILE', help="the expectations the rows are "
			"judged against (default: configs/expected)")
	ap.add_argument('--quarantine', metavar='FILE', help="the quarantined rows "
			"(default: configs/quarantine)")
	args = ap.parse_args()
	t = forklab.target(PROG)
	res, tree = t['res'], t['tree']
	kernel = os.environ.get('KERNEL') or table.trees()[0]
	out = args.out or res
	if not os.path.isdir(res):
		forklab.die(PROG, f'no results in {res}: run make check first')
	parser = ktap.load_parser(os.environ.get('KUNIT_DIR') or
				  os.path.join(tree, 'tools/testing/kunit'))
	if parser is None:
		forklab.die(PROG, f'no KTAP parser in {tree}: run make tree first')
	# The rows the target's expectations list (none yet: every row as
	# the log has it), as make check judges them.
	expectations = {}
	expect = args.expect or t['expected']
	if args.expect or os.path.isfile(expect):
		try:
			expectations = results.load_expectations(expect, HERE)
		except results.ResultsError as e:
			forklab.die(PROG, str(e))
	try:
		quarantined = results.load_quarantine(
			args.quarantine or os.path.join(HERE, table.load()['quarantine']))
	except results.ResultsError as e:
		forklab.die(PROG, str(e))
	suffix = t['suite']
	# A binary kernel (KERNEL=debian) and a tree without the series have
	# no KUnit suites of forklab's.
	suites = [s for s in suite_logs() if s[0] != 'kunit' or t['kunit']]
	suites = [s for s in suites if s[0] not in OPTIONAL or
		  os.path.isfile(os.path.join(res, s[2]))]
	if t['initrd']:
		# A binary kernel: its package is the checkout and the build.
		checkout, build = binary_checkout(t)
	else:
		checkout, build = tree_checkout(t, kernel)
	# The accelerator QEMU ran under (run/kunit's, run/mm-tests' accel
	# file: kvm or tcg); none for UML.
	accel = ''
	for _, _, log in suites:
		try:
			with open(os.path.join(res, os.path.dirname(log), 'accel')) as f:
				accel = accel or f.readline().strip()
		except OSError:
			pass
	if accel:
		build['misc']['accelerator'] = accel
	kcidb = {'version': {'major': 5, 'minor': 3}, 'checkouts': [checkout],
		 'builds': [build], 'tests': []}
	build_id = build['id']
	version = checkout['misc']['kernel_version']

	under = f' ({t["guest"]} under {accel})' if accel else ''
	suites_el = ET.Element('testsuites', name=f'forklab {t["name"]}{under} Linux {version}')
	paths = set()
	totals = [0, 0, 0, 0]
	for prefix, root, log in suites:
		name = prefix + suffix
		section = results.section_of(expectations, name, 'lazy')
		expected = expectations[section].resolve('lazy', section) \
			if section and prefix != REPROS[0] else None
		try:
			suite, groups = read_suite(parser, name, os.path.join(res, log), expected,
						   quarantined)
		except results.ResultsError as e:
			forklab.die(PROG, str(e))
		for group, rows in groups.items():
			classname = f'{prefix}.{group}'
			verdicts = [row.verdict for _, row in rows]
			element = [JUNIT_ELEMENT.get(v) for v in verdicts]
			failures = element.count('failure')
			errors = element.count('error')
			skipped = element.count('skipped')
			suite_el = ET.SubElement(suites_el, 'testsuite', name=classname,
						 tests=str(len(rows)), failures=str(failures),
						 errors=str(errors), skipped=str(skipped))
			seen = set()
			for (names, row), verdict, kind in zip(rows, verdicts, element):
				case_name = unique('/'.join(names), seen)
				case = ET.SubElement(suite_el, 'testcase', name=case_name, classname=classname)
				text = text_of(row)
				if kind == 'skipped' and verdict == results.XFAIL:
					ET.SubElement(case, 'skipped', message=f'{verdict}: {row.xfail_why}')
				elif verdict == results.QUARANTINED:
					ET.SubElement(case, 'skipped', message=text.split('\n')[-1]).text = text
				elif kind == 'skipped':
					ET.SubElement(case, 'skipped', message=row.why or 'skipped')
				elif kind:
					ET.SubElement(case, kind, message=f'{verdict}: {row.why}' if row.why
						      else verdict).text = text
				path = unique('.'.join([root, kcidb_part(group)] +
						       [kcidb_part(n) for n in names]), paths, '-')
				test = {'id': f'{build_id}:{path}', 'build_id': build_id, 'origin': ORIGIN,
					'path': path,
					'status': KCIDB_STATUS[row.quarantined or verdict],
					'misc': {'name': f'{classname}/{case_name}', 'verdict': verdict}}
				if text and verdict != results.PASS:
					test['log_excerpt'] = text[-16384:]
				if suite.accel:
					test['misc']['accelerator'] = suite.accel
				if row.quarantine:
					test['misc']['quarantine'] = row.quarantine
				if row.quarantine and verdict == results.PASS:
					# Passed while quarantined: it may leave.
					ET.SubElement(case, 'system-out').text = \
						f'{results.QUARANTINED} row passed (quarantined: ' \
						f'{row.quarantine}): it may leave the quarantine'
				kcidb['tests'].append(test)
			totals[0] += len(rows)
			totals[1] += failures
			totals[2] += errors
			totals[3] += skipped
	# The coverage gate's figures: a test per function and measure, its
	# covered share as the number, PASS or FAIL as the gate judged.
	for function, measure, covered, total, status in coverage_rows(t):
		path = unique(f'coverage.{kcidb_part(function)}.{measure}', paths, '-')
		test = {'id': f'{build_id}:{path}', 'build_id': build_id, 'origin': ORIGIN,
			'path': path, 'status': status}
		if covered is not None:
			# No share where nothing was counted: 0 of 0 is no 100 %.
			if total:
				test['number'] = {'value': round(100.0 * covered / total, 2),
						  'unit': '%'}
			test['misc'] = {'covered': covered, 'total': total}
		kcidb['tests'].append(test)
	suites_el.set('tests', str(totals[0]))
	suites_el.set('failures', str(totals[1]))
	suites_el.set('errors', str(totals[2]))

	os.makedirs(out, exist_ok=True)
	ET.indent(suites_el)
	ET.ElementTree(suites_el).write(os.path.join(out, 'junit.xml.tmp'),
					encoding='UTF-8', xml_declaration=True)
	with open(os.path.join(out, 'kcidb.json.tmp'), 'w') as f:
		json.dump(kcidb, f, indent=1, sort_keys=True)
		f.write('\n')
	for name in ('junit.xml', 'kcidb.json'):
		os.replace(os.path.join(out, name + '.tmp'), os.path.join(out, name))
	print(f'{PROG}: {t["name"]}: {totals[0]} results ({totals[1]} failed, '
	      f'{totals[2]} did not complete or missing, {totals[3]} skipped) in '
	      f'{os.path.join(out, "junit.xml")} and kcidb.json')


if __name__ == '__main__':
	main()
