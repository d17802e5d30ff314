# SPDX-License-Identifier: GPL-2.0
"""judge/report: one HTML page of the last runs, BUILD/report/index.html,
that opens offline from the file: the results of each target and tree by
suite (from their junit.xml: passed, failed, quarantined, skipped, the failing rows
with what they said; written again by judge/export first where a suite's
log is newer, so that the page gives the results model's verdicts on the
logs there are), the coverage gate per function (from kcidb.json)
with a link into lcov's HTML at the function's line, each target's
mutation report in Stryker's viewer (npm mutation-testing-elements, its
bundle inlined), the comparisons of runs (make compare's
BUILD/compare.json, make differences' BUILD/compare/*.json: per suite
the counts of each kind of change, and each changed row, a regression
marked failed), and make bench's plots where they exist.

The viewer's bundle comes from npm, installed into BUILD/npm on first
use (MTE_BUNDLE: a bundle to use instead); without it the mutants are
listed as a table. Exit status 0; 1 with one error line when no target
has results.
"""

import glob
import html
import json
import os
import subprocess
import xml.etree.ElementTree as ET

import forklab
from forklab import export, table
from forklab.results import LIVE, OWN_STATUS, QUARANTINED

PROG = 'judge/report'
HERE = forklab.HERE
BUNDLE = 'node_modules/mutation-testing-elements/dist/mutation-test-elements.js'
# The viewer's version the page was checked with (tests/judge.sh):
# configs/forklab.toml's [npm].
MTE_VERSION = table.npm('mutation-testing-elements')



def targets():
	"""[(KERNEL, series, name, ARCH, SANITIZE, fields, title)] of every
	target and tree, of each tree without its series (series 'none') on
	the targets that build one, and of each binary kernel (KERNEL= its
	name: make check KERNEL=debian)."""
	out = []
	tab = table.load()
	for tree in table.trees():
		for name, arch, sanitize in forklab.targets(PROG, tree):
			out.append((tree, '', name, arch, sanitize,
				    forklab.target(PROG, arch, sanitize, tree, ''),
				    f'{name}, Linux {tree}'))
		for t in tab['targets']:
			if t['unpatched']:
				arch, sanitize = t['arch'], str(t['sanitize'])
				out.append((tree, 'none', t['name'], arch, sanitize,
					    forklab.target(PROG, arch, sanitize, tree, 'none'),
					    f'{t["name"]}, Linux {tree} without the series'))
	for b in tab.get('binaries', []):
		arch = next(t['arch'] for t in tab['targets'] if t['name'] == b['target'])
		fields = forklab.target(PROG, arch, '0', b['name'], '')
		# The package the run booted (tools/setup/binary-kernel's file).
		try:
			with open(os.path.join(os.path.dirname(fields['image']), 'package')) as f:
				package = f.read().strip()
		except OSError:
			package = f'{b["package"]} (not downloaded)'
		out.append((b['name'], '', b['target'], arch, '0', fields,
			    f'{b["target"]}, {package} ({b["name"]}\'s binary kernel)'))
	return out


def bundle(build):
	"""The viewer's JavaScript, or None."""
	path = os.environ.get('MTE_BUNDLE') or os.path.join(build, 'npm', BUNDLE)
	if not os.path.isfile(path) and not os.environ.get('MTE_BUNDLE'):
		try:
			subprocess.run(['npm', 'install', '--silent', '--prefix',
					os.path.join(build, 'npm'), f'mutation-testing-elements@{MTE_VERSION}'],
				       capture_output=True, timeout=300)
		except (OSError, subprocess.TimeoutExpired):
			return None	# no npm: the mutants as a table only
	try:
		with open(path) as f:
			return f.read()
	except OSError:
		return None


def e(text):
	return html.escape(str(text))


def export_if_stale(tree, series, arch, sanitize, res):
	"""Write the target's junit.xml and kcidb.json again (judge/export:
	the results model's verdicts) when a suite's log is newer than its
	junit.xml: after a make test, not the verdicts of an earlier make
	check."""
	logs = [os.path.join(res, log) for _, _, log in export.suite_logs()]
	newest = max((os.path.getmtime(p) for p in logs if os.path.isfile(p)), default=None)
	junit = os.path.join(res, 'junit.xml')
	if newest is None or (os.path.isfile(junit) and os.path.getmtime(junit) >= newest):
		return
	env = dict(os.environ, ARCH=arch, SANITIZE=sanitize, KERNEL=tree, SERIES=series)
	# Its error line is on stderr; the page must not show the older run.
	if subprocess.run([os.path.join(HERE, 'tools/judge/export')], env=env,
			  stdout=subprocess.DEVNULL).returncode:
		forklab.die(PROG, f'{res}: judge/export (ARCH={arch} SANITIZE={sanitize} '
			    f'KERNEL={tree} SERIES={series}) failed: no page of older results')


