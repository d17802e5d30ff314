# SPDX-License-Identifier: GPL-2.0
"""judge/live-reports: each live bug of the last runs, written as the
people who fix it take it (docs/upstream.md): a stable backport request
per tree and a Debian bug report per binary kernel.

A live bug is a row the results model judged LIVE BUG in a run on a
kernel without forklab's series (a tree built with SERIES=none, a
binary kernel: its kcidb.json), its expectations line naming the
upstream fix the kernel lacks ('ROW # LIVE <id> missing ...'). For each
fix and tree:

  OUT/stable/<tree>.y/<backport>  the tree's backport of the fix from
        its series (patches/, patches/6.1/: the patch whose message says
        'commit <id> upstream.'), as git format-patch wrote it, with the
        subject '[PATCH <tree>.y]', In-Reply-To: the stable FAILED mail
        its museum exhibit's Verified: line cites for the tree, and
        below '---' what the rows printed before (each kernel without
        the series that ran) and after (forklab's kernel of the tree,
        which carries the backport, on the same architecture)
  OUT/debian/<package>-<id>.txt   for a binary kernel: the report
        reportbug would mail (To:, Subject:, the pseudo-header
        Package:/Version: from the run), with the rows' output on the
        shipped binary, the fix and the backport

OUT (default patches/) keeps only what these runs show: a fix that no
run shows missing any more leaves with the next run. Nothing is sent.

Exit status 0; 1 with one error line when no run of a kernel without
the series is there to read, or a live bug has no backport in its
tree's series or no exhibit; 2 on a bad argument.
"""

import glob
import json
import os
import re
import shutil
import sys
import textwrap

import forklab
from forklab import museum_report, results, table

PROG = 'judge/live-reports'
HERE = forklab.HERE
# The results model's verdict, and the row of a program's own exit status.
LIVE, OWN_STATUS = results.LIVE, results.OWN_STATUS


def read_run(path):
	"""A run's kcidb.json as {kernel, tree, arch, package, version,
	tests: {name: test}}; None if there is no such file."""
	try:
		with open(path) as f:
			doc = json.load(f)
	except FileNotFoundError:
		return None
	except (OSError, ValueError) as e:
		forklab.die(PROG, f'{path}: {e}')
	try:
		checkout, build = doc['checkouts'][0], doc['builds'][0]
		misc = checkout.get('misc', {})
		version = misc['kernel_version']
	except (KeyError, IndexError) as e:
		forklab.die(PROG, f'{path}: not a kcidb.json of judge/export (no {e})')
	tree = next((t for t in table.trees() if version.startswith(t + '.')), None)
	if tree is None:
		forklab.die(PROG, f'{path}: Linux {version} is no tree of forklab\'s '
			    f'(want: {" ".join(table.trees())})')
	package = misc.get('package')
	if package:
		kernel = f'{package} {misc["package_version"]}'
	elif checkout.get('patchset_hash'):
		kernel = f'forklab {version}'
	else:
		kernel = f'Linux {version} without forklab\'s series'
	return {'kernel': kernel, 'tree': tree, 'arch': build['architecture'],
		'package': package, 'package_version': misc.get('package_version'),
		'version': version, 'series': bool(checkout.get('patchset_hash')),
		'path': path,
		'tests': {t['misc']['name']: t for t in doc['tests'] if 'name' in t.get('misc', {})}}


def default_runs():
	"""(before, after): the kcidb.json of each kernel without the series
	(each tree's SERIES=none targets, each binary kernel) and of
	forklab's kernel of each tree on each target."""
	tab = table.load()
	before, after = [], []
	for tree in table.trees():
		for t in tab['targets']:
			if t['sanitize']:
				continue
			res = forklab.target(PROG, t['arch'], '0', tree, '')['res']
			after.append(os.path.join(res, 'kcidb.json'))
			if t['unpatched']:
				res = forklab.target(PROG, t['arch'], '0', tree, 'none')['res']
				before.append(os.path.join(res, 'kcidb.json'))
	for b in tab.get('binaries', []):
		arch = next(t['arch'] for t in tab['targets'] if t['name'] == b['target'])
		res = forklab.target(PROG, arch, '0', b['name'], '')['res']
		before.append(os.path.join(res, 'kcidb.json'))
	return before, after


