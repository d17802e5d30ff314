# SPDX-License-Identifier: GPL-2.0
"""The results model: every verdict forklab gives on a run's rows.

One reading of a run for every consumer (make check's exit status, make
results, judge/export's junit.xml and kcidb.json, and through them
judge/report's page and make merge): each suite's KTAP log is parsed with
the tree's own parser (forklab.ktap: kunit.py's kunit_parser), in which
judge/console-scan has already failed the tests the kernel complained in,
and each row is held against the rows the expectations file lists for the
suite. A row's verdict is one of

  PASS             it passed, and the expectations list it
  SKIP             it skipped, and the expectations list that skip, for
                   the reason it gave
  FAIL             it failed
  ERROR            it did not complete: a program that crashed, timed out
                   or left no exit status after its rows (its group's own
                   'not ok' with every row ok: the row 'GROUP/(exit
                   status)'), a log without KTAP or without a single test
  UNEXPECTED SKIP  it skipped, and the expectations do not list that skip
                   (or list it for another reason)
  MISSING          the expectations list it; the log does not have it
  UNLISTED         it passed, and the expectations do not list it
  LIVE BUG         it failed, and the expectations list it as a bug the
                   kernel that ran has ('ROW # LIVE WHY': a distribution's
                   binary kernel, or a tree built without forklab's
                   series, lacking an upstream fix); the run's
                   'kernel' file, beside its log, names that kernel
  XFAIL            it failed, and the expectations list that failure,
                   for what the target lacks ('ROW # XFAIL WHY': an
                   upstream test of run/upstream-runners that needs
                   what a guest's kernel was built without)
  QUARANTINED      it failed (any verdict above but PASS, SKIP, LIVE BUG
                   and XFAIL), and the quarantine file
                   (configs/quarantine) lists it: a row that fails
                   without a kernel change, with its reason and date; its
                   own verdict is kept (Row.quarantined)

PASS, SKIP, LIVE BUG, XFAIL and QUARANTINED are as expected; every other
verdict fails the run. make results counts a live bug and an expected
failure among the skipped (neither a pass nor a failure of forklab's),
and names each; it counts and names each quarantined row that failed,
and each that passed (it may leave the quarantine).

As a command (tools/judge/results runs it, and documents it):

  python3 -m forklab.results PROG EXPECT KUNIT_DIR ROOT [--write-expected]
          [--quarantine FILE] < SUITES

SUITES has one line per suite: 'NAME POLICY|- NEED LOG', NEED required
(a missing log fails), optional (a missing log is left out), unjudged
(a suite the expectations may name, not read) or own (optional, and its
rows are the user's, judged without expectations: make repros, whose
reproducers are whatever folder the user gave).
EXPECT is the expectations file (configs/expected describes the
format); KUNIT_DIR holds the tree's kunit_parser.py; ROOT is the forklab
checkout, against which the paths of EXPECT's @ lines are taken.
--write-expected (make expected): then EXPECT is written anew, each
suite that ran with the rows it reported (forklab.expected).
--quarantine FILE: the quarantined rows (load_quarantine gives the
format); a line naming no suite of SUITES, or a row a suite that ran
does not have, is an error.

The parser's JSON is not enough: it keeps no status for a group, and
bubble_up_test_results() does not count a group's own 'not ok' when the
group has subtests, so a program that printed complete, all-ok KTAP and
then crashed would count no failure.
"""

import collections
import datetime
import glob
import os
import re
import signal
import sys

from forklab import ktap, table

PASS, SKIP, FAIL, ERROR = 'PASS', 'SKIP', 'FAIL', 'ERROR'
UNEXPECTED_SKIP, MISSING, UNLISTED = 'UNEXPECTED SKIP', 'MISSING', 'UNLISTED'
LIVE = 'LIVE BUG'
XFAIL = 'XFAIL'
QUARANTINED = 'QUARANTINED'
# The verdicts a run may end with and pass.
AS_EXPECTED = (PASS, SKIP, LIVE, XFAIL, QUARANTINED)

# What tools/run/mm-tests (and kunit.py) put after '#' on a result line
# when a program or a kernel did not complete: not a verdict on the code.
# run/mm-tests writes 'exit status N', 'no exit status: ...' and 'timed
# out after ...'; nothing but mm_tests_time_out_after_complete_ktap (the
# timeout) checks that the two lists still agree. run/repros writes 'does
# not build' for a reproducer that never ran, and 'no exit status'.
INCOMPLETE = ('exit status', 'no exit status', 'timed out', 'crashed',
	      'no results', 'does not build')

