# SPDX-License-Identifier: GPL-2.0
"""judge/expected: write configs/expected, the expectations of every
suite on every target and tree, from what a passing run reported (make
expected), so that a reviewer reads the change as a diff of it.

The file is read as tools/lib/forklab/results.py reads it: a section
header names the suites its rows are expected of ('[kunit kunit-x86_64]':
both). Writing it, each row goes to the one section of exactly the suites
that list it, a section per set of suites, in the order the rows first
come: rows every tree and target share are written once. Comment lines
stay above the row they were above; '@' lines (@tests, @patches) stay as
they are.

  judge/results --write-expected (make expected; rewrite() here)
      each suite of SUITES that ran and has a section of its own gets
      the rows its log has, in its order, for the ones it had: a listed
      row as the file writes it ({policy}, {n}), a skip with the reason
      it gave, a row it no longer reports dropped, one it did not list
      added; the others keep theirs.
  python3 -m forklab.expected --merge OUT FILE...
      the rows of several expectations files as one file (how the four
      per-target files became configs/expected).

Exit status: 0; 1 with one error line when a file cannot be read or
written; 2 on a bad argument.
"""

import collections
import os
import sys

import forklab
from forklab import results, table

PROG = 'judge/expected'


class Entry:
	"""One row line of a section, with the comment lines above it."""

	def __init__(self, line, comments=()):
		self.line = line
		self.comments = tuple(comments)


def read(path):
	"""(preamble, {suite: [Entry]}, [suite]) of the expectations file
	@path: the comment lines before its first section, each suite's
	entries in file order (a section of several suites gives each the
	same), and the suites in the order they first come."""
	preamble, suites, order = [], {}, []
	current, comments = None, []
	with open(path, errors='backslashreplace') as f:
		for line in f:
			line = line.rstrip('\n')
			m = results.SECTION.match(line.strip())
			if m:
				current = m.group(1).split()
				for name in current:
					if name not in suites:
						suites[name] = []
						order.append(name)
				continue
			if current is None:
				preamble.append(line)
				continue
			if not line.strip():
				continue
			if line.lstrip().startswith('#'):
				comments.append(line)
				continue
			entry = Entry(line.strip(), comments)
			comments = []
			for name in current:
				suites[name].append(entry)
	while preamble and not preamble[-1].strip():
		preamble.pop()
	return preamble, suites, order


def family(name, suffixes):
	"""The kind of suite @name is (kunit, mm-tests, tools, mutants,
	museum): without its tree's and target's suffixes."""
	for suffix in suffixes:
		name = name.removesuffix(suffix)
	return name


def suffixes():
	"""Every suffix a suite's name may carry: a target's (-x86_64), then
	a tree's (-6.1), longest first."""
	out = [t['suffix'] for t in table.load()['targets'] if t['suffix']]
	out += [f'-{tree}' for tree in table.trees()[1:]]
	return sorted(set(out), key=len, reverse=True)


def write(preamble, suites, order):
	"""The text of an expectations file of @suites ({suite: [Entry]}),
	a section per set of suites that share rows."""
	ends = suffixes()
	families = []
	for name in order:
		f = family(name, ends)
		if f not in families:
			families.append(f)
	out = list(preamble)
	for fam in families:
		names = [n for n in order if family(n, ends) == fam]
		# Each row line's k-th copy is one item: in the suites that
		# list the line k times or more.
		where = collections.OrderedDict()
		for name in names:
			seen = collections.Counter()
			for e in suites[name]:
				seen[e.line] += 1
				item = (e.line, seen[e.line])
				if item not in where:
					where[item] = ([], e)
				where[item][0].append(name)
		sections = collections.OrderedDict()
		for item, (owners, entry) in where.items():
			sections.setdefault(tuple(owners), []).append(entry)
		for owners, entries in sections.items():
			out += ['', f'[{" ".join(owners)}]']
			shown = set()
			for e in entries:
				if e.comments and e.comments not in shown:
					out += list(e.comments)
					shown.add(e.comments)
				out.append(e.line)
	return '\n'.join(out) + '\n'


