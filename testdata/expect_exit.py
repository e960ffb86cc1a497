#!/usr/bin/env python3
# Runs a command and succeeds only if it exits with the given code:
#   expect_exit.py CODE COMMAND [ARG...]
# Its output passes through, so it can be piped into FileCheck.
import subprocess
import sys

if len(sys.argv) < 3:
    sys.exit("usage: expect_exit.py CODE COMMAND [ARG...]")
expected = int(sys.argv[1])
result = subprocess.run(sys.argv[2:])
if result.returncode != expected:
    sys.stderr.write("expect_exit.py: exit code %d, expected %d\n" %
                     (result.returncode, expected))
    sys.exit(1)