# The row of a group that failed although none of its rows did.
OWN_STATUS = '(exit status)'


class ResultsError(Exception):
	"""A bad expectations file: the message is the one error line."""


# --- the expectations file ---------------------------------------------------

# '[SUITE ...]': the rows below are expected of each suite it names.
SECTION = re.compile(r'^\[([A-Za-z0-9_.-]+(?: +[A-Za-z0-9_.-]+)*)\]$')
SKIP_LINE = re.compile(r'^(.*?)\s+#\s*SKIP\s+(\S.*)$')
LIVE_LINE = re.compile(r'^(.*?)\s+#\s*LIVE\s+(\S.*)$')
XFAIL_LINE = re.compile(r'^(.*?)\s+#\s*XFAIL\s+(\S.*)$')
REGISTRATION = re.compile(r'^tk? ([A-Za-z_][A-Za-z0-9_]*)\s*$', re.M)


class Expected:
	"""The rows one section of the expectations file lists."""

	def __init__(self):
		self.rows = collections.Counter()	# row -> times listed
		self.skips = {}				# row -> why it may skip
		self.live = {}				# row -> the bug it may fail for
		self.xfail = {}				# row -> what it fails for
		self.derived = set()			# rows of an @ line

	def resolve(self, policy, where):
		"""The rows of a suite under @policy (None: the suite has none)."""
		def fill(row):
			if '{policy}' in row and policy is None:
				raise ResultsError(f'{where}: {{policy}} in a suite without a policy: {row}')
			return row.replace('{policy}', policy or '')

		rows = collections.Counter()
		written = {}
		for row, n in self.rows.items():
			rows[fill(row)] += n
			written[fill(row)] = row
		skips = {fill(row): why for row, why in self.skips.items()}
		live = {fill(row): why for row, why in self.live.items()}
		xfail = {fill(row): why for row, why in self.xfail.items()}
		written.update({fill(row): row for row in [*self.skips, *self.live, *self.xfail]})
		# A row listed only with '# SKIP WHY', '# LIVE WHY' or '# XFAIL
		# WHY' is one expected row.
		for row in [*skips, *live, *xfail]:
			if not rows[row]:
				rows[row] = 1
		return Rows(rows, skips, written, {fill(row) for row in self.derived}, live, xfail)


class Rows:
	"""A suite's expected rows, matched off one by one as the log has
	them: literally, or through '{n}' (any whole number)."""

	def __init__(self, rows, skips, written=None, derived=(), live=None, xfail=None):
		self.left = rows
		self.skips = skips
		self.live = live or {}
		self.xfail = xfail or {}
		self.written = written or {}	# row -> as the file writes it
		self.derived = set(derived)
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

	def restrict(self, names):
		"""Expect only the rows @names."""
		self.left = collections.Counter(
			{row: n for row, n in self.left.items() if row in names})
		self.skips = {row: why for row, why in self.skips.items() if row in names}
		self.patterns = [(row, p) for row, p in self.patterns if row in names]


def patch_names(path, field):
	"""The names a patch's FIELD line lists ('Targets', where it runs;
	'Trees', what it applies to), by the table's rules for it
	(configs/forklab.toml: its default, one line only)."""
	try:
		return table.header(path, field)
	except table.TableError as e:
		raise ResultsError(str(e)) from e


def derived_rows(root, directive, arg, where):
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
				raise ResultsError(f'{where}: {arg}: {e.strerror}') from e
		if not rows:
			raise ResultsError(f"{where}: no 't NAME' line in {arg}")
		return rows
	if directive == '@patches':
		# '@patches DIR TARGET [TREE]': only the patches that run on
		# TARGET (their 'Targets:' line) and apply to TREE (their
		# 'Trees:' line; no TREE: the default tree), as
		# tools/run/mutants picks.
		arg, _, target = arg.partition(' ')
		target, _, tree = target.strip().partition(' ')
		tree = tree.strip() or table.trees()[0]
		path = os.path.join(root, arg)
		if not os.path.isdir(path):
			raise ResultsError(f'{where}: {arg}: no such directory')
		rows = sorted(os.path.basename(p)[:-len('.patch')]
			      for p in glob.glob(os.path.join(path, '*.patch'))
			      if (not target or
				  target in patch_names(p, 'Targets')) and
			      tree in patch_names(p, 'Trees'))
		if not rows:
			raise ResultsError(f'{where}: no *.patch in {arg}')
		return rows
	raise ResultsError(f"{where}: unknown line '{directive}' (want @tests or @patches)")