def live_rows(run):
	"""{upstream id: [(row, its output lines)]} of a run's live bugs."""
	bugs = {}
	for name, test in sorted(run['tests'].items()):
		if test['misc'].get('verdict') != LIVE or name.endswith(OWN_STATUS):
			continue
		lines = test.get('log_excerpt', '').split('\n')
		why = next((line for line in lines if line.startswith(LIVE + ' (')), '')
		m = re.match(re.escape(LIVE) + r' \(([0-9a-f]{12,40})\b', why)
		if not m:
			forklab.die(PROG, f'{run["path"]}: {name}: a live bug without the upstream '
				    f'id it lacks (configs/expected: \'ROW # LIVE <id> missing\')')
		said = [line for line in lines if line and line != why]
		bugs.setdefault(m.group(1), []).append((name, said))
	return bugs


def series_patches(tree):
	"""The patches of a tree's series, in order."""
	d = os.path.join(HERE, table.tree(tree)['patches'])
	with open(os.path.join(d, 'series')) as f:
		names = [line.split('#')[0].strip() for line in f]
	return [os.path.join(d, n) for n in names if n]


def backport(tree, fix):
	"""The patch of the tree's series that backports FIX ('commit <id>
	upstream.' in its message); dies if none."""
	for path in series_patches(tree):
		with open(path, errors='backslashreplace') as f:
			head = f.read().split('\n---\n', 1)[0]
		m = re.search(r'^commit ([0-9a-f]{12,40}) upstream\.$', head, re.M)
		if m and (m.group(1).startswith(fix) or fix.startswith(m.group(1))):
			return path
	forklab.die(PROG, f'{fix}: a live bug of Linux {tree} without a backport in '
		    f'{table.tree(tree)["patches"]}/series (no \'commit {fix}... upstream.\')')


def exhibit(tree, fix):
	"""(name, header fields) of the museum exhibit that reverses FIX on
	TREE; dies if none."""
	for path in sorted(glob.glob(os.path.join(HERE, 'museum', '*.patch'))):
		fields, _ = museum_report.header(path)
		ids = [f.split()[0] for f in fields['Fix'] if f.split()]
		if fix[:12] in (i[:12] for i in ids) and tree in table.header(path, 'Trees'):
			return os.path.basename(path)[:-len('.patch')], fields
	forklab.die(PROG, f'{fix}: a live bug of Linux {tree} with no exhibit in museum/')


def failed_mail(fields, tree):
	"""The Message-ID of the FAILED mail for TREE's stable tree that the
	exhibit's Verified: line cites, or None."""
	m = re.search(r'failed to apply to ' + re.escape(tree) + r'-stable tree"'
		      r'[^;]*?Message-ID ([^\s)]+)', fields.get('Verified', ''))
	return m.group(1) if m else None


def indent(lines, prefix='    '):
	return [prefix + line if line else '' for line in lines]


def outcome(run, row):
	"""What a row printed in a run, as lines: its verdict first."""
	test = run['tests'].get(row)
	if test is None:
		return ['not in this run']
	verdict = test['misc'].get('verdict', test.get('status', '?'))
	said = [line for line in test.get('log_excerpt', '').split('\n')
		if line and not line.startswith(LIVE + ' (')]
	return [verdict] + said


def evidence(fix, rows, befores, after, how):
	"""The lines that show the bug and its fix: each row before, on each
	kernel without the series, and after, on forklab's kernel."""
	out = []
	for row, _ in rows:
		out.append(f'{row}:')
		for run in befores:
			out += indent([f'{run["kernel"]} ({run["arch"]}): ' + outcome(run, row)[0]]
				      + indent(outcome(run, row)[1:], '  '), '  ')
		if after:
			out += indent([f'{after["kernel"]} ({after["arch"]}, with this '
				       f'{how}): ' + outcome(after, row)[0]]
				      + indent(outcome(after, row)[1:], '  '), '  ')
		else:
			out.append('  forklab\'s own kernel of the tree: not run on this architecture')
	return out


