# SPDX-License-Identifier: GPL-2.0
"""The rows of one KTAP log, as the results model reads them, without
expectations: what tools/run/mutants and tools/run/museum name a mutant's
or an exhibit's killers with.

tools/judge/rows runs it (python3 -m forklab.rows) and documents it."""

import argparse
import os
import signal
import sys

import forklab
from forklab import ktap, results

# Messages start with the tool's path below tools/.
PROG = 'judge/rows'


def failed_name(row):
	"""A failed row as a Caught-by: line names it: its group and itself
	('fork_hugetlb_test: poison marker: kept in the child', 'cow: ...');
	a top-level row alone ('boot')."""
	return ': '.join(row.names[-2:])


def main(argv, doc):
	ap = forklab.ArgumentParser(prog=PROG,
		description=doc.split('\n\n')[0],
		formatter_class=argparse.RawDescriptionHelpFormatter,
		epilog=doc.split('\n\n', 1)[1])
	ap.add_argument('--failed', action='store_true',
			help='the rows that failed (FAIL, ERROR) only, as "GROUP: ROW"')
	ap.add_argument('--missing-ok', action='store_true',
			help='print nothing for a missing or empty log')
	ap.add_argument('--kunit-dir', required=True,
			help="the directory of the tree's kunit_parser.py")
	ap.add_argument('log', help='a KTAP log')
	args = ap.parse_args(argv)
	signal.signal(signal.SIGPIPE, signal.SIG_DFL)
	parser = ktap.load_parser(args.kunit_dir)
	if parser is None:
		print(f'{PROG}: error: no kunit_parser.py in {args.kunit_dir}', file=sys.stderr)
		return 2
	suite = results.judge(parser, os.path.basename(args.log), args.log, None)
	if suite.why:
		if args.missing_ok and suite.rows[0].verdict == results.MISSING:
			return 0
		print(f'{PROG}: error: {suite.why}', file=sys.stderr)
		return 2
	for row in suite.rows:
		if not args.failed:
			print(row.verdict, row.path)
		elif row.verdict in (results.FAIL, results.ERROR):
			print(failed_name(row))
	return 0


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:], __doc__))