def lines_of(path):
	"""('FILE:LINE', line) of each line of @path that is neither blank
	nor a comment, stripped."""
	try:
		f = open(path, errors='backslashreplace')
	except OSError as e:
		raise ResultsError(f'{path}: {e.strerror}') from e
	with f:
		for n, line in enumerate(f, 1):
			line = line.strip()
			if line and not line.startswith('#'):
				yield f'{path}:{n}', line


def load_expectations(path, root):
	"""{section name: Expected} of the expectations file @path; the
	paths of its @ lines are taken against the checkout @root."""
	sections = {}
	headers = []
	current = None
	for where, line in lines_of(path):
		m = SECTION.match(line)
		if m:
			names = m.group(1).split()
			if names in headers:
				raise ResultsError(f'{where}: [{m.group(1)}] a second time')
			headers.append(names)
			current = [sections.setdefault(name, Expected()) for name in names]
			continue
		if current is None:
			raise ResultsError(f'{where}: a row before the first [SUITE] line')
		if line.startswith('@'):
			directive, _, arg = line.partition(' ')
			for row in derived_rows(root, directive, arg.strip(), where):
				for e in current:
					e.rows[row] += 1
					e.derived.add(row)
			continue
		# 'ROW # SKIP WHY', 'ROW # LIVE WHY', 'ROW # XFAIL WHY':
		# each row one WHY.
		for pattern, kind, what in ((SKIP_LINE, 'skips', 'to skip for two reasons'),
					    (LIVE_LINE, 'live', 'as two live bugs'),
					    (XFAIL_LINE, 'xfail', 'to fail for two reasons')):
			m = pattern.match(line)
			if m:
				break
		if m:
			for e in current:
				listed = getattr(e, kind)
				if listed.get(m.group(1), m.group(2)) != m.group(2):
					raise ResultsError(f'{where}: {m.group(1)} listed {what}')
				listed[m.group(1)] = m.group(2)
		elif '#' in line:
			raise ResultsError(f"{where}: '#' in a row (KTAP names hold none; "
					   f"a skip is 'ROW # SKIP WHY', a live bug 'ROW # LIVE WHY', "
					   f"an expected failure 'ROW # XFAIL WHY')")
		else:
			for e in current:
				e.rows[line] += 1
	return sections


# --- the quarantine file ------------------------------------------------------

# 'SUITE: GROUP/.../ROW # DATE WHY'
QUARANTINE_LINE = re.compile(r'^([A-Za-z0-9_.-]+): (.*?)\s*#\s*(.*)$')
DATE = re.compile(r'^([0-9]{4}-[0-9]{2}-[0-9]{2})(?:\s+(.*))?$')


def load_quarantine(path):
	"""{(suite, row path): (DATE WHY, 'FILE:LINE')} of the quarantine
	file @path (configs/quarantine's comments give the format: one
	quarantined row a line, 'SUITE: GROUP/.../ROW # YYYY-MM-DD WHY')."""
	rows = {}
	for where, line in lines_of(path):
		m = QUARANTINE_LINE.match(line)
		if not m or not m.group(2):
			raise ResultsError(f"{where}: want 'SUITE: ROW # YYYY-MM-DD WHY', not '{line}'")
		suite, row, rest = m.groups()
		d = DATE.match(rest)
		try:
			datetime.date.fromisoformat(d.group(1) if d else '')
		except ValueError:
			raise ResultsError(f'{where}: {suite}: {row}: no date (want '
					   f"'# YYYY-MM-DD WHY' after the row)") from None
		if not d.group(2):
			raise ResultsError(f'{where}: {suite}: {row}: no reason after the date')
		if (suite, row) in rows:
			raise ResultsError(f'{where}: {suite}: {row} quarantined a second time '
					   f'({rows[suite, row][1]})')
		rows[suite, row] = (f'{d.group(1)} {d.group(2)}', where)
	return rows


