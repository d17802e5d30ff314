# SPDX-License-Identifier: GPL-2.0
"""The KTAP parser of a kernel tree (kunit.py's kunit_parser), as the
results model (forklab.results) reads logs with it."""

import importlib.util
import inspect
import os
import sys


def tree_module(kunit_dir, name):
	"""The tree's module @name of @kunit_dir, imported under its own name
	as kunit.py imports it (kunit_parser imports kunit_printer so); once
	per process, as an import is."""
	if name not in sys.modules:
		spec = importlib.util.spec_from_file_location(
			name, os.path.join(kunit_dir, f'{name}.py'))
		module = importlib.util.module_from_spec(spec)
		sys.modules[name] = module
		spec.loader.exec_module(module)
	return sys.modules[name]


def load_parser(kunit_dir):
	"""(kunit_parser, parse) with the parser's output going nowhere;
	None if KUNIT_DIR has no kunit_parser.py."""
	if not os.path.isfile(os.path.join(kunit_dir, 'kunit_parser.py')):
		return None
	kunit_printer = tree_module(kunit_dir, 'kunit_printer')
	kunit_parser = tree_module(kunit_dir, 'kunit_parser')

	quiet = kunit_printer.Printer(open(os.devnull, 'w'))
	# 6.12's parser prints through its module's 'stdout'; later trees
	# hand a printer to parse_run_tests().
	kunit_parser.stdout = quiet
	takes_printer = len(inspect.signature(
		kunit_parser.parse_run_tests).parameters) > 1

	def parse(lines):
		"""The parser's Test tree of @lines, each test that had a result
		line carrying its own status (forklab_own) and directive
		(forklab_why), for the results model (see result_lines())."""
		lines = list(lines)
		if takes_printer:
			top = kunit_parser.parse_run_tests(lines, quiet)
		else:
			top = kunit_parser.parse_run_tests(lines)
		attach(kunit_parser, top, result_lines(kunit_parser, lines))
		return top
	return kunit_parser, parse


# The parser drops what follows '#' on a result line ('# exit status 125',
# '# SKIP why'), and a group's status becomes TEST_CRASHED when a subtest
# is missing, even after its own 'ok'. The results model needs both: the
# status of each test's own result line and its directive. They are read
# beside the parser, not by changing it: the same lines it reads
# (its extract_tap_lines()), matched to its tests in the order it takes
# result lines (each test's after its subtests'), by name, as it does
# (peek_test_name_match()): a test whose result line is missing takes
# none.

def result_lines(kp, lines):
	"""[(status, name, directive)] of every result line the parser sees
	in @lines, in order."""
	stream = kp.extract_tap_lines(lines)
	found = []
	while stream:
		line = stream.pop()
		m = kp.TEST_RESULT.match(line)
		if not m:
			continue
		skip = kp.TEST_RESULT_SKIP.match(line)
		name = skip.group(4) if skip else m.group(4)
		directive = (m.group(5) or '').strip().lstrip('#').strip()
		if skip:
			status = kp.TestStatus.SKIPPED
			directive = directive[len('SKIP'):].strip()
		elif m.group(1) == 'ok':
			status = kp.TestStatus.SUCCESS
		else:
			status = kp.TestStatus.FAILURE
		found.append((status, name, directive))
	return found


def attach(kp, top, found):
	"""Give each test under @top its result line of @found."""
	cursor = 0

	def walk(test):
		nonlocal cursor
		for sub in test.subtests:
			walk(sub)
			if cursor < len(found) and found[cursor][1] == sub.name:
				status, _, directive = found[cursor]
				sub.forklab_own = status
				if directive:
					sub.forklab_why = directive
				cursor += 1
	walk(top)
