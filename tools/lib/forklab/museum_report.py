# SPDX-License-Identifier: GPL-2.0
"""judge/museum-report: docs/MUSEUM.md, on standard output, from the
exhibits' own headers (museum/*.patch, docs/museum.md) and the last
'make museum' of each target on each tree (RES/museum/results.tsv and
clean.tsv, RES as tools/lib/target says for each tree KERNEL= names): a row
per exhibit, target and tree it is reverted on, a column per tree for
its reproducer on forklab's kernel of that tree, and a column per
kernel without forklab's series (each tree's source built with
SERIES=none, each binary kernel: their last 'make museum'), named as
that run named the kernel; then the accelerator each QEMU run recorded
(RES/museum/accel). "Live bugs" lists the reproducers that fail on
those kernels. What a target's last run did not reach says "not
run"; results are those of the last run, whatever the exhibits said
then.

Exit status 0; 1 with one error line if an exhibit's header is not whole.
"""

import datetime
import glob
import os

import forklab
from forklab import table

PROG = 'judge/museum-report'
HERE = forklab.HERE
ONE = ['Exhibit', 'Year', 'CVE', 'Report', 'Verified', 'Revert', 'Reproducer',
       'Caught-by']



def header(path):
	"""The Key: value lines of an exhibit (Fix: may repeat), its free text."""
	fields, text = {'Fix': []}, []
	with open(path, errors='backslashreplace') as f:
		lines = f.read().split('\n')
	in_header, last = True, None
	for line in lines:
		if line.startswith('--- ') or line.startswith('diff '):
			break
		key, sep, value = line.partition(': ')
		if in_header and not line.strip():
			in_header = False
		elif in_header and sep and key.replace('-', '').isalpha() and ' ' not in key:
			if key == 'Fix':
				fields['Fix'].append(value.strip())
			else:
				fields[key] = value.strip()
			last = key
		elif in_header and last:
			# a value continued on the next line
			if last == 'Fix':
				fields['Fix'][-1] += ' ' + line.strip()
			else:
				fields[last] += ' ' + line.strip()
		elif line.strip() or text:
			text.append(line)
	name = os.path.basename(path)[:-len('.patch')]
	for key in ONE:
		if key not in fields:
			forklab.die(PROG, f"{name}: no '{key}:' line (docs/museum.md)")
	if not fields['Fix']:
		forklab.die(PROG, f"{name}: no 'Fix:' line (docs/museum.md)")
	while text and not text[-1].strip():
		text.pop()
	return fields, '\n'.join(text)


def tsv(path):
	"""{name: fields} of a tab-separated results file, {} if none."""
	rows = {}
	if os.path.isfile(path):
		with open(path, errors='backslashreplace') as f:
			for line in f:
				parts = line.rstrip('\n').split('\t')
				rows[parts[0]] = parts[1:]
	return rows


def accel(d):
	"""QEMU's accelerator a run recorded in its museum directory
	(kvm, tcg), '' for none (UML, or not run)."""
	try:
		with open(os.path.join(d, 'accel')) as f:
			return f.read().strip()
	except OSError:
		return ''


def tree_version(tree, runs_dirs):
	"""The version the tree's last museum run wrote (RES/museum/version),
	else the prepared tree's, else the tree's name."""
	for d in runs_dirs:
		try:
			with open(os.path.join(d, 'version')) as f:
				return f.read().strip()
		except OSError:
			pass
	return forklab.tree_version(forklab.target(PROG, 'um', '0', tree, '')['tree']) or tree


def unmodified(clean, name, reverted_there):
	"""The cell of a reproducer's run on a tree's unmodified kernel: a
	skip is a failure for an exhibit reverted on that tree."""
	if name not in clean:
		return 'not run'
	status, line = (clean[name] + ['', ''])[:2]
	if status == '0':
		return 'clean'
	if status in ('skip', 'none') and not reverted_there:
		return line
	return f'FAILS: {line}'