def results_section(res, title):
	"""A target's results from its junit.xml: a row per suite, each
	failing row with what it said; a row that failed as a live bug (the
	results model's LIVE BUG: a bug the kernel that ran has, listed in the
	expectations) is counted and listed apart, not as a failure of the
	run."""
	path = os.path.join(res, 'junit.xml')
	if not os.path.isfile(path):
		return None
	root = ET.parse(path).getroot()
	rows, failing, live, quarantined, freed = [], [], [], [], []
	live_failures = 0	# junit's failures that are live bugs, exit statuses too
	for suite in root.iter('testsuite'):
		cases = list(suite.iter('testcase'))
		bad = [c for c in cases if c.find('failure') is not None or c.find('error') is not None]
		is_live = [c for c in bad if c.find('failure') is not None and
			   (c.find('failure').get('message') or '').startswith(LIVE)]
		failed = [c for c in bad if c not in is_live]
		live_failures += len(is_live)
		# A program's own exit status after its live rows: no bug of its own.
		is_live = [c for c in is_live if not c.get('name', '').endswith(OWN_STATUS)]
		skipped = [c for c in cases if c.find('skipped') is not None]
		# A quarantined row that failed: a skip whose message says so.
		held = [c for c in skipped if (c.find('skipped').get('message') or '').startswith(QUARANTINED)]
		skipped = [c for c in skipped if c not in held]
		rows.append(f'<tr class="{"fail" if failed else "pass"}"><td>{e(suite.get("name"))}</td>'
			    f'<td>{len(cases) - len(bad) - len(skipped) - len(held)}</td><td>{len(failed)}</td>'
			    f'<td>{len(is_live)}</td><td>{len(held)}</td><td>{len(skipped)}</td></tr>')
		# A quarantined row that passed: its system-out says so.
		freed += [f'<li><b>{e(suite.get("name"))}: {e(c.get("name"))}</b>: '
			  f'{e(c.find("system-out").text or "")}</li>' for c in cases
			  if c.find('system-out') is not None and
			  (c.find('system-out').text or '').startswith(QUARANTINED)]
		for group, found in ((failing, failed), (live, is_live), (quarantined, held)):
			for c in found:
				what = c.find('failure') if c.find('failure') is not None else c.find('error')
				if what is None:
					what = c.find('skipped')
				group.append(f'<li><b>{e(suite.get("name"))}: {e(c.get("name"))}</b>'
					     f'<pre>{e((what.text or what.get("message") or "")[-2000:])}</pre></li>')
	out = [f'<h3>{e(title)}</h3>', f'<p>{e(root.get("name", ""))}: {e(root.get("tests"))} results, '
	       f'{int(root.get("failures", 0)) - live_failures} failed, {len(live)} live bugs of the '
	       f'kernel that ran, {e(root.get("errors"))} did not complete'
	       f'{f", {len(quarantined)} quarantined failed" if quarantined else ""}.</p>',
	       '<table class="results"><tr><th>suite</th><th>passed</th><th>failed</th>'
	       '<th>live bugs</th><th>quarantined</th><th>skipped</th></tr>',
	       *rows, '</table>']
	if failing:
		out += ['<ul class="failing">', *failing, '</ul>']
	if live:
		out += ['<p>Live bugs (rows that fail for a fix this kernel lacks):</p>',
			'<ul class="live">', *live, '</ul>']
	if quarantined:
		out += ['<p>Quarantined rows that failed (configs/quarantine: they fail without '
			'a kernel change):</p>', '<ul class="quarantined">', *quarantined, '</ul>']
	if freed:
		out += ['<p>Quarantined rows that passed (each may leave the quarantine):</p>',
			'<ul class="freed">', *freed, '</ul>']
	return '\n'.join(out)


def function_lines(info):
	"""{function: (source file, line)} from an lcov tracefile's FN records."""
	found, sf = {}, None
	with open(info, errors='replace') as f:
		for line in f:
			if line.startswith('SF:'):
				sf = line[3:].strip()
			elif line.startswith('FN:') and sf:
				parts = line[3:].strip().split(',')
				found.setdefault(parts[-1], (sf, int(parts[0])))
	return found


