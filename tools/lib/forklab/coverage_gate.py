# SPDX-License-Identifier: GPL-2.0
"""judge/coverage-gate: per-function line and branch coverage from an lcov .info
file, checked against a spec (coverage/ARCH.spec).

Spec lines (shell-like words; '#' starts a comment):
  FILE FUNCTION REQUIRE [NOTE...]
    FILE      path suffix of the source file, e.g. mm/memory.c
    FUNCTION  function name as gcov records it
    REQUIRE   comma-separated, from:
                branches  every branch gcov recorded in the function was taken
                lines     every line gcov recorded in the function ran
                hit       the function ran at least once
                report    print the counts, require nothing (a later issue
                          tightens it; NOTE says which)
  na FILE FUNCTION "SOURCE TEXT" WHY...
    The first line of FUNCTION containing SOURCE TEXT is not applicable on
    this build: gcov records it, but no input can take all of its branches
    (WHY says why, e.g. a flag that is 0 on this arch). Its lines and
    branches are counted apart and required of nobody.
  ran FILE FUNCTION "SOURCE TEXT" WHY...
    The first line of FUNCTION containing SOURCE TEXT must have run, e.g.
    one line of an error path that 'lines' cannot be asked of the whole
    function for (WHY says what running it proves).

A function spans from its FN line to its end: the FN record's end line when
lcov gives one (lcov 2), else the first line after it that is a lone '}' in
the source file, as kernel style puts it.

Exit status: 0 when every requirement holds, 1 when one does not, 2 on bad
input (one error line).
"""

import os
import re
import shlex
import sys

import forklab

# Messages start with the tool's path below tools/.
PROG = 'judge/coverage-gate'

REQUIREMENTS = ('branches', 'lines', 'hit', 'report')


class GateError(Exception):
	"""Bad input: the message is the one error line."""


class SourceFile:
	"""One SF record of an lcov tracefile."""

	def __init__(self, path):
		self.path = path
		self.functions = {}	# name -> (start, end or None)
		self.function_hits = {}	# name -> count
		self.lines = {}		# line -> count
		self.branches = []	# (line, block, branch, taken or None)


def parse_info(path):
	files = []
	current = None
	try:
		with open(path, encoding='utf-8', errors='replace') as f:
			for number, raw in enumerate(f, 1):
				line = raw.strip()
				if not line:
					continue
				key, _, value = line.partition(':')
				if key == 'SF':
					current = SourceFile(value)
					files.append(current)
					continue
				if key == 'end_of_record':
					current = None
					continue
				if key in ('TN', 'VER'):
					continue
				if current is None:
					raise GateError(f'{path}:{number}: {key} record outside SF')
				parse_record(current, key, value, path, number)
	except OSError as e:
		raise GateError(f'cannot read {path}: {e.strerror}') from e
	if not files:
		raise GateError(f'{path} has no SF record: not an lcov tracefile')
	return files


def parse_record(sf, key, value, path, number):
	fields = value.split(',')
	try:
		if key == 'FN':
			# lcov 1.x: FN:start,name; lcov 2.x: FN:start,end,name
			if len(fields) == 3:
				sf.functions[fields[2]] = (int(fields[0]), int(fields[1]))
			else:
				sf.functions[fields[1]] = (int(fields[0]), None)
		elif key == 'FNDA':
			sf.function_hits[fields[1]] = (sf.function_hits.get(fields[1], 0)
						       + int(fields[0]))
		elif key == 'DA':
			line = int(fields[0])
			sf.lines[line] = sf.lines.get(line, 0) + int(fields[1])
		elif key == 'BRDA':
			taken = None if fields[3] == '-' else int(fields[3])
			sf.branches.append((int(fields[0]), fields[1], fields[2], taken))
	except (IndexError, ValueError) as e:
		raise GateError(f'{path}:{number}: malformed {key} record') from e


