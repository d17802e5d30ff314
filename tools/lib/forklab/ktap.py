# SPDX-License-Identifier: GPL-2.0
"""The KTAP parser of a kernel tree (kunit.py's kunit_parser), as the
results model (forklab.results) reads logs with it."""

import inspect
import os
import sys


def load_parser(kunit_dir):
	"""(kunit_parser, parse) with the parser's output going nowhere;
	None if KUNIT_DIR has no kunit_parser.py."""
	if not os.path.isfile(os.path.join(kunit_dir, 'kunit_parser.py')):
		return None
	sys.path.insert(0, kunit_dir)
	import kunit_printer
	import kunit_parser

	quiet = kunit_printer.Printer(open(os.devnull, 'w'))
	# 6.12's parser prints through its module's 'stdout'; later trees
	# hand a printer to parse_run_tests().
	kunit_parser.stdout = quiet
	takes_printer = len(inspect.signature(
		kunit_parser.parse_run_tests).parameters) > 1

	# The parser drops what follows '#' on a result line ('# exit status
	# 125', '# SKIP why'), and a group's status becomes TEST_CRASHED when
	# a subtest is missing, even after 'ok': keep both the status of the
	# result line and its directive on the test, for the counts below.
	parse_result = kunit_parser.parse_test_result

	def parse_test_result(lines, test, *args):
		line = lines.peek()
		ok = parse_result(lines, test, *args)
		if ok:
			test.forklab_own = test.status
		m = kunit_parser.TEST_RESULT.match(line)
		if ok and m and m.group(5):
			why = m.group(5).strip().lstrip('#').strip()
			if why.startswith('SKIP'):
				why = why[len('SKIP'):].strip()
			test.forklab_why = why
		return ok
	kunit_parser.parse_test_result = parse_test_result

	def parse(lines):
		if takes_printer:
			return kunit_parser.parse_run_tests(lines, quiet)
		return kunit_parser.parse_run_tests(lines)
	return kunit_parser, parse
