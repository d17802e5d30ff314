# SPDX-License-Identifier: GPL-2.0
"""judge/mutation-report: the last make mutate as a mutation testing
report in Stryker's schema (mutation-testing-report-schema, vendored in
tools/judge/schemas/), which Stryker's viewer (mutation-testing-elements)
and other tools read: RES/mutate/mutation-report.json.

A mutant per patch of mutants/ that the run reached (RES/mutate/
results.tsv): its file and the lines its first hunk removes (or, a hunk
that only adds, the line it adds before), found in the unmutated source
where the hunk's old side is (a hunk applies at an offset), its Mutant:
(an exhibit's Exhibit:) text as the description and its added lines as the replacement; status Killed (the
suites failed; killedBy: the rows that did), Timeout (killed by a
kernel that hung: a suite's timeout), Survived, NoCoverage (survived,
and make check's gcov counted each of its lines 0 times:
RES/coverage/forklab.info), Ignored (declared
equivalent, with the reason), CompileError (it does not apply, or its
kernel did not build or boot). Each file's source is the unmutated
prepared tree's.

--patches DIR: the patches the run took (default: MUTANTS, else
mutants/); --out DIR: the run's results (default RES/mutate).
Environment: BUILD, ARCH, SANITIZE, KERNEL (the target and tree:
tools/lib/target), MUTANTS. Exit status 0; 1 with one error line when
there are no results.
"""

import json
import os
import re

import forklab

PROG = 'judge/mutation-report'
HERE = forklab.HERE
# run/mutants' result -> Stryker's status: what the run saw, as the run
# judged it. Killed and Timeout only where the run counts the mutant as
# caught; a result the run fails (not as expected) never reads as
# detected. KILLED?: a test failed on a patch declared equivalent, so the
# declaration is what broke, not the kernel (RuntimeError: not counted as
# detected nor survived). WRONG ROW: the row the patch names (Caught-by:)
# let it through. NOT SHOWN: its reproducer ran and did not show the bug.
STATUS = {'killed': 'Killed', 'hung': 'Timeout', 'KILLED?': 'RuntimeError',
	  'WRONG ROW': 'Survived', 'NOT SHOWN': 'Survived', 'SURVIVED': 'Survived',
	  'equivalent': 'Ignored', 'ERROR': 'CompileError'}



def header(lines, key):
	return next((line[len(key):].strip() for line in lines
		     if line.startswith(key)), '')


def first_hunk(patch):
	"""(path, header line, offset of its first change in the hunk's old
	side, number of lines removed, the old side's lines, added text,
	description, equivalent reason) of a mutant's first hunk; None if it
	has none."""
	with open(patch, errors='backslashreplace') as f:
		lines = f.read().split('\n')
	desc = header(lines, 'Mutant:') or header(lines, 'Exhibit:')
	why = header(lines, 'Equivalent:') or next(
		(line.split(':', 1)[1].strip() for line in lines
		 if line.startswith('Equivalent on ')), '')
	path = None
	for i, line in enumerate(lines):
		if line.startswith('+++ '):
			path = line[4:].split('\t')[0]
			path = path[2:] if path.startswith('b/') else path
		m = re.match(r'@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@', line)
		if m and path:
			old_side, added, first, removed = [], [], None, 0
			for body in lines[i + 1:]:
				if not body or body[0] not in ' -+\\':
					break
				if body[0] in '-+' and first is None:
					first = len(old_side)
				if body[0] == '-':
					removed += 1
				if body[0] in ' -':
					old_side.append(body[1:])
				elif body[0] == '+':
					added.append(body[1:])
			return (path, int(m.group(1)), first or 0, removed, old_side,
				'\n'.join(added), desc, why)
	return None


def locate(source_lines, header_line, old_side):
	"""The line (from 1) where @old_side starts in the source: the
	occurrence nearest the hunk header's line, as patch and git apply
	take a hunk at an offset; the header's line if it is nowhere."""
	n = len(old_side)
	starts = [i + 1 for i in range(len(source_lines) - n + 1)
		  if source_lines[i:i + n] == old_side] if n else []
	return min(starts, key=lambda s: abs(s - header_line)) if starts else header_line


