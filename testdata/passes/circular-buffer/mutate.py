#!/usr/bin/env python3
# Makes a mutant of a lowered kernel for the negative controls: prints the
# `// run:` directives of SOURCE, then LOWERED without the one line that
# matches REGEX (the whole line, leading spaces aside). Fails when no line
# or more than one line matches, so a control never runs an unchanged
# kernel.
#   mutate.py SOURCE LOWERED REGEX
import re
import sys

if len(sys.argv) != 4:
    sys.exit("usage: mutate.py SOURCE LOWERED REGEX")
source, lowered, pattern = sys.argv[1:]
regex = re.compile(pattern)
with open(lowered) as f:
    lines = f.read().split("\n")
hits = [i for i, line in enumerate(lines) if regex.fullmatch(line.strip())]
if len(hits) != 1:
    sys.exit("mutate.py: %d lines of %s match %r, expected 1" %
             (len(hits), lowered, pattern))
del lines[hits[0]]
with open(source) as f:
    for line in f:
        if line.startswith("// run:"):
            sys.stdout.write(line)
sys.stdout.write("\n".join(lines))
