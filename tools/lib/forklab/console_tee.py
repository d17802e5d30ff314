# SPDX-License-Identifier: GPL-2.0
"""The guest's console, as tools/guest/uml-run --shell shows it: stdin to
stdout, the terminal, and as it came to a log file, the console log the
verdict reads. The guest sets the terminal raw (no output processing),
and UML's console writes the kernel's messages with a bare newline: each
newline goes to the terminal as CR LF, or the lines would step right.
Byte by byte as they come, so that a prompt without a newline shows.

Usage: python3 -m forklab.console_tee LOG (tools/guest/uml-run runs it).
"""

import os
import signal
import sys


def write_all(fd, data):
	while data:
		data = data[os.write(fd, data):]


def main(argv):
	if len(argv) != 1:
		print('guest/console-tee: usage: python3 -m forklab.console_tee LOG', file=sys.stderr)
		return 2
	signal.signal(signal.SIGPIPE, signal.SIG_DFL)
	with open(argv[0], 'ab', buffering=0) as log:
		while True:
			data = os.read(0, 65536)
			if not data:
				return 0
			log.write(data)
			write_all(1, data.replace(b'\r\n', b'\n').replace(b'\n', b'\r\n'))


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