def measured(test):
	"""A coverage test's figures as export wrote them: covered/total and
	the share where something was counted; its status (MISS: the
	function never ran) where nothing was."""
	misc = test.get('misc')
	if not misc:
		return test['status']
	text = f'{misc["covered"]}/{misc["total"]}'
	return text + (f' ({test["number"]["value"]} %)' if 'number' in test else '')


def coverage_section(res, tree_dir, report_dir, title):
	kcidb, info = os.path.join(res, 'kcidb.json'), os.path.join(res, 'coverage', 'forklab.info')
	if not os.path.isfile(kcidb):
		return None
	tests = [t for t in json.load(open(kcidb))['tests'] if t['path'].startswith('coverage.')]
	if not tests:
		return None
	where = function_lines(info) if os.path.isfile(info) else {}
	rows, by_function = [], {}
	for t in tests:
		_, function, measure = t['path'].split('.', 2)
		by_function.setdefault(function, {})[measure] = t
	for function, m in by_function.items():
		link = e(function)
		if function in where:
			sf, line = where[function]
			page = os.path.join(res, 'coverage', 'html', os.path.relpath(sf, tree_dir) + '.gcov.html')
			if os.path.isfile(page):
				link = f'<a href="{e(os.path.relpath(page, report_dir))}#{line}">{e(function)}</a>'
		cells = ''.join(f'<td>{e(measured(m[k]))}</td>' if k in m else '<td></td>'
				for k in ('lines', 'branches'))
		status = 'pass' if all(x['status'] == 'PASS' for x in m.values()) else 'fail'
		rows.append(f'<tr class="{status}"><td>{link}</td>{cells}<td>{status}</td></tr>')
	return '\n'.join([f'<h3>{e(title)}</h3>',
			  '<table class="coverage"><tr><th>function</th><th>lines</th><th>branches</th><th>gate</th></tr>',
			  *rows, '</table>'])


def mutants_section(res, title, js, n):
	path = os.path.join(res, 'mutate', 'mutation-report.json')
	if not os.path.isfile(path):
		return None
	with open(path) as f:
		report = json.load(f)
	mutants = [m for f in report['files'].values() for m in f['mutants']]
	# As run/mutants judges: caught (Timeout: by a kernel that hung) or
	# declared equivalent is as expected; every other status failed it.
	rows = ''.join(f'<tr class="{"pass" if m["status"] in ("Killed", "Timeout", "Ignored") else "fail"}">'
		       f'<td>{e(m["id"])}</td><td>{e(m["status"])}</td><td>{e(m.get("statusReason", ""))}</td></tr>'
		       for m in mutants)
	out = [f'<h3>{e(title)}</h3>',
	       f'<table class="mutants" id="mutants-{n}"><tr><th>mutant</th><th>status</th><th>why</th></tr>{rows}</table>']
	if js:
		data = json.dumps(report).replace('</', '<\\/')
		out += [f'<mutation-test-report-app id="mte-{n}" title-postfix="{e(title)}"></mutation-test-report-app>',
			f'<script>document.getElementById("mte-{n}").report = {data};</script>']
	return '\n'.join(out)


def comparisons(build):
	"""[(title, path)]: make compare's JSON, then make differences'."""
	out = []
	if os.path.isfile(os.path.join(build, 'compare.json')):
		out.append(('make compare', os.path.join(build, 'compare.json')))
	for path in sorted(glob.glob(os.path.join(build, 'compare', '*.json'))):
		out.append((f'make differences: {os.path.basename(path)[:-5]}', path))
	return out