def unrun_lines(info):
	"""{path below the tree: set of lines} that gcov counted 0 times in
	the lcov tracefile @info (make check's coverage), by the file's name
	below src/linux/; {} without one."""
	unrun, path = {}, None
	try:
		with open(info, errors='backslashreplace') as f:
			for line in f:
				if line.startswith('SF:'):
					name = line[3:].strip()
					path = name.split('/src/linux/', 1)[1] if '/src/linux/' in name else None
				elif line.startswith('DA:') and path:
					number, count = line[3:].split(',')[:2]
					if count.strip() == '0':
						unrun.setdefault(path, set()).add(int(number))
	except OSError:
		return {}
	return unrun


def main():
	parser = forklab.ArgumentParser(prog=PROG, description=__doc__.split('\n\n')[0])
	parser.add_argument('--patches', help='the patches the run took')
	parser.add_argument('--out', help="the run's results (RES/mutate)")
	args = parser.parse_args()
	mutants = args.patches or os.environ.get('MUTANTS') or os.path.join(HERE, 'mutants')
	t = forklab.target(PROG)
	out = args.out or os.path.join(t['res'], 'mutate')
	tree = t['tree']
	results = os.path.join(out, 'results.tsv')
	if not os.path.isfile(results):
		forklab.die(PROG, f'no {results}: run make mutate first')
	files = {}
	unrun = unrun_lines(os.path.join(t['res'], 'coverage', 'forklab.info'))
	with open(results, errors='backslashreplace') as f:
		rows = [line.rstrip('\n').split('\t') for line in f if line.strip()]
	for row in rows:
		name, result, secs, failed = (row + [''] * 4)[:4]
		hunk = first_hunk(os.path.join(mutants, name + '.patch'))
		if hunk is None:
			continue
		path, at, first, removed, old_side, added, desc, why = hunk
		if path not in files:
			try:
				with open(os.path.join(tree, path), errors='backslashreplace') as src:
					source = src.read()
			except OSError:
				source = ''
			files[path] = {'language': 'c', 'source': source, 'mutants': []}
		source_lines = files[path]['source'].split('\n')
		first = locate(source_lines, at, old_side) + first
		last = first + max(removed, 1) - 1
		end_col = len(source_lines[last - 1]) + 1 if 0 < last <= len(source_lines) else 1
		status = STATUS.get(result, 'RuntimeError')
		# A survivor whose lines the suites never ran (gcov: each
		# counted 0 times): no test reached it. Only a survivor: a
		# wrong row or an exhibit not shown keeps its own reason.
		if result == 'SURVIVED' and all(n in unrun.get(path, ()) for n in range(first, last + 1)):
			status, result = 'NoCoverage', 'no test ran its lines (gcov)'
		if status == 'Ignored':
			reason = f'equivalent: {why}' if why else 'equivalent'
		elif result in ('KILLED?', 'WRONG ROW', 'NOT SHOWN'):
			# run/mutants' own words (results.tsv's 7th field):
			# what was expected and did not happen.
			said = (row + [''] * 7)[6]
			reason = f'{result}: {said}' if said else result
		elif result not in STATUS or not failed:
			reason = result
		else:
			reason = '; '.join(failed.split(';')[:3])
		mutant = {'id': name, 'mutatorName': 'forklab patch',
			  'description': desc, 'replacement': added,
			  'location': {'start': {'line': first, 'column': 1},
				       'end': {'line': last, 'column': end_col}},
			  'status': status, 'statusReason': reason}
		if secs.isdigit():
			mutant['duration'] = int(secs) * 1000
		if mutant['status'] in ('Killed', 'Timeout') and failed:
			mutant['killedBy'] = failed.split(';')
		files[path]['mutants'].append(mutant)
	report = {'schemaVersion': '2', 'thresholds': {'high': 100, 'low': 90},
		  'projectRoot': tree, 'files': files}
	dest = os.path.join(out, 'mutation-report.json')
	with open(dest + '.tmp', 'w') as f:
		json.dump(report, f, indent=1)
		f.write('\n')
	os.replace(dest + '.tmp', dest)
	n = sum(len(v['mutants']) for v in files.values())
	print(f'{PROG}: {n} mutants in {dest}')


if __name__ == '__main__':
	main()
