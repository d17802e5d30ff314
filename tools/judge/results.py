# SPDX-License-Identifier: GPL-2.0
#
# The counting behind tools/judge/results, its entry point (which documents it):
#
#   python3 tools/judge/results.py PROG EXPECT KUNIT_DIR ROOT < SUITES
#
# SUITES has one line per suite: 'NAME POLICY|- required|optional LOG'.
# EXPECT is the expectations file (configs/expected/um describes the
# format); KUNIT_DIR holds the tree's kunit_parser.py; ROOT is the forklab
# checkout, against which the paths of EXPECT's @ lines are taken.
#
# Every log is parsed with kunit_parser.parse_run_tests(), the parser of
# 'kunit.py parse'. Its JSON is not enough: it keeps no status for a group,
# and bubble_up_test_results() does not count a group's own 'not ok' when
# the group has subtests, so a program that printed complete, all-ok KTAP
# and then crashed would count no failure.

import collections
import glob
import os
import re
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ktap  # noqa: E402

prog, expect_path, kunit_dir, root = sys.argv[1:5]

# Names listed per line before 'and N more'.
SHOWN = 5


def die(message):
	print(f'{prog}: {message}', file=sys.stderr)
	sys.exit(2)


def plural(n, one):
	return f'{n} {one}' + ('' if n == 1 else 's')


def listing(names):
	shown = '; '.join(names[:SHOWN])
	if len(names) > SHOWN:
		shown += f' and {len(names) - SHOWN} more'
	return shown


# --- the expectations file ---------------------------------------------------

SECTION = re.compile(r'^\[([A-Za-z0-9_.-]+)\]$')
SKIP = re.compile(r'^(.*?)\s+#\s*SKIP\s+(\S.*)$')
REGISTRATION = re.compile(r'^tk? ([A-Za-z_][A-Za-z0-9_]*)\s*$', re.M)


class Expected:
	"""The rows one section of the expectations file lists."""

	def __init__(self):
		self.rows = collections.Counter()	# row -> times listed
		self.skips = {}				# row -> why it may skip

	def resolve(self, policy, where):
		"""The rows of a suite under @policy (None: the suite has none)."""
		def fill(row):
			if '{policy}' in row and policy is None:
				die(f'{where}: {{policy}} in a suite without a policy: {row}')
			return row.replace('{policy}', policy or '')

		rows = collections.Counter()
		for row, n in self.rows.items():
			rows[fill(row)] += n
		skips = {fill(row): why for row, why in self.skips.items()}
		# A row listed only with '# SKIP WHY' is one expected row.
		for row in skips:
			if not rows[row]:
				rows[row] = 1
		return Rows(rows, skips)


class Rows:
	"""A suite's expected rows, matched off one by one as the log has
	them: literally, or through '{n}' (any whole number)."""

	def __init__(self, rows, skips):
		self.left = rows
		self.skips = skips
		self.patterns = [(row, re.compile(
			'[0-9]+'.join(re.escape(part) for part in row.split('{n}'))))
			for row in rows if '{n}' in row]

	def take(self, path):
		"""The expected row @path is, now matched; None if none is."""
		if self.left[path] > 0 and '{n}' not in path:
			self.left[path] -= 1
			return path
		for row, pattern in self.patterns:
			if self.left[row] > 0 and pattern.fullmatch(path):
				self.left[row] -= 1
				return row
		return None

	def missing(self):
		return list(self.left.elements())


def patch_names(path, key, default):
	"""The names a mutant's KEY line lists ('Targets:', where it runs,
	default um; 'Trees:', what it applies to, default 6.12), as
	tools/lib/forklab.sh reads them (for_this_target, for_this_tree)."""
	with open(path, errors='backslashreplace') as f:
		for line in f:
			if line.startswith(key):
				return line[len(key):].split()
	return [default]