def compare_section(title, path):
	"""One comparison (tools/lib/forklab/compare.py's JSON): its runs,
	a row per suite with the counts of each kind of change, and each
	changed row; a row B fails is marked failed, one B fixed passed."""
	try:
		with open(path) as f:
			doc = json.load(f)
		kinds = list(doc['counts'])
		suites = doc['suites']
	except (OSError, ValueError, KeyError, TypeError) as err:
		forklab.die(PROG, f'{path}: not a comparison of judge/compare ({err})')
	head = ''.join(f'<th>{e(k)}</th>' for k in kinds)
	rows, changed = [], []
	for name, s in suites.items():
		rows.append(f'<tr class="{"fail" if s["regressions"] else "pass"}"><td>{e(name)}</td>'
			    f'<td>{e("-" if s["rows_a"] is None else s["rows_a"])}</td>'
			    f'<td>{e("-" if s["rows_b"] is None else s["rows_b"])}</td>' +
			    ''.join(f'<td>{s["counts"].get(k, 0)}</td>' for k in kinds) +
			    f'<td>{s["regressions"]}</td></tr>')
		for c in s['rows']:
			cls = 'fail' if c['regression'] or c['kind'] == 'PASS->FAIL' else \
				'pass' if c['kind'] == 'FAIL->PASS' else 'change'
			verdict = [f'{v or "none"}' + (f' ({why})' if why else '')
				   for v, why in ((c['a'], c['why_a']), (c['b'], c['why_b']))]
			changed.append(f'<tr class="{cls}"><td>{e(name)}</td><td>{e(c["kind"])}</td>'
				       f'<td>{e(c["path"])}</td><td>{e(verdict[0])}</td><td>{e(verdict[1])}</td>'
				       f'<td>{"regression" if c["regression"] else ""}</td></tr>')
	left = doc.get('left_out') or {}
	out = [f'<h3>{e(title)}</h3>',
	       f'<p>A: {e(doc.get("a"))}<br>B: {e(doc.get("b"))}<br>'
	       f'{sum(doc["counts"].values())} rows changed, {doc["regressions"]} '
	       f'regression{"s" * (doc["regressions"] != 1)} in B.</p>',
	       f'<table class="compare"><tr><th>suite</th><th>rows in A</th><th>rows in B</th>{head}'
	       '<th>regressions</th></tr>', *rows, '</table>']
	if left:
		out.append('<p>Not compared: ' + ', '.join(f'{e(n)} (in {e(r)} only)'
							   for n, r in left.items()) + '.</p>')
	if changed:
		out += ['<table class="changes"><tr><th>suite</th><th>change</th><th>row</th>'
			'<th>A</th><th>B</th><th></th></tr>', *changed, '</table>']
	return '\n'.join(out)


def main():
	forklab.ArgumentParser(prog=PROG, description=__doc__.split('\n\n')[0]).parse_args()
	build = os.environ.get('BUILD') or os.path.join(HERE, 'build')
	report_dir = os.path.join(build, 'report')
	os.makedirs(report_dir, exist_ok=True)
	results, coverage, mutants = [], [], []
	js = None
	for n, (tree, series, name, arch, sanitize, t, title) in enumerate(targets()):
		res = t['res']
		export_if_stale(tree, series, arch, sanitize, res)
		r = results_section(res, title)
		if r:
			results.append(r)
		c = coverage_section(res, t['tree'], report_dir, title)
		if c:
			coverage.append(c)
		if os.path.isfile(os.path.join(res, 'mutate', 'mutation-report.json')) and js is None:
			js = bundle(build) or ''
		m = mutants_section(res, title, js, n)
		if m:
			mutants.append(m)
	if not results:
		forklab.die(PROG, f'no results under {build}: run make check first')
	compared = [compare_section(title, path) for title, path in comparisons(build)]
	plots = [p for p in sorted(glob.glob(os.path.join(HERE, 'docs', '*.png')))]
	page = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
		'<title>forklab report</title>',
		'<style>body{font-family:sans-serif;margin:2em;max-width:80em}'
		'table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em}'
		'tr.fail td{background:#fdd}tr.pass td:first-child{background:#dfd}'
		'tr.change td:first-child{background:#ffd}'
		'pre{white-space:pre-wrap;background:#f6f6f6;padding:.4em}</style>',
		f'<script>{js}</script>' if js else '',
		'</head><body>', '<h1>forklab: the last runs</h1>',
		'<h2 id="results">Results by suite</h2>', *results,
		'<h2 id="coverage">Coverage gate</h2>',
		*(coverage or ['<p>No coverage yet: make check (or make coverage).</p>']),
		'<h2 id="mutants">Mutants</h2>',
		*(mutants or ['<p>No mutation report yet: make mutate.</p>']),
		'<h2 id="compare">Comparisons</h2>',
		*(compared or ['<p>No comparison yet: make compare A=... B=..., or make differences.</p>']),
		'<h2 id="bench">Bench</h2>',
		*([f'<img alt="{e(os.path.basename(p))}" src="{e(os.path.relpath(p, report_dir))}" width="640">'
		   for p in plots] or ['<p>No plots: make bench.</p>']),
		'</body></html>']
	dest = os.path.join(report_dir, 'index.html')
	with open(dest + '.tmp', 'w') as f:
		f.write('\n'.join(page) + '\n')
	os.replace(dest + '.tmp', dest)
	print(f'{PROG}: wrote {dest} ({len(results)} result sets, {len(mutants)} mutation reports, '
	      f'{len(compared)} comparisons)')


if __name__ == '__main__':
	main()