def without_series(trees):
	"""[(name, target, clean.tsv's rows, accelerator)] of the kernels
	forklab runs without its series: each tree's source built as it is
	(SERIES=none) on each target that builds one, then each binary
	kernel; name is what the kernel's last run wrote (RES/museum/
	version), else what would run."""
	tab = table.load()
	runs = []
	for tree in trees:
		for t in tab['targets']:
			if t['unpatched']:
				res = forklab.target(PROG, t['arch'], str(t['sanitize']), tree, 'none')['res']
				runs.append((f'Linux {tree} without the series', t['name'],
					     os.path.join(res, 'museum')))
	for b in tab.get('binaries', []):
		arch = next(t['arch'] for t in tab['targets'] if t['name'] == b['target'])
		res = forklab.target(PROG, arch, '0', b['name'], '')['res']
		runs.append((b['name'], b['target'], os.path.join(res, 'museum')))
	out = []
	for name, target, d in runs:
		try:
			with open(os.path.join(d, 'version')) as f:
				name = f.read().strip() or name
		except OSError:
			pass
		out.append((name, target, tsv(os.path.join(d, 'clean.tsv')), accel(d)))
	return out


def as_is(clean, name):
	"""The cell of a reproducer on a kernel without the series: a
	failure is a live bug of that kernel."""
	if name not in clean:
		return 'not run'
	status, line = (clean[name] + ['', ''])[:2]
	if status == '0':
		return 'clean'
	if status in ('skip', 'none'):
		return line
	return f'LIVE BUG: {line}'


def cell(text):
	return text.replace('|', '\\|').replace('\n', ' ') if text else ''