def quarantine(suites, rows, names):
	"""Hold the judged @suites ([Suite]) against the quarantine @rows
	(load_quarantine's): a listed row that failed is QUARANTINED, one
	that passed keeps PASS; either is marked. A line naming a suite not
	in @names (every suite of the run, whether it ran or not), or a row
	that a suite which ran does not have, is a ResultsError."""
	judged = {s.name: s for s in suites}
	for (name, path), (why, where) in rows.items():
		if name not in names:
			raise ResultsError(f'{where}: {name}: no such suite (want one of '
					   f'{", ".join(names)})')
		suite = judged.get(name)
		if suite is None or suite.why:
			continue	# not run here, or it has no rows at all
		marked = [r for r in suite.rows if r.path == path]
		if not marked:
			raise ResultsError(f'{where}: {name}: no row {path} in this run')
		for r in marked:
			r.quarantine = why
			if r.verdict not in AS_EXPECTED:
				r.quarantined, r.verdict = r.verdict, QUARANTINED
	# A program whose failed rows are all quarantined exits 1 for them
	# (kselftest's KSFT_FAIL): its '(exit status)' row is theirs.
	for suite in suites:
		for r in suite.rows:
			if r.names[-1] != OWN_STATUS or r.verdict != ERROR or r.why != 'exit status 1':
				continue
			group = [o for o in suite.rows if o.names[:-1] == r.names[:-1] and o is not r]
			if any(o.verdict == QUARANTINED for o in group) and \
			   all(o.verdict in AS_EXPECTED for o in group):
				r.quarantined, r.verdict = r.verdict, QUARANTINED
				r.quarantine = 'the exit status of its quarantined rows'


def base_of(name, policy):
	"""The suite whose rows suite @name reports: kunit-sanitize's and
	kunit-always's are kunit's."""
	base = name.removesuffix('-sanitize')
	if policy and base.endswith('-' + policy):
		base = base[:-len(policy) - 1]
	return base


def section_of(expectations, name, policy):
	"""The section that lists suite @name's rows: its own ([mm-tests-always])
	or its base suite's ([mm-tests]); the sanitizer build's suites
	(kunit-sanitize) report the same rows. None if there is none."""
	base = base_of(name, policy)
	section = name if name in expectations else base
	return section if section in expectations else None


# --- one suite's rows ---------------------------------------------------------

class Row:
	"""One row of a suite: its names from the top of the log (a KUnit
	suite or a program first), its verdict, why (one line), and what it
	said (its diagnostics, for the reports)."""

	def __init__(self, names, verdict, why='', said=()):
		self.names = names
		self.verdict = verdict
		self.why = why
		self.said = list(said)
		# For make expected: the expected row it matched, as the file
		# writes it ({policy}, {n}); whether an @ line lists it; the
		# reason it skipped for.
		self.expected = None
		self.derived = False
		self.skip_why = ''
		self.live_why = ''
		self.xfail_why = ''
		# Its quarantine line ('DATE WHY'), if it has one; the verdict
		# it had before the quarantine took it.
		self.quarantine = ''
		self.quarantined = ''

	@property
	def path(self):
		return '/'.join(self.names)


class Suite:
	"""A suite's rows in the order of its log, then the missing ones. A
	suite whose log could not be read, or ran no test, has one row '(no
	results)' and says why: MISSING when there is no log, else ERROR."""

	def __init__(self, name, log):
		self.name = name
		self.log = log
		self.rows = []
		self.why = ''
		# The kernel that ran, as the run's 'kernel' file names it
		# (a binary kernel's package and version), or ''.
		self.kernel = ''
		# The accelerator its emulator ran under, as the run's 'accel'
		# file names it (kvm, tcg: tools/lib/forklab.sh's
		# accel_choose), or '' (UML, or a run from before it).
		self.accel = ''

	def broken(self, why, verdict=ERROR):
		self.why = why
		self.rows = [Row(['(no results)'], verdict, why)]

	def count(self, *verdicts):
		return sum(r.verdict in verdicts for r in self.rows)

	@property
	def passed(self):
		return self.count(PASS)

	@property
	def skipped(self):
		return self.count(SKIP)

	@property
	def live(self):
		"""The live bugs: rows of LIVE BUG but a program's exit status."""
		return sum(r.verdict == LIVE and r.names[-1] != OWN_STATUS for r in self.rows)

	@property
	def live_rows(self):
		return sum(r.verdict == LIVE for r in self.rows)

	@property
	def xfailed(self):
		return self.count(XFAIL)

	@property
	def failed(self):
		return sum(r.verdict not in AS_EXPECTED for r in self.rows)

	@property
	def quarantined(self):
		"""The quarantined rows that failed."""
		return self.count(QUARANTINED)

	@property
	def quarantine_passed(self):
		"""The quarantined rows that passed: each may leave it."""
		return sum(bool(r.quarantine) and r.verdict == PASS for r in self.rows)


