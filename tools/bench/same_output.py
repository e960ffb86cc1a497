#!/usr/bin/env python3
"""Checks that two kir-opt builds print the same thing: the claim a change
that only makes the passes faster must keep.

Runs both binaries on every testdata `.kir` file (--split-input-file) with
four flag sets (the default pipeline; with `--check-syncs
--check-fences=writers`; with `--stats`; verification alone) and on
generated kernels (pipeline_bench.py's loop nests, straight-line and
loop-body kernels and TMA-store units) through the default pipeline, and
compares stdout and stderr. Lines naming a reproducer file (a random name)
are left out, and each binary's path reads `kir-opt`. Prints each
difference and a count; exits 1 if any.

--normalize 'REGEX=>REPLACEMENT' (repeatable) rewrites the new binary's
output before comparing, for a printed form that changed on purpose
(` \\{predicated\\}=>`). --testdata compares on another tree's testdata
(for a binary too old to parse today's), --pipeline-only keeps the first
two flag sets (`--stats` counters come and go between versions),
--max-depth sets the deepest loop nest (default 6), and --quick leaves out
the generated kernels of 10k ops and the larger TMA units (a build from
before the analysis layer takes minutes on those and on depth 6).

usage: same_output.py --old PATH --new PATH [--testdata DIR]
                      [--normalize 'REGEX=>REPL' ...] [--pipeline-only]
                      [--max-depth N] [--quick] [-j N]
"""

import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import pipeline_bench  # pylint: disable=wrong-import-position

FLAG_SETS = [
    ["--pipeline=default"],
    ["--pipeline=default", "--check-syncs", "--check-fences=writers"],
    ["--pipeline=default", "--stats"],
    [],
]
REPRODUCER_LINE = re.compile(r"^.*reproducer written to .*\n?", re.M)


def run(binary, path, flags, normalize, cwd):
  result = subprocess.run([binary, path] + flags, capture_output=True,
                          text=True, cwd=cwd, timeout=600)
  out = result.stdout + result.stderr + "exit %d\n" % result.returncode
  out = REPRODUCER_LINE.sub("", out.replace(binary, "kir-opt"))
  for pattern, replacement in normalize:
    out = re.sub(pattern, replacement, out)
  return out


def generated_kernels(directory, max_depth, quick):
  """Writes the generated kernels into `directory`; returns their paths."""
  paths = []
  for depth in range(1, max_depth + 1):
    path = os.path.join(directory, "nest%d.kir" % depth)
    with open(path, "w") as f:
      f.write(pipeline_bench.nest_kernel(depth))
    paths.append(path)
  for ops in [1000] if quick else [1000, 10000]:
    for in_loop in (False, True):
      path = os.path.join(directory, "%s%d.kir" %
                          ("loop" if in_loop else "straight", ops))
      with open(path, "w") as f:
        pipeline_bench.write_straight_kernel(f, ops, in_loop)
      paths.append(path)
  for units in [100] if quick else [100, 300]:
    path = os.path.join(directory, "tma%d.kir" % units)
    with open(path, "w") as f:
      pipeline_bench.write_tma_kernel(f, units)
    paths.append(path)
  return paths


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--old", required=True)
  parser.add_argument("--new", required=True)
  parser.add_argument("--testdata", default=os.path.join(ROOT, "testdata"))
  parser.add_argument("--normalize", action="append", default=[])
  parser.add_argument("--pipeline-only", action="store_true")
  parser.add_argument("--max-depth", type=int, default=6)
  parser.add_argument("--quick", action="store_true")
  parser.add_argument("-j", type=int, default=os.cpu_count() or 1)
  args = parser.parse_args()
  old, new = os.path.abspath(args.old), os.path.abspath(args.new)
  normalize = []
  for rule in args.normalize:
    if "=>" not in rule:
      parser.error("--normalize takes REGEX=>REPLACEMENT: %r" % rule)
    normalize.append(tuple(rule.split("=>", 1)))

  cwd = os.path.dirname(os.path.abspath(args.testdata))
  files = sorted(
      os.path.relpath(f, cwd)
      for f in glob.glob(os.path.join(args.testdata, "**", "*.kir"),
                         recursive=True)
      if os.sep + "Inputs" + os.sep not in f)
  flag_sets = FLAG_SETS[:2] if args.pipeline_only else FLAG_SETS
  jobs = [(f, ["--split-input-file"] + flags) for f in files
          for flags in flag_sets]
  with tempfile.TemporaryDirectory() as directory:
    jobs += [(path, ["--pipeline=default"])
             for path in generated_kernels(directory, args.max_depth, args.quick)]

    def differs(job):
      path, flags = job
      return (run(old, path, flags, [], cwd) !=
              run(new, path, flags, normalize, cwd))

    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
      results = list(pool.map(differs, jobs))
  different = [job for job, bad in zip(jobs, results) if bad]
  for path, flags in different:
    print("differs: %s %s" % (os.path.basename(path) if path.startswith(
        tempfile.gettempdir()) else path, " ".join(flags)))
  print("%d runs, %d differ (%d testdata files, %d generated kernels)" %
        (len(jobs), len(different), len(files), len(jobs) - len(flag_sets) * len(files)))
  return 1 if different else 0


if __name__ == "__main__":
  sys.exit(main())
