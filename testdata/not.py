#!/usr/bin/env python3
# Runs a command and inverts its exit status, for systems without LLVM's
# `not`: exits 0 when the command failed normally, 1 when it succeeded or
# crashed (a signal is never a pass).
import subprocess
import sys

if len(sys.argv) < 2:
    sys.exit("usage: not.py COMMAND [ARG...]")
result = subprocess.run(sys.argv[1:])
sys.exit(0 if result.returncode > 0 else 1)