def stable_request(path, tree, fix, rows, befores, after, name, fields):
	"""The backport as a mail to stable@: '[PATCH <tree>.y]', the FAILED
	mail it answers, and below '---' the rows before and after."""
	with open(path, errors='backslashreplace') as f:
		text = f.read()
	head, sep, rest = text.partition('\n---\n')
	if not sep:
		forklab.die(PROG, f'{os.path.relpath(path, HERE)}: no \'---\' line')
	head = re.sub(r'^Subject: \[PATCH[^]]*\]', f'Subject: [PATCH {tree}.y]', head,
		      count=1, flags=re.M)
	headers, _, body = head.partition('\n\n')
	headers += '\nTo: stable@vger.kernel.org'
	if not text.isascii() and 'Content-Type:' not in headers:
		# As git format-patch writes a mail that is not ASCII.
		headers += ('\nMIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8'
			    '\nContent-Transfer-Encoding: 8bit')
	reply = failed_mail(fields, tree)
	if reply:
		headers += f'\nIn-Reply-To: <{reply}>'
	notes = textwrap.wrap(f'Written by tools/judge/live-reports (make live-reports) from '
			      f'{os.path.relpath(path, HERE)} and the runs of the kernels below.',
			      72, break_on_hyphens=False) + ['']
	if reply:
		notes += textwrap.wrap(f'The upstream commit failed to apply to {tree}-stable; '
				       f'this answers that mail (<{reply}>).', 72) + ['']
	notes += textwrap.wrap(
		f'{fix[:12]} is missing from {", ".join(sorted({r["kernel"] for r in befores}))}. '
		f'These rows of forklab\'s suites fail without it and pass with this '
		f'backport, on each kernel as it ran (museum/{name}.patch reverses it; '
		f'its reproducer: {fields["Reproducer"]}):', 72, break_on_hyphens=False) + ['']
	notes += evidence(fix, rows, befores, after, 'patch') + ['']
	return f'{headers}\n\n{body}\n---\n' + '\n'.join(notes) + '\n' + rest


def debian_report(run, fix, rows, bp, after, name, fields):
	"""reportbug's mail for a live bug of a Debian binary kernel."""
	subject = fields['Fix'][0].split(' ', 1)[1].strip(' ()"')
	out = ['To: submit@bugs.debian.org',
	       f'Subject: {run["package"]}: fork(): upstream {fix[:12]} ("{subject}") missing',
	       '', 'Package: src:linux', f'Version: {run["package_version"]}',
	       'Severity: important', 'Tags: patch upstream', '',
	       'Dear Maintainer,', '']
	out += textwrap.wrap(
		f'{run["package"]} {run["package_version"]}, booted under QEMU ({run["arch"]}) '
		f'by forklab\'s make check KERNEL=debian, fails these rows of its '
		f'suites: the kernel lacks upstream commit {fix[:12]}, '
		f'{fields["Exhibit"][0].lower()}{fields["Exhibit"][1:]}.', 72, break_on_hyphens=False) + ['']
	out += ['Upstream fix:'] + indent([f for f in fields['Fix']], '  ')
	out += ['', 'What the shipped binary printed:', '']
	out += evidence(fix, rows, [run], after, 'backport') + ['']
	out += textwrap.wrap(
		f'A backport for {run["tree"]} is attached '
		f'({os.path.relpath(bp, HERE)} in forklab; '
		f'the same is offered to {run["tree"]}.y stable). '
		f'To reproduce: forklab\'s "make check KERNEL=debian" downloads the package '
		f'with apt-get download, boots it under QEMU with the suite in an initramfs '
		f'and lists each live bug; museum/{name}.patch says more.', 72, break_on_hyphens=False)
	out += ['', '-- Package-specific info:',
		f'Kernel: {run["package"]} {run["package_version"]} (Linux {run["version"]}), '
		f'{run["arch"]}, a QEMU (TCG) guest booted by forklab; not the reporter\'s host kernel',
		f'Result: {os.path.relpath(run["path"], HERE)}', '']
	return '\n'.join(out)


