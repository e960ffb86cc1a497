#!/usr/bin/env python3
# Makes a mutant of a lowered kernel for the negative controls: prints the
# `// run:` directives of SOURCE, then LOWERED without the one line that
# matches REGEX (the whole line, leading spaces aside). Fails when no line
# or more than one line matches, so a control never runs an unchanged
# kernel; with NTH, deletes the NTH (1-based) of the lines that match, and
# fails when fewer match. SOURCE may be /dev/null (no directives: a second
# mutation of a mutant).
#   mutate.py SOURCE LOWERED REGEX [NTH]
import re
import sys

if len(sys.argv) not in (4, 5):
    sys.exit("usage: mutate.py SOURCE LOWERED REGEX [NTH]")
source, lowered, pattern = sys.argv[1:4]
nth = int(sys.argv[4]) if len(sys.argv) == 5 else None
regex = re.compile(pattern)
with open(lowered) as f:
    lines = f.read().split("\n")
hits = [i for i, line in enumerate(lines) if regex.fullmatch(line.strip())]
if nth is None and len(hits) != 1:
    sys.exit("mutate.py: %d lines of %s match %r, expected 1" %
             (len(hits), lowered, pattern))
if nth is not None and not 1 <= nth <= len(hits):
    sys.exit("mutate.py: %d lines of %s match %r, expected at least %d" %
             (len(hits), lowered, pattern, nth))
del lines[hits[0 if nth is None else nth - 1]]
with open(source) as f:
    for line in f:
        if line.startswith("// run:"):
            sys.stdout.write(line)
sys.stdout.write("\n".join(lines))