def why_of(test, default=''):
	return getattr(test, 'forklab_why', '') or default


def said_of(test):
	"""What a test printed before its result: KUnit's failed expectation,
	a program's "wrong: ..." (its log, without result lines)."""
	said = [line.strip() for line in getattr(test, 'log', None) or []]
	return [line.removeprefix('# ').strip() for line in said
		if line and not line.startswith(('ok ', 'not ok '))]


def stand_in(kp, test):
	"""Is @test the parser's stand-in for a subtest a truncated log lacks
	(no name, no result line)? The expected row it should have been is
	reported missing instead."""
	return not test.name and not test.subtests and \
		test.status in (kp.TestStatus.TEST_CRASHED, kp.TestStatus.NO_TESTS)


def incomplete(why):
	return why.startswith(INCOMPLETE)


def walk(kp, test, names, out):
	"""(names, test, is_group_status) of every leaf under @test, and of
	each group whose own result line is 'not ok', or missing (a crash
	cut the log short), although none of its subtests failed."""
	bad = (kp.TestStatus.FAILURE, kp.TestStatus.TEST_CRASHED)
	for sub in test.subtests:
		if stand_in(kp, sub):
			continue
		full = names + [sub.name.strip() or '(unnamed)']
		if not sub.subtests:
			out.append((full, sub, False))
			continue
		walk(kp, sub, full, out)
		own = getattr(sub, 'forklab_own', None)
		if own in (None, kp.TestStatus.FAILURE) and \
		   not any(s.status in bad for s in sub.subtests
			   if not stand_in(kp, s)):
			out.append((full, sub, True))
	return out


def judge_test(kp, top, expected):
	"""The rows of the parsed log @top, each with its verdict against
	@expected (Rows; None: no expectations, every row as it is)."""
	st = kp.TestStatus
	rows = []
	walked = walk(kp, top, [], [])
	for names, t, group in walked:
		why = why_of(t)
		if group:
			own = getattr(t, 'forklab_own', None)
			rows.append(Row(names + [OWN_STATUS], ERROR,
					why or ('no result line' if own is None else 'not ok'),
					said_of(t)))
			continue
		path = '/'.join(names)
		row = expected.take(path) if expected else path
		if t.status in (st.FAILURE, st.TEST_CRASHED):
			verdict = ERROR if t.status == st.TEST_CRASHED or incomplete(why) else FAIL
			if verdict == FAIL and expected and row in expected.live:
				verdict = LIVE
			elif verdict == FAIL and expected and row in expected.xfail:
				verdict = XFAIL
			rows.append(Row(names, verdict, why, said_of(t)))
			if verdict == LIVE:
				rows[-1].live_why = expected.live[row]
			if verdict == XFAIL:
				rows[-1].xfail_why = expected.xfail[row]
		elif t.status == st.SUCCESS:
			rows.append(Row(names, PASS if row is not None else UNLISTED,
					'' if row is not None else
					'passed, but the expectations do not list it'))
		elif expected is None or (row is not None and row in expected.skips and
					  why == expected.skips[row]):
			rows.append(Row(names, SKIP, why))
		elif row is not None and row in expected.skips:
			# listed to skip for another reason: this skip is news
			rows.append(Row(names, UNEXPECTED_SKIP,
					f"skipped for '{why}'; the expectations list it "
					f"for '{expected.skips[row]}'"))
		else:
			# SKIPPED, or NO_TESTS (a group with a plan of 0); a
			# program skipped whole is a row of its own
			why = why_of(t, 'no tests' if t.status == st.NO_TESTS else '')
			rows.append(Row(names, UNEXPECTED_SKIP, why or 'no reason given'))
		last = rows[-1]
		if expected and row is not None:
			last.expected = expected.written.get(row, row)
			last.derived = row in expected.derived
		if last.verdict in (SKIP, UNEXPECTED_SKIP):
			last.skip_why = why
	# A program whose failed rows are all live bugs exits 1 for them
	# (kselftest's KSFT_FAIL): its '(exit status)' row is theirs.
	for r in rows:
		if r.names[-1] == OWN_STATUS and r.verdict == ERROR and r.why == 'exit status 1':
			group = [o for o in rows if o.names[:-1] == r.names[:-1] and o is not r]
			if any(o.verdict == LIVE for o in group) and \
			   all(o.verdict in AS_EXPECTED for o in group):
				r.verdict, r.live_why = LIVE, 'the exit status of its live bugs'
			elif any(o.verdict == XFAIL for o in group) and \
			     all(o.verdict in AS_EXPECTED for o in group):
				r.verdict, r.xfail_why = XFAIL, 'the exit status of its expected failures'
	for path in (expected.missing() if expected else []):
		rows.append(Row(path.split('/'), MISSING,
				'the expectations list it; the log does not have it'))
	return rows