def slug(text):
	return re.sub(r'[^A-Za-z0-9.]+', '-', text).strip('-')


def main():
	ap = forklab.ArgumentParser(prog=PROG, description=__doc__.split('\n\n')[0])
	ap.add_argument('--before', nargs='+', metavar='KCIDB', help='kcidb.json of runs on '
			'kernels without the series (default: every such target\'s and binary\'s)')
	ap.add_argument('--after', nargs='+', metavar='KCIDB', help='kcidb.json of runs on '
			'forklab\'s kernels (default: every tree\'s targets\')')
	ap.add_argument('--out', default=os.path.join(HERE, 'patches'),
			help='where stable/ and debian/ are written (default: patches/)')
	args = ap.parse_args()
	before, after = default_runs()
	befores = [r for r in map(read_run, args.before or before) if r]
	afters = [r for r in map(read_run, args.after or after) if r]
	if args.before and len(befores) < len(args.before):
		forklab.die(PROG, 'a --before file does not exist')
	if not befores:
		forklab.die(PROG, 'no run of a kernel without forklab\'s series: run make check '
			    'KERNEL=debian, or SERIES=none make check ARCH=x86_64')
	for r in befores:
		if r['series']:
			forklab.die(PROG, f'{r["path"]}: a run of forklab\'s kernel, not of one '
				    f'without the series')
	stable, debian = {}, {}
	for run in befores:
		for fix, rows in live_rows(run).items():
			bp = backport(run['tree'], fix)
			name, fields = exhibit(run['tree'], fix)
			after = next((a for a in afters if a['series'] and a['tree'] == run['tree']
				      and a['arch'] == run['arch']), None)
			key = (run['tree'], fix)
			entry = stable.setdefault(key, [bp, {}, [], after, name, fields])
			for row in rows:
				entry[1].setdefault(row[0], row)
			entry[2].append(run)
			if run['package']:
				debian[run['package'], fix] = debian_report(run, fix, rows, bp, after,
									    name, fields)
	tmp = args.out.rstrip('/') + '/.live-reports.tmp'
	shutil.rmtree(tmp, ignore_errors=True)
	for (tree, fix), (bp, rows, runs, after, name, fields) in sorted(stable.items()):
		d = os.path.join(tmp, 'stable', f'{tree}.y')
		os.makedirs(d, exist_ok=True)
		with open(os.path.join(d, os.path.basename(bp)), 'w') as f:
			f.write(stable_request(bp, tree, fix, list(rows.values()), runs, after,
					       name, fields))
	for (package, fix), text in sorted(debian.items()):
		d = os.path.join(tmp, 'debian')
		os.makedirs(d, exist_ok=True)
		with open(os.path.join(d, f'{slug(package)}-{fix[:12]}.txt'), 'w') as f:
			f.write(text)
	for part in ('stable', 'debian'):
		final = os.path.join(args.out, part)
		shutil.rmtree(final, ignore_errors=True)
		if os.path.isdir(os.path.join(tmp, part)):
			os.rename(os.path.join(tmp, part), final)
	shutil.rmtree(tmp, ignore_errors=True)
	for (tree, fix), entry in sorted(stable.items()):
		print(f'{PROG}: {fix[:12]} on {tree}: {len(entry[1])} row(s), '
		      f'{tree}.y request from {os.path.relpath(entry[0], HERE)}')
	print(f'{PROG}: {len(stable)} stable request(s), {len(debian)} Debian report(s) '
	      f'in {os.path.relpath(args.out, HERE)}/stable/ and debian/')
	return 0


if __name__ == '__main__':
	sys.exit(main())
