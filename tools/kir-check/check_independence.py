#!/usr/bin/env python3
"""Fails if kir-check's oracle uses the passes' model of the ops.

The interpreter and hazard checker (every source of tools/kir-check except
the driver files below and the tests) may include the IR, its types, the
parser and run directives, but nothing from the effects table, the analysis
layer (analysis/: thread analysis, conflicts, ordering, async groups and the
verifier, which uses the thread analysis) or passes/. The driver files lower kernels
through the passes and may include the pipeline and the verifier; none may
include the analyses themselves.

Usage: check_independence.py TOOLS_KIR_CHECK_DIR
"""
import os
import re
import sys

ANALYSES = ("ir/effects.h",)
DRIVER = {"lower.h", "lower.cc", "main.cc", "interp_target.h",
          "interp_target.cc", "mutate.h", "mutate.cc", "fuzz.h", "fuzz.cc"}
DRIVER_MAY_INCLUDE = ("passes/pipeline.h", "analysis/verifier.h")


def main():
    directory = sys.argv[1]
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    problems = []
    checked = 0
    for name in sorted(os.listdir(directory)):
        if not name.endswith((".h", ".cc")) or name.endswith("_test.cc"):
            continue
        checked += 1
        with open(os.path.join(directory, name), encoding="utf-8") as source:
            for number, line in enumerate(source, 1):
                match = include.match(line)
                if not match:
                    continue
                header = match.group(1)
                forbidden = (header in ANALYSES or
                             (header.startswith("analysis/") and
                              header not in DRIVER_MAY_INCLUDE))
                if name in DRIVER:
                    forbidden |= (header.startswith("passes/") and
                                  header not in DRIVER_MAY_INCLUDE)
                else:
                    forbidden |= (header.startswith("passes/") or
                                  header == "analysis/verifier.h")
                if forbidden:
                    problems.append("%s:%d: includes %s" % (name, number,
                                                            header))
    for problem in problems:
        print("error: tools/kir-check/" + problem +
              " (kir-check must not use the passes' op semantics)")
    print("%d files checked, %d forbidden includes" % (checked, len(problems)))
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