def parse_spec(path):
	"""Return ([(file, function, require, note)], {'na' or 'ran':
	{(file, function): [(text, why)]}})."""
	entries = []
	marked = {'na': {}, 'ran': {}}
	try:
		with open(path, encoding='utf-8') as f:
			for number, raw in enumerate(f, 1):
				try:
					words = shlex.split(raw, comments=True)
				except ValueError as e:
					raise GateError(f'{path}:{number}: {e}') from e
				if not words:
					continue
				if words[0] in marked:
					if len(words) < 5:
						raise GateError(f'{path}:{number}: want {words[0]} FILE FUNCTION "SOURCE TEXT" WHY')
					key = (words[1], words[2])
					marked[words[0]].setdefault(key, []).append((words[3], ' '.join(words[4:])))
					continue
				if len(words) < 3:
					raise GateError(f'{path}:{number}: want FILE FUNCTION REQUIRE [NOTE]')
				require = words[2].split(',')
				bad = [r for r in require if r not in REQUIREMENTS]
				if bad:
					raise GateError(f'{path}:{number}: unknown requirement {bad[0]!r} '
							f'(one of {", ".join(REQUIREMENTS)})')
				entries.append((words[0], words[1], require, ' '.join(words[3:])))
	except OSError as e:
		raise GateError(f'cannot read {path}: {e.strerror}') from e
	if not entries:
		raise GateError(f'{path} lists no function')
	for kind, lines in marked.items():
		for key in lines:
			if not any(e[:2] == key for e in entries):
				raise GateError(f'{path}: {kind} line for {key[1]} in {key[0]}, which the spec does not list')
	return entries, marked


def find_source(files, suffix):
	matches = [sf for sf in files
		   if sf.path == suffix or sf.path.endswith('/' + suffix)]
	return matches


def source_path(sf, base):
	return sf.path if os.path.isabs(sf.path) else os.path.join(base, sf.path)


def read_source(sf, name, base):
	path = source_path(sf, base)
	try:
		with open(path, encoding='utf-8', errors='replace') as f:
			return f.read().split('\n')
	except OSError as e:
		raise GateError(f'cannot read the source of {name}: {path} '
				f'({e.strerror})') from e


def function_end(source, name, start, path):
	for number in range(start + 1, len(source) + 1):
		if re.match(r'^}\s*$', source[number - 1]):
			return number
	raise GateError(f'cannot find the end of {name} in {path} (no lone "}}" after line {start})')


def find_marked_lines(kind, source, name, start, end, marked, path):
	"""Map each na or ran entry of this function to its line number."""
	lines = {}
	for text, why in marked:
		found = [n for n in range(start, end + 1) if text in source[n - 1]]
		if not found:
			raise GateError(f'{kind}: "{text}" is not in {name} ({path}:{start}-{end})')
		lines[found[0]] = why
	return lines


def measure(sf, name, base, na, ran):
	"""Counts for one function; lines in na (line -> why) are set apart."""
	start, end = sf.functions[name]
	source = None
	if end is None or na or ran:
		source = read_source(sf, name, base)
	if end is None:
		end = function_end(source, name, start, source_path(sf, base))
	path = source_path(sf, base)
	na_lines = find_marked_lines('na', source, name, start, end, na, path) if na else {}
	ran_lines = find_marked_lines('ran', source, name, start, end, ran, path) if ran else {}

	def counted(line):
		return start <= line <= end and line not in na_lines

	lines = {l: c for l, c in sf.lines.items() if counted(l)}
	branches = [b for b in sf.branches if counted(b[0])]
	untaken = [b for b in branches if not b[3]]
	return {
		'lines_hit': sum(1 for c in lines.values() if c > 0),
		'lines': len(lines),
		'missed_lines': sorted(l for l, c in lines.items() if c == 0),
		'branches_taken': len(branches) - len(untaken),
		'branches': len(branches),
		'untaken': untaken,
		'calls': sf.function_hits.get(name, 0),
		'na': na_lines,
		'na_branches': sum(1 for b in sf.branches if b[0] in na_lines),
		'ran': {l: (sf.lines.get(l), why) for l, why in ran_lines.items()},
	}


