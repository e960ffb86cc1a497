#!/usr/bin/env python3
"""Counts how many instructions of one opcode sit in divergence regions.

    kir-run --emit=sass FILE | sass_divergence.py UTMASTG

reads cuobjdump -sass output and prints, per function,

    <function>: UTMASTG 1, inside BSSY/BSYNC 0

A region opens at `BSSY Bn, target` and closes at the `BSYNC Bn` that
reconverges it (ptxas puts the BSYNC at the target label); an instruction
between the two is inside it, whatever branches lie around it.
"""
import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: sass_divergence.py OPCODE < sass")
    opcode = sys.argv[1]
    function = None
    counts = {}
    open_regions = set()
    for line in sys.stdin:
        header = re.search(r"Function : (\S+)", line)
        if header:
            function = header.group(1)
            counts[function] = [0, 0]
            open_regions = set()
            continue
        instruction = re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
        if not instruction or function is None:
            continue
        text = instruction.group(1)
        text = re.sub(r"^@!?U?P\w+\s+", "", text)  # a guard predicate
        words = text.split()
        if not words:
            continue
        name = words[0]
        if name.startswith("BSSY"):
            open_regions.add(words[1].rstrip(","))
        elif name.startswith("BSYNC"):
            open_regions.discard(words[1].rstrip(","))
        elif name.split(".")[0] == opcode:
            counts[function][0] += 1
            if open_regions:
                counts[function][1] += 1
    for function, (total, inside) in counts.items():
        if total:
            print("%s: %s %d, inside BSSY/BSYNC %d" %
                  (function, opcode, total, inside))


if __name__ == "__main__":
    main()