def derived_rows(directive, arg, where):
	"""The rows of an '@tests FILES' or '@patches DIR' line."""
	path = os.path.join(root, arg)
	if directive == '@tests':
		# '@tests tests/*.sh': every file the pattern matches.
		rows = []
		for p in sorted(glob.glob(path)) or [path]:
			try:
				with open(p) as f:
					rows += REGISTRATION.findall(f.read())
			except OSError as e:
				die(f'{where}: {arg}: {e.strerror}')
		if not rows:
			die(f"{where}: no 't NAME' line in {arg}")
		return rows
	if directive == '@patches':
		# '@patches DIR TARGET [TREE]': only the patches that run on
		# TARGET (their 'Targets:' line; none means um) and apply to
		# TREE (their 'Trees:' line; none means 6.12; no TREE: 6.12),
		# as tools/run/mutants picks.
		arg, _, target = arg.partition(' ')
		target, _, tree = target.strip().partition(' ')
		tree = tree.strip() or '6.12'
		path = os.path.join(root, arg)
		if not os.path.isdir(path):
			die(f'{where}: {arg}: no such directory')
		rows = sorted(os.path.basename(p)[:-len('.patch')]
			      for p in glob.glob(os.path.join(path, '*.patch'))
			      if (not target or
				  target in patch_names(p, 'Targets:', 'um')) and
			      tree in patch_names(p, 'Trees:', '6.12'))
		if not rows:
			die(f'{where}: no *.patch in {arg}')
		return rows
	die(f"{where}: unknown line '{directive}' (want @tests or @patches)")


def load_expectations(path):
	"""{section name: Expected} of the expectations file @path."""
	sections = {}
	current = None
	try:
		f = open(path, errors='backslashreplace')
	except OSError as e:
		die(f'{path}: {e.strerror}')
	with f:
		for n, line in enumerate(f, 1):
			where = f'{path}:{n}'
			line = line.strip()
			if not line or line.startswith('#'):
				continue
			m = SECTION.match(line)
			if m:
				if m.group(1) in sections:
					die(f'{where}: [{m.group(1)}] a second time')
				current = sections[m.group(1)] = Expected()
				continue
			if current is None:
				die(f'{where}: a row before the first [SUITE] line')
			if line.startswith('@'):
				directive, _, arg = line.partition(' ')
				for row in derived_rows(directive, arg.strip(), where):
					current.rows[row] += 1
				continue
			m = SKIP.match(line)
			if m:
				current.skips[m.group(1)] = m.group(2)
			elif '#' in line:
				die(f"{where}: '#' in a row (KTAP names hold none; "
				    f"a skip is 'ROW # SKIP WHY')")
			else:
				current.rows[line] += 1
	return sections


# --- the tree's KTAP parser ----------------------------------------------------

def load_parser():
	"""ktap.load_parser() of KUNIT_DIR."""
	return ktap.load_parser(kunit_dir)


# --- one suite -----------------------------------------------------------------

class Suite:
	def __init__(self, name):
		self.name = name
		self.passed = self.failed = self.skipped = 0
		self.why = ''
		self.lines = []

	def report(self, message):
		self.lines.append(f'{prog}: {self.name}: {message}')


def why_of(test, default=''):
	return getattr(test, 'forklab_why', '') or default


def stand_in(kp, test):
	"""Is @test the parser's stand-in for a subtest a truncated log lacks
	(no name, no result line)? The expected row it should have been is
	reported missing instead."""
	return not test.name and not test.subtests and \
		test.status in (kp.TestStatus.TEST_CRASHED, kp.TestStatus.NO_TESTS)


def collect(kp, test, path, rows, groups):
	"""Leaf rows as (path, test), and as (path, why) the groups whose own
	result line is 'not ok', or missing (a crash cut the log short),
	although none of their subtests failed."""
	bad = (kp.TestStatus.FAILURE, kp.TestStatus.TEST_CRASHED)
	for sub in test.subtests:
		if stand_in(kp, sub):
			continue
		name = sub.name.strip() or '(unnamed)'
		full = f'{path}/{name}' if path else name
		if not sub.subtests:
			rows.append((full, sub))
			continue
		own = getattr(sub, 'forklab_own', None)
		if own in (None, kp.TestStatus.FAILURE) and \
		   not any(s.status in bad for s in sub.subtests
			   if not stand_in(kp, s)):
			groups.append((full, why_of(sub, 'no result line'
							if own is None else 'not ok')))
		collect(kp, sub, full, rows, groups)


# A failed row's last lines of its own log (what a test says just before
# its result: KUnit's failed expectation, a program's "wrong: ..."), so
# that a run's summary shows why without the logs (CI keeps only that).
MAX_SAID_ROWS = 4
MAX_SAID_LINES = 3


def last_said(test):
	said = [line.strip() for line in getattr(test, 'log', [])]
	said = [line.removeprefix('# ').strip() for line in said
		if line and not line.startswith(('ok ', 'not ok '))]
	return [line[:200] for line in said if line][-MAX_SAID_LINES:]