def main():
	forklab.ArgumentParser(prog=PROG, description=__doc__.split('\n\n')[0]).parse_args()
	museum = os.environ.get('MUSEUM', os.path.join(HERE, 'museum'))
	exhibits = sorted(glob.glob(os.path.join(museum, '*.patch')))
	if not exhibits:
		forklab.die(PROG, f'no exhibit in {museum}')
	TREES = table.trees()
	runs, dirs, accels = {}, {tree: [] for tree in TREES}, []
	for tree in TREES:
		for name, arch, sanitize in forklab.targets(PROG, tree):
			d = os.path.join(forklab.target(PROG, arch, sanitize, tree, '')['res'], 'museum')
			dirs[tree].append(d)
			accels.append((name, tree, accel(d)))
			runs[name, tree] = (tsv(os.path.join(d, 'results.tsv')),
					    tsv(os.path.join(d, 'clean.tsv')))
	versions = {tree: tree_version(tree, dirs[tree]) for tree in TREES}
	plain = without_series(TREES)

	v = versions
	out = ['# The museum of real fork bugs', '',
	       '<!-- Written by tools/judge/museum-report (make museum; make museum',
	       'ARCH=x86_64; make museum SANITIZE=1; each with KERNEL= each tree): edit',
	       'museum/*.patch, not this file. -->', '',
	       'Each exhibit is an upstream fix reversed at Debian\'s Linux',
	       ' or '.join(f'{v[t]} ({table.tree(t)["package"]})' for t in TREES) + ': a row',
	       'per tree it is reversed on, with the reproducer that shows the bug.',
	       '"Caught by" is the first failing rows of the suites on that kernel',
	       '(the row the exhibit names must be among them); "shown" is what the',
	       'reproducer printed there; the last two columns are the same program',
	       'on forklab\'s own kernel of each tree, whatever the tree the exhibit',
	       'is reversed on: a failure there is a bug that tree still has. The',
	       'columns after them are the reproducer on kernels without forklab\'s',
	       'series, named as they ran: each tree\'s source built as it is',
	       '(`make museum ARCH=x86_64 SERIES=none`, with `KERNEL=` each tree)',
	       'and Debian\'s binary kernel (`make museum KERNEL=debian`); a failure',
	       'there is a live bug of that kernel ([Live bugs](#live-bugs)). How to',
	       'add one: [museum.md](museum.md).', '',
	       f'Generated {datetime.date.today().isoformat()}.', '',
	       # Named for the kernels that ran: forklab's, with its series
	       # (backports included), not an unmodified Debian kernel.
	       '| exhibit | upstream fix | year | CVE | target | tree | caught by | reproducer shows | '
	       + ''.join(f'forklab {v[t]} | ' for t in TREES)
	       + ''.join(f'{cell(name)} | ' for name, _, _, _ in plain) + 's |',
	       '|---------|--------------|------|-----|--------|------|-----------|------------------|'
	       + '------|' * (len(TREES) + len(plain)) + '---|']
	details, live = [], []
	for path in exhibits:
		name = os.path.basename(path)[:-len('.patch')]
		f, text = header(path)
		try:
			targets = table.header(path, 'Targets')
			trees = table.header(path, 'Trees')
		except table.TableError as e:
			forklab.die(PROG, str(e))
		fixes = '; '.join(f['Fix'])
		for arch in targets:
			cleans = [unmodified(runs.get((arch, t), ({}, {}))[1], name, t in trees)
				  for t in TREES]
			for tree in trees:
				results = runs.get((arch, tree), ({}, {}))[0]
				if name in results:
					result, secs, failed, _, shows = (results[name] + [''] * 5)[:5]
					killed = result in ('killed', 'hung')
					caught = failed.split(';')[0] if killed else f'{result}: {failed.split(";")[0]}'
					if f['Caught-by'] and killed:
						caught = next((r for r in failed.split(';')
							       if table.caught_by(f['Caught-by'], r)), caught)
				else:
					secs, caught, shows = '', 'not run', 'not run'
				out.append(f'| [{name}](#{name}) | {cell(fixes)} | {f["Year"]} | {f["CVE"]} | {arch} | '
					   f'{versions[tree]} | {cell(caught)} | {cell(shows)} | '
					   + ''.join(f'{cell(c)} | ' for c in cleans)
					   + ''.join(f'{cell(as_is(clean, name) if target == arch else "n/a")} | '
						     for _, target, clean, _ in plain)
					   + f'{secs} |')
		for kernel, target, clean, _ in plain:
			if target in targets and as_is(clean, name).startswith('LIVE BUG'):
				live.append(f'- [{name}](#{name}) ({cell(fixes)}) on {kernel}: '
					    f'{cell(clean[name][1])}')
		details += [f'### {name}', '', f'{f["Exhibit"]}', '']
		details += [f'- Fix: {fx}' for fx in f['Fix']]
		details += [f'- CVE: {f["CVE"]}', f'- Report: {f["Report"]}',
			    f'- Verified: {f["Verified"]}', f'- Revert: {f["Revert"]}',
			    f'- Trees: {" ".join(versions[t] for t in trees)}',
			    f'- Reproducer: `{f["Reproducer"]}`',
			    f'- Caught by: `{f["Caught-by"]}`', '']
		if 'Live-in' in f:
			# A claim of the exhibit's header, checked when it was
			# written (Verified:); no run of this page booted an
			# unmodified kernel, so the page does not present it as
			# a result.
			details += [f'- Live in, as the exhibit says (not a result of '
				    f'this run): {f["Live-in"]}']
		if text:
			details += ['', text]
		details += ['']
	# The accelerator each QEMU run booted its reproducers under, as the
	# run recorded it (RES/museum/accel): nothing a row shows may
	# depend on it, and the reader can check that.
	under = [f'forklab {versions[tree]} on {name}: {a}' for name, tree, a in accels if a] + \
		[f'{cell(kernel)}: {a}' for kernel, _, _, a in plain if a]
	if under:
		out += ['', 'QEMU\'s accelerator in these runs: ' + '; '.join(under) + '.']
	out += ['', '## Live bugs', '',
		'The reproducers that failed on a kernel without forklab\'s series in',
		'its last run, with that kernel as the run named it: a bug the kernel',
		'has. A later kernel with the fix leaves this list by itself.', '']
	ran = [kernel for kernel, _, clean, _ in plain if clean]
	if live:
		out += live
	elif ran:
		out += [f'None: every reproducer was clean or skipped on {", ".join(ran)}.']
	else:
		out += ['None known: no kernel without forklab\'s series has run the',
			'reproducers yet.']
	out += ['']
	# Candidates that were tried and did not show a bug: museum/not-shown.md,
	# written by hand (what was run, on which kernel, how often).
	not_shown = os.path.join(museum, 'not-shown.md')
	if os.path.isfile(not_shown):
		with open(not_shown) as f:
			out += ['## Candidates not shown', '',
				'Suspected bugs that a run did not confirm (museum/not-shown.md):', '',
				f.read().rstrip('\n'), '']
	out += ['## The exhibits', ''] + details
	print('\n'.join(out).rstrip('\n'))


if __name__ == '__main__':
	main()
