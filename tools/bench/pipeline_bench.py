#!/usr/bin/env python3
"""Times the default pipeline: how its cost grows with loop depth and kernel
size, and what it costs on the examples.

Three families of kernels, each through `kir-opt --pipeline=default`:

  examples   every unlowered testdata/examples/*.kir;
  depth D    one shared write and a read of another thread's element inside
             a nest of D loops of two iterations (insert-syncs must order
             the pair within an iteration and around every loop);
  size N     a straight-line kernel of about N ops: units of a shared write,
             a read of another thread's element and a register store, each
             unit needing barriers against its neighbours.

Each kernel runs --repeat times (median of CPU time, user + sys, of the
child process; wall time beside it); a run over --timeout seconds is
reported as such and ends that family's larger sizes. Prints a table and
writes everything to --json; --readme puts the table into the README
between `<!-- pipeline-bench:begin -->` and `<!-- pipeline-bench:end -->`.

usage: pipeline_bench.py [--kir-opt PATH] [--depths 1,...] [--sizes 1000,...]
                         [--repeat 5] [--timeout 120] [--json FILE]
                         [--readme README.md]
"""

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


# Both families' first ops: the thread's element, its mirror, the buffers.
PROLOGUE = [
    "  %c0 = const 0 : index",
    "  %c1 = const 1 : index",
    "  %c2 = const 2 : index",
    "  %c127 = const 127 : index",
    "  %f = const 1.0 : f32",
    "  %tx = thread.id x : index",
    "  %mirror = sub %c127, %tx : index",
    "  %s = alloc.shared : shared f32[128]",
    "  %acc = alloc.reg : reg f32[1]",
]


def nest_kernel(depth):
  lines = ["kernel @nest() block(128) {"] + PROLOGUE
  for d in range(depth):
    lines.append("  " * (d + 1) + "for %%i%d = %%c0 to %%c2 step %%c1 {" % d)
  pad = "  " * (depth + 1)
  lines += [
      pad + "store %s[%tx], %f",
      pad + "%v = load %s[%mirror] : f32",
      pad + "store %acc[%c0], %v",
  ]
  for d in reversed(range(depth)):
    lines.append("  " * (d + 1) + "}")
  lines.append("}")
  return "\n".join(lines) + "\n"


UNIT_OPS = 3  # store, load, register store