def check(entry, files, base, marked):
	"""Return (row, failures) for one spec entry."""
	suffix, name, require, note = entry
	matches = find_source(files, suffix)
	if not matches:
		return (suffix, name, None, require, note), [
			f'{suffix}: not in the tracefile (was it built with coverage and run?)']
	if len(matches) > 1:
		raise GateError(f'{suffix} matches {len(matches)} source files; give a longer path')
	sf = matches[0]
	if name not in sf.functions:
		return (suffix, name, None, require, note), [
			f'{name}: no such function in {sf.path} (renamed, or not built?)']
	m = measure(sf, name, base, marked['na'].get((suffix, name), []),
		    marked['ran'].get((suffix, name), []))
	failures = []
	for line, (count, why) in sorted(m['ran'].items()):
		if not count:
			failures.append(f'{name}: {suffix}:{line} never ran '
					f'({"no code there" if count is None else why})')
	if 'hit' in require and m['calls'] == 0:
		failures.append(f'{name}: never called')
	if 'lines' in require and m['missed_lines']:
		failures.append(f'{name}: lines never run: ' +
				', '.join(f'{suffix}:{l}' for l in m['missed_lines']))
	if 'branches' in require:
		if m['branches'] == 0:
			failures.append(f'{name}: gcov recorded no branch to check')
		for line, block, branch, taken in m['untaken']:
			what = 'never reached' if taken is None else 'never taken'
			failures.append(f'{name}: branch {block}/{branch} at {suffix}:{line} {what}')
	return (suffix, name, m, require, note), failures


def ratio(a, b):
	return f'{a}/{b}' if b else '-'


def main(argv):
	parser = forklab.ArgumentParser(prog=PROG,
		description=__doc__.split('\n\n')[0],
		epilog='Spec format and exit status: see the header of this script.')
	parser.add_argument('info', help='lcov tracefile (.info)')
	parser.add_argument('--spec', required=True, help='gate spec file')
	parser.add_argument('--base', help='directory that relative SF paths are '
			    'relative to (default: the tracefile\'s directory)')
	args = parser.parse_args(argv)

	try:
		entries, marked = parse_spec(args.spec)
		files = parse_info(args.info)
		base = args.base or os.path.dirname(os.path.abspath(args.info))
		results = [check(e, files, base, marked) for e in entries]
	except GateError as e:
		forklab.die(PROG, e, forklab.BAD_INPUT)

	print(f'{"function":<24} {"file":<16} {"calls":>8} {"lines":>9} '
	      f'{"branches":>9}  {"require":<16} result')
	failures = []
	for (suffix, name, m, require, note), fails in results:
		if m is None:
			counts = f'{"-":>8} {"-":>9} {"-":>9}'
		else:
			counts = (f'{m["calls"]:>8} '
				  f'{ratio(m["lines_hit"], m["lines"]):>9} '
				  f'{ratio(m["branches_taken"], m["branches"]):>9}')
		if fails:
			result = 'FAIL'
		elif require == ['report']:
			result = 'reported' + (f' ({note})' if note else '')
		else:
			result = 'ok'
		print(f'{name:<24} {suffix:<16} {counts}  {",".join(require):<16} {result}')
		for line, why in sorted((m or {}).get('na', {}).items()):
			print(f'{"":<24} n/a {suffix}:{line} ({m["na_branches"]} branch arms): {why}')
		for line, (count, why) in sorted((m or {}).get('ran', {}).items()):
			print(f'{"":<24} ran {suffix}:{line} ({count or 0}x): {why}')
		failures += fails
	for f in failures:
		print(f'{PROG}: FAIL {f}')
	enforced = sum(1 for r in results if r[0][3] != ['report'])
	print(f'{PROG}: {"FAIL" if failures else "PASS"}: {len(results)} functions, '
	      f'{enforced} with requirements, {len(failures)} unmet')
	return 1 if failures else 0


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