def observed(suite, entries):
	"""@suite's entries as its log has them (see the module's text), from
	its judged rows and the file's @entries for it: the listed rows the
	log still has stay where they are, with their comments; a row the
	log no longer has goes; a new one comes after the row the log has
	before it."""
	# A listed skip is a row that may skip: one that passed keeps it.
	may_skip = {}
	for e in entries:
		m = results.SKIP_LINE.match(e.line) or results.LIVE_LINE.match(e.line) or \
			results.XFAIL_LINE.match(e.line)
		if m:
			may_skip[m.group(1)] = e.line
	lines = []
	for r in suite.rows:
		if r.verdict == results.MISSING or r.names[-1] == results.OWN_STATUS:
			continue
		line = r.expected or r.path
		if r.verdict in (results.SKIP, results.UNEXPECTED_SKIP):
			line = f'{line} # SKIP {r.skip_why}'
		elif r.verdict == results.LIVE:
			line = f'{line} # LIVE {r.live_why}'
		elif r.verdict == results.XFAIL:
			line = f'{line} # XFAIL {r.xfail_why}'
		elif line in may_skip:
			line = may_skip[line]
		elif r.derived:
			continue
		lines.append(line)
	left = collections.Counter(lines)
	kept = []
	for e in entries:
		if e.line.startswith('@') or left[e.line] > 0:
			kept.append(e)
			if not e.line.startswith('@'):
				left[e.line] -= 1
	# Where each log row is among the kept entries: a new one goes after
	# the kept entry of the row before it (or first).
	place = collections.defaultdict(list)	# kept index (-1: first) -> new
	slots = collections.defaultdict(list)	# line -> kept indexes
	for i, e in enumerate(kept):
		slots[e.line].append(i)
	seen = collections.Counter()
	anchor = -1
	for line in lines:
		if seen[line] < len(slots[line]):
			anchor = slots[line][seen[line]]
		else:
			place[anchor].append(Entry(line))
		seen[line] += 1
	out = place[-1]
	for i, e in enumerate(kept):
		out.append(e)
		out += place[i]
	return out


def rewrite(path, judged, own):
	"""Write @path anew: each suite of @judged ([Suite]) that ran and
	whose rows its own section lists (@own: their names) gets the rows
	it reported."""
	preamble, suites, order = read(path)
	for suite in judged:
		if suite.name not in own or suite.why:
			continue
		suites[suite.name] = observed(suite, suites.get(suite.name, []))
		if suite.name not in order:
			order.append(suite.name)
	text = write(preamble, suites, order)
	with open(path + '.tmp', 'w') as f:
		f.write(text)
	os.replace(path + '.tmp', path)


def main():
	ap = forklab.ArgumentParser(prog=PROG, description=__doc__.split('\n\n')[0])
	ap.add_argument('--merge', nargs='+', metavar='FILE',
			help='OUT, then the files whose rows it gets')
	args = ap.parse_args()
	if not args.merge or len(args.merge) < 2:
		ap.error('want --merge OUT FILE...')
	out, *files = args.merge
	preamble, suites, order = [], {}, []
	try:
		for path in files:
			pre, s, o = read(path)
			preamble = preamble or pre
			for name in o:
				if name in suites:
					forklab.die(PROG, f'{path}: [{name}] is in two files')
				suites[name] = s[name]
				order.append(name)
		text = write(preamble, suites, order)
		with open(out + '.tmp', 'w') as f:
			f.write(text)
		os.replace(out + '.tmp', out)
	except OSError as e:
		forklab.die(PROG, f'{e.filename}: {e.strerror}')
	print(f'{PROG}: {len(order)} suites in {out}')


if __name__ == '__main__':
	sys.exit(main())