def straight_kernel(ops):
  """About `ops` ops; returns (text, op count)."""
  units = max(1, (ops - len(PROLOGUE)) // UNIT_OPS)
  lines = ["kernel @straight() block(128) {"] + PROLOGUE
  for u in range(units):
    lines += [
        "  store %s[%tx], %f",
        "  %%v%d = load %%s[%%mirror] : f32" % u,
        "  store %%acc[%%c0], %%v%d" % u,
    ]
  lines.append("}")
  return "\n".join(lines) + "\n", len(PROLOGUE) + units * UNIT_OPS


def time_once(kir_opt, path, timeout):
  """(cpu seconds, wall seconds), or None past the timeout."""
  before = resource.getrusage(resource.RUSAGE_CHILDREN)
  start = time.monotonic()
  try:
    subprocess.run([kir_opt, path, "--pipeline=default", "-o", os.devnull],
                   check=True, timeout=timeout, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)
  except subprocess.TimeoutExpired:
    return None
  wall = time.monotonic() - start
  after = resource.getrusage(resource.RUSAGE_CHILDREN)
  cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
  return cpu, wall


def measure(kir_opt, path, repeat, timeout):
  samples = []
  for _ in range(repeat):
    sample = time_once(kir_opt, path, timeout)
    if sample is None:
      return {"timed_out": True, "timeout_s": timeout}
    samples.append(sample)
    if sample[1] > timeout / 4:  # slow: one more run is enough
      repeat = min(repeat, 2)
  return {
      "cpu_s": statistics.median(s[0] for s in samples),
      "wall_s": statistics.median(s[1] for s in samples),
      "runs": len(samples),
  }


def seconds(result):
  if result.get("timed_out"):
    return "> %d" % result["timeout_s"]
  value = result["cpu_s"]
  return "%.3f" % value if value < 10 else "%.1f" % value


def table(data):
  rows = ["| kernel | ops | CPU s (median) | growth |", "|---|---|---|---|"]
  previous = None
  for entry in data["results"]:
    growth = ""
    same_family = previous and previous["family"] == entry["family"]
    if (same_family and entry["family"] != "example" and
        not previous["result"].get("timed_out") and
        not entry["result"].get("timed_out") and previous["result"]["cpu_s"] > 0):
      growth = "%.1fx" % (entry["result"]["cpu_s"] / previous["result"]["cpu_s"])
    ops = "" if entry["ops"] is None else str(entry["ops"])
    rows.append("| %s | %s | %s | %s |" %
                (entry["name"], ops, seconds(entry["result"]), growth))
    previous = entry
  rows.append("")
  rows.append(
      "kir-opt %s, `--pipeline=default`, median CPU time (user + sys) of %d "
      "runs (2 when a run takes over a quarter of the %d s timeout), %s, %s. "
      "Growth: against the row above (depth + 1, or about 3x the ops)." %
      (data["commit"], data["repeat"], data["timeout_s"], data["machine"],
       data["date"]))
  return "\n".join(rows)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--kir-opt",
                      default=os.path.join(ROOT, "build-ci", "tools",
                                           "kir-opt", "kir-opt"))
  parser.add_argument("--depths", default="1,2,3,4,5,6,7,8")
  parser.add_argument("--sizes", default="100,300,1000,3000")
  parser.add_argument("--repeat", type=int, default=5)
  parser.add_argument("--timeout", type=int, default=120)
  parser.add_argument("--note", default="",
                      help="said after the machine in the table's footnote "
                      "(e.g. that it was shared with other work)")
  parser.add_argument("--json")
  parser.add_argument("--readme")
  args = parser.parse_args()

  commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
  data = {
      "commit": commit,
      "date": datetime.date.today().isoformat(),
      "machine": "%s, %d cores%s" % (platform.machine(), os.cpu_count(),
                                     ", " + args.note if args.note else ""),
      "repeat": args.repeat,
      "timeout_s": args.timeout,
      "results": [],
  }

  def record(family, name, ops, path):
    result = measure(args.kir_opt, path, args.repeat, args.timeout)
    data["results"].append(
        {"family": family, "name": name, "ops": ops, "result": result})
    print("%-28s %7s ops  %s s" % (name, ops or "", seconds(result)),
          flush=True)
    return not result.get("timed_out")

  examples = os.path.join(ROOT, "testdata", "examples")
  for name in sorted(os.listdir(examples)):
    # The examples are the kernels that have a hand-lowered twin.
    if not name.endswith(".lowered.kir"):
      continue
    stem = name[:-len(".lowered.kir")]
    record("example", stem, None, os.path.join(examples, stem + ".kir"))

  with tempfile.TemporaryDirectory() as tmp:
    for depth in (int(d) for d in args.depths.split(",")):
      path = os.path.join(tmp, "nest%d.kir" % depth)
      with open(path, "w", encoding="utf-8") as f:
        f.write(nest_kernel(depth))
      if not record("depth", "loop depth %d" % depth, 10 + depth, path):
        break
    for size in (int(s) for s in args.sizes.split(",")):
      text, ops = straight_kernel(size)
      path = os.path.join(tmp, "straight%d.kir" % size)
      with open(path, "w", encoding="utf-8") as f:
        f.write(text)
      if not record("size", "straight-line", ops, path):
        break

  text = table(data)
  print()
  print(text)
  if args.json:
    with open(args.json, "w", encoding="utf-8") as f:
      json.dump(data, f, indent=1)
      f.write("\n")
  if args.readme:
    with open(args.readme, encoding="utf-8") as f:
      readme = f.read()
    begin, end = "<!-- pipeline-bench:begin -->", "<!-- pipeline-bench:end -->"
    head, rest = readme.split(begin)
    _, tail = rest.split(end)
    with open(args.readme, "w", encoding="utf-8") as f:
      f.write(head + begin + "\n" + text + "\n" + end + tail)
  return 0


if __name__ == "__main__":
  sys.exit(main())
