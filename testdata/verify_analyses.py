#!/usr/bin/env python3
"""Runs kir-opt with --verify-analyses over every golden.

For each testdata/**/*.kir, the default pipeline and every pipeline its RUN
lines give kir-opt run with --verify-analyses (split at `// -----` as the
golden is): after each pass, every analysis the pass kept is rebuilt from
scratch and compared. The golden's own checks are lit's business; this
fails only when a kept analysis answers differently from a fresh one.

Usage: verify_analyses.py KIR_OPT TESTDATA_DIR
"""
import os
import re
import subprocess
import sys

STALE = "left a stale analysis"
PIPELINE = re.compile(r"--pipeline[= ]('[^']*'|\"[^\"]*\"|\S+)")


def pipelines(text):
    found = {"default"}
    for line in text.splitlines():
        if "RUN:" not in line or "kir-opt" not in line:
            continue
        for match in PIPELINE.finditer(line):
            found.add(match.group(1).strip("'\""))
    return sorted(found)


def main():
    kir_opt, root = sys.argv[1], sys.argv[2]
    failures = 0
    runs = 0
    for directory, _, names in sorted(os.walk(root)):
        if "Inputs" in directory.split(os.sep):
            continue
        for name in sorted(names):
            if not name.endswith(".kir"):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8", errors="replace") as source:
                text = source.read()
            for pipeline in pipelines(text):
                runs += 1
                result = subprocess.run(
                    [kir_opt, path, "--split-input-file", "--verify-analyses",
                     "--pipeline=" + pipeline, "--reproducer=" + os.devnull,
                     "-o", os.devnull],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    text=True, errors="replace", timeout=300)
                if STALE in result.stderr:
                    failures += 1
                    print("error: %s --pipeline='%s':\n%s" %
                          (os.path.relpath(path, root), pipeline,
                           result.stderr))
    print("%d kir-opt runs with --verify-analyses, %d with a stale analysis" %
          (runs, failures))
    return 1 if failures or runs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