def judge(parser, name, log, expected):
	"""Suite @name's rows from the KTAP log @log, judged against
	@expected (Rows, or None); @parser: forklab.ktap.load_parser()'s."""
	suite = Suite(name, log)
	for beside in ('kernel', 'accel'):
		try:
			with open(os.path.join(os.path.dirname(log), beside)) as f:
				setattr(suite, beside, f.readline().strip())
		except OSError:
			pass
	if parser is None:
		suite.broken('no kunit.py: the tree was never prepared')
	elif not os.path.isfile(log) or os.path.getsize(log) == 0:
		# Its rows are missing whole: the suite did not run, or its
		# kernel did not build.
		suite.broken(f'no results: {log} is missing (the suite did not run)', MISSING)
	else:
		kp, parse = parser
		try:
			with open(log, errors='backslashreplace') as f:
				top = parse(f.readlines())
		except Exception:	# the parser's own failure: a log it cannot read
			top = None
		if top is None or top.status == kp.TestStatus.FAILURE_TO_PARSE_TESTS:
			suite.broken(f'the KTAP parser could not read {log}')
		elif not any(not group for _, _, group in walk(kp, top, [], [])):
			suite.broken('no test ran')
		else:
			suite.rows = judge_test(kp, top, expected)
	return suite


def read_suites(suites, expectations, kunit_dir):
	"""[Suite] of @suites ([(name, policy, need, log)]: an optional suite
	whose log does not exist is left out) against @expectations
	({section: Expected}, every suite needing a section), read with the
	parser in @kunit_dir."""
	wanted = {}
	for name, policy, need, log in suites:
		if need == 'unjudged' or need in ('optional', 'own') and not os.path.exists(log):
			continue
		if need == 'own':
			wanted[name] = None
			continue
		section = section_of(expectations, name, policy)
		if section is None:
			raise ResultsError(f'no [{base_of(name, policy)}] section')
		wanted[name] = expectations[section].resolve(policy, f'[{section}]')
		# A run of a chosen part of a list (make mutate NAME..., a
		# shard, CI's share: tools/ci/share) says which, in 'selected'
		# beside its log: the other rows are not this run's to report.
		selected = os.path.join(os.path.dirname(log), 'selected')
		if os.path.isfile(selected):
			with open(selected) as f:
				wanted[name].restrict({line.strip() for line in f if line.strip()})
	parser = ktap.load_parser(kunit_dir)
	return [judge(parser, name, log, wanted[name])
		for name, policy, need, log in suites if name in wanted]


# --- make results ----------------------------------------------------------------

# A suite's rows shown one a line, then 'and N more'; the last lines a
# failed row said, for so many rows (CI keeps only the run's output).
SHOWN_ROWS = 20
SAID_ROWS = 4
SAID_LINES = 3