def count(suite, kp, test, expected):
	"""Count @test's rows against @expected (Rows) into @suite."""
	st = kp.TestStatus
	rows, groups = [], []
	collect(kp, test, '', rows, groups)
	if not rows:
		suite.failed, suite.why = 1, 'no test ran'
		return

	failed, unexpected, bad_skips, failed_tests = [], [], [], []
	for path, t in rows:
		row = expected.take(path)
		if t.status in (st.FAILURE, st.TEST_CRASHED):
			failed.append(path + (f' ({why_of(t)})' if why_of(t) else ''))
			failed_tests.append((path, t))
		elif t.status == st.SUCCESS and row is None:
			unexpected.append(path)
		elif t.status == st.SUCCESS:
			suite.passed += 1
		elif row is not None and row in expected.skips:
			suite.skipped += 1
		else:
			# SKIPPED, or NO_TESTS (a group with a plan of 0); a
			# program skipped whole is a row of its own, unlisted
			why = why_of(t, 'no tests' if t.status == st.NO_TESTS else '')
			bad_skips.append(path + (f' ({why})' if why else ''))
	missing = expected.missing()
	groups = [f'{path} ({why})' for path, why in groups]

	suite.failed = (len(failed) + len(groups) + len(missing) +
			len(unexpected) + len(bad_skips))
	if failed:
		suite.report(f'{plural(len(failed), "row")} failed: '
			     f'{listing(failed)}')
		for path, t in failed_tests[:MAX_SAID_ROWS]:
			for line in last_said(t):
				suite.report(f'{path}: {line}')
	if groups:
		suite.report(f'{plural(len(groups), "group")} failed with every '
			     f'subtest ok: {listing(groups)}')
	if missing or unexpected:
		parts = []
		if missing:
			parts.append(f'{plural(len(missing), "row")} missing: '
				     f'{listing(missing)}')
		if unexpected:
			parts.append(f'{len(unexpected)} unexpected: '
				     f'{listing(unexpected)}')
		suite.report('; '.join(parts))
	if bad_skips:
		suite.report(('unexpected skip: ' if len(bad_skips) == 1 else
			      f'{len(bad_skips)} unexpected skips: ') +
			     listing(bad_skips))


def main():
	signal.signal(signal.SIGPIPE, signal.SIG_DFL)
	expectations = load_expectations(expect_path)
	suites = []
	for line in sys.stdin:
		if line.strip():
			name, policy, need, log = line.rstrip('\n').split(' ', 3)
			suites.append((name, None if policy == '-' else policy,
				       need, log))

	# Every section belongs to a suite; every suite has a section: its
	# own ([mm-tests-always]) or its base suite's ([mm-tests]). The
	# sanitizer build's suites (kunit-sanitize) report the same rows.
	names = [name for name, _, _, _ in suites]
	for section in expectations:
		if section not in names:
			die(f'{expect_path}: [{section}] is no suite '
			    f'(want one of {", ".join(names)})')
	wanted = {}
	for name, policy, need, log in suites:
		base = name.removesuffix('-sanitize')
		if policy and base.endswith('-' + policy):
			base = base[:-len(policy) - 1]
		section = name if name in expectations else base
		if section not in expectations:
			# an optional suite that did not run needs no section
			if need == 'optional' and not os.path.exists(log):
				continue
			die(f'{expect_path}: no [{base}] section')
		wanted[name] = expectations[section].resolve(
			policy, f'{expect_path}: [{section}]')

	parser = load_parser()
	total = [0, 0, 0]
	for name, policy, need, log in suites:
		if need == 'optional' and not os.path.exists(log):
			continue
		suite = Suite(name)
		if parser is None:
			suite.failed = 1
			suite.why = 'no kunit.py: the tree was never prepared'
		elif not os.path.isfile(log) or os.path.getsize(log) == 0:
			suite.failed = 1
			suite.why = f'no results: {log} is missing (the suite did not run)'
		else:
			kp, parse = parser
			try:
				with open(log, errors='backslashreplace') as f:
					test = parse(f.readlines())
			except Exception:
				test = None
			if test is None or \
			   test.status == kp.TestStatus.FAILURE_TO_PARSE_TESTS:
				suite.failed = 1
				suite.why = f'the KTAP parser could not read {log}'
			else:
				count(suite, kp, test, wanted[name])
		print(f'{prog}: {name}: {suite.passed} passed, {suite.failed} failed, '
		      f'{suite.skipped} skipped' + (f' ({suite.why})' if suite.why else ''))
		for line in suite.lines:
			print(line)
		total[0] += suite.passed
		total[1] += suite.failed
		total[2] += suite.skipped

	print(f'{total[0]} passed, {total[1]} failed, {total[2]} skipped')
	sys.exit(1 if total[1] else 0)


main()