def report(prog, suite):
	"""make results' lines for @suite: its counts, then one line per row
	that is not as expected, saying why."""
	bad = [r for r in suite.rows if r.verdict not in AS_EXPECTED]
	lines = [f'{prog}: {suite.name}: {suite.passed} passed, {suite.failed} failed, '
		 f'{suite.skipped} skipped' +
		 (f', {suite.live} live bug{"s" * (suite.live != 1)}' if suite.live else '') +
		 (f', {suite.xfailed} expected to fail' if suite.xfailed else '') +
		 (f', {suite.quarantined} quarantined' if suite.quarantined else '') +
		 (f' ({suite.why})' if suite.why else '') +
		 (f'; under {suite.accel}' if suite.accel else '')]
	if suite.why:
		return lines
	for r in [r for r in suite.rows if r.quarantine]:
		if r.verdict == QUARANTINED:
			lines.append(f'{prog}: {suite.name}: {QUARANTINED} {r.path} ({r.quarantined}' +
				     (f': {r.why}' if r.why else '') + f'; quarantined: {r.quarantine})')
		elif r.verdict == PASS:
			lines.append(f'{prog}: {suite.name}: {QUARANTINED} {r.path} passed (quarantined: '
				     f'{r.quarantine}): it may leave the quarantine')
	for r in [r for r in suite.rows if r.verdict == LIVE and r.names[-1] != OWN_STATUS]:
		lines.append(f'{prog}: {suite.name}: {LIVE} {r.path} (live bug in '
			     f'{suite.kernel or "the kernel that ran"}: {r.live_why})')
	for r in [r for r in suite.rows if r.verdict == XFAIL]:
		lines.append(f'{prog}: {suite.name}: {XFAIL} {r.path} ({r.xfail_why})')
	for r in bad[:SHOWN_ROWS]:
		lines.append(f'{prog}: {suite.name}: {r.verdict} {r.path}' +
			     (f' ({r.why})' if r.why else ''))
	if len(bad) > SHOWN_ROWS:
		lines.append(f'{prog}: {suite.name}: ... and {len(bad) - SHOWN_ROWS} more')
	for r in [r for r in bad if r.verdict == FAIL][:SAID_ROWS]:
		for line in r.said[-SAID_LINES:]:
			lines.append(f'{prog}: {suite.name}: {r.path}: {line[:200]}')
	return lines


def main(argv):
	signal.signal(signal.SIGPIPE, signal.SIG_DFL)
	prog, expect_path, kunit_dir, root = argv[:4]
	write_expected = '--write-expected' in argv[4:]
	quarantine_path = None
	if '--quarantine' in argv[4:]:
		quarantine_path = argv[argv.index('--quarantine', 4) + 1]
	suites = []
	for line in sys.stdin:
		if line.strip():
			name, policy, need, log = line.rstrip('\n').split(' ', 3)
			suites.append((name, None if policy == '-' else policy, need, log))
	try:
		expectations = load_expectations(expect_path, root)
		names = [name for name, _, _, _ in suites]
		for section in expectations:
			if section not in names:
				raise ResultsError(f'{expect_path}: [{section}] is no suite '
						   f'(want one of {", ".join(names)})')
		judged = read_suites(suites, expectations, kunit_dir)
		# Read before anything is written; applied after make
		# expected, which writes the rows as they ran.
		quarantined = load_quarantine(quarantine_path) if quarantine_path else {}
		if not write_expected:
			quarantine(judged, quarantined, names)
	except ResultsError as e:
		print(f'{prog}: {expect_path}: {e}' if str(e).startswith('no [') else
		      f'{prog}: {e}', file=sys.stderr)
		return 2
	if write_expected:
		from forklab import expected
		own = {name for name, policy, _, _ in suites
		       if section_of(expectations, name, policy) == name}
		try:
			expected.rewrite(expect_path, judged, own)
		except OSError as e:
			print(f'{prog}: {e.filename}: {e.strerror}', file=sys.stderr)
			return 2
		print(f'{prog}: wrote {expect_path}')
		try:
			quarantine(judged, quarantined, names)
		except ResultsError as e:
			print(f'{prog}: {e}', file=sys.stderr)
			return 2
	total = [0, 0, 0, 0]
	for suite in judged:
		print('\n'.join(report(prog, suite)))
		total[0] += suite.passed
		total[1] += suite.failed
		total[2] += suite.skipped + suite.live_rows + suite.xfailed
		total[3] += suite.quarantined
	print(f'{total[0]} passed, {total[1]} failed, {total[2]} skipped' +
	      (f', {total[3]} quarantined' if total[3] else ''))
	return 1 if total[1] else 0


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
