#!/usr/bin/env python3
"""Times kir-opt against mlir-opt on the same kernel at growing sizes.

For each size, tools/bench/gen.py writes the kernel as .kir and as MLIR, and
each tool parses, verifies and prints it (`TOOL FILE -o /dev/null`) --repeat
times, the two tools taking turns; the median CPU time (user + sys of the
child) counts, so that other work on a shared machine skews it less than
wall time. Each run also keeps the speed-ups of the two runs before it in
the JSON ("occasions"), so that the table reports three separate
measurements. Prints a
table, checks that kir-opt is linear (10x the ops costs at most 11x the
time) and at least --target times faster than mlir-opt per op, and writes
everything to --json.
Exits non-zero if a tool fails or kir-opt misses a check.

usage: run.py [--kir-opt PATH] [--mlir-opt PATH] [--sizes 10000,100000,...]
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gen  # pylint: disable=wrong-import-position

LINEAR_LIMIT = 11.0  # time ratio allowed for 10x the ops


def default_kir_opt():
  for build in ("build-ci", "build"):
    for rel in ("tools/kir-opt/kir-opt", "tools/kir-opt"):
      path = os.path.join(ROOT, build, rel)
      if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
  return os.path.join(ROOT, "build-ci", "tools", "kir-opt", "kir-opt")


def time_once(command):
  """Wall seconds, CPU seconds and peak RSS (KiB) of one run; exits if the
  command fails."""
  start = time.perf_counter()
  process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
  _, status, usage = os.wait4(process.pid, 0)
  seconds = time.perf_counter() - start
  stderr = process.stderr.read().decode(errors="replace")
  process.stderr.close()
  process.returncode = os.waitstatus_to_exitcode(status)
  if process.returncode != 0:
    sys.exit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr}")
  return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def summarize(runs, size_bytes, ops):
  seconds = statistics.median(cpu for _, cpu, _ in runs)
  return {
      "bytes": size_bytes,
      "seconds": seconds,
      "runs_cpu": [round(cpu, 6) for _, cpu, _ in runs],
      "wall_seconds": statistics.median(wall for wall, _, _ in runs),
      "ops_per_second": ops / seconds,
      "mb_per_second": size_bytes / seconds / 1e6,
      "max_rss_kib": max(rss for _, _, rss in runs),
  }


def earlier_occasions(path):
  """The occasions recorded by earlier runs with the same statistic."""
  try:
    with open(path) as f:
      earlier = json.load(f)
  except (OSError, ValueError):
    return []
  if earlier.get("statistic") != "median CPU time (user + sys)":
    return []
  return earlier.get("occasions", [])


def tool_version(command):
  try:
    out = subprocess.run(command + ["--version"], capture_output=True,
                         text=True, timeout=30).stdout
  except OSError:
    return "?"
  for line in out.splitlines():
    if "version" in line.lower():
      return line.strip()
  return out.strip().splitlines()[0] if out.strip() else "?"


def cpu_model():
  try:
    with open("/proc/cpuinfo") as f:
      for line in f:
        if line.startswith("model name"):
          return line.split(":", 1)[1].strip()
  except OSError:
    pass
  return platform.processor() or "?"


def build_type(kir_opt):
  """CMAKE_BUILD_TYPE of the tree kir-opt was built in, if found."""
  directory = os.path.dirname(kir_opt)
  while directory and directory != os.path.dirname(directory):
    cache = os.path.join(directory, "CMakeCache.txt")
    if os.path.exists(cache):
      with open(cache) as f:
        for line in f:
          if line.startswith("CMAKE_BUILD_TYPE:"):
            return line.split("=", 1)[1].strip()
      return "?"
    directory = os.path.dirname(directory)
  return "?"


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--kir-opt", default=default_kir_opt())
  parser.add_argument("--mlir-opt", default="mlir-opt-19")
  parser.add_argument("--sizes", default="10000,100000,1000000")
  parser.add_argument("--repeat", type=int, default=5)
  parser.add_argument("--target", type=float, default=2.0,
                      help="required kir-opt/mlir-opt speed ratio per op")
  parser.add_argument("--workdir", default=os.path.join(ROOT, "build-bench"))
  parser.add_argument("--json", default=os.path.join(HERE, "results.json"))
  args = parser.parse_args()

  os.makedirs(args.workdir, exist_ok=True)
  # Other work on the machine skews wall times; record how busy it was.
  load_before = round(os.getloadavg()[0], 2)
  rows = []
  for requested in (int(s) for s in args.sizes.split(",")):
    kir_text, mlir_text, ops = gen.generate(requested)
    stem = os.path.join(args.workdir, f"bench-{requested}")
    with open(stem + ".kir", "w") as f:
      f.write(kir_text)
    with open(stem + ".mlir", "w") as f:
      f.write(mlir_text)
    # Alternate the tools so that both see the same background load.
    kir_runs, mlir_runs = [], []
    for _ in range(args.repeat):
      kir_runs.append(
          time_once([args.kir_opt, stem + ".kir", "-o", os.devnull]))
      mlir_runs.append(
          time_once([args.mlir_opt, stem + ".mlir", "-o", os.devnull]))
    row = {"ops": ops,
           "kir": summarize(kir_runs, len(kir_text), ops),
           "mlir": summarize(mlir_runs, len(mlir_text), ops)}
    row["speedup"] = row["mlir"]["seconds"] / row["kir"]["seconds"]
    rows.append(row)
    print(f"measured {ops} ops", file=sys.stderr)

  # Linearity: each step up in size against the one before it.
  linearity = []
  for small, large in zip(rows, rows[1:]):
    step = {"from_ops": small["ops"], "to_ops": large["ops"]}
    op_ratio = large["ops"] / small["ops"]
    for tool in ("kir", "mlir"):
      time_ratio = large[tool]["seconds"] / small[tool]["seconds"]
      step[tool + "_time_ratio"] = time_ratio
      step[tool + "_linear"] = time_ratio <= op_ratio * LINEAR_LIMIT / 10
    linearity.append(step)

  commit = subprocess.run(
      ["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
      capture_output=True, text=True).stdout.strip() or "?"
  results = {
      "date": datetime.date.today().isoformat(),
      "machine": {"cpu": cpu_model(), "cores": os.cpu_count(),
                  "load_average_before": load_before},
      "kir_opt": {"command": "kir-opt FILE -o /dev/null",
                  "build_type": build_type(args.kir_opt),
                  "commit": commit},
      "mlir_opt": {"command": "mlir-opt-19 FILE -o /dev/null",
                   "version": tool_version([args.mlir_opt])},
      "repeat": args.repeat,
      "statistic": "median CPU time (user + sys)",
      "target_speedup": args.target,
      "rows": rows,
      "linearity": linearity,
  }
  results["occasions"] = earlier_occasions(args.json) + [{
      "date": results["date"],
      "load_average_before": load_before,
      "commit": commit,
      "speedups": {str(r["ops"]): round(r["speedup"], 3) for r in rows},
      "kir_bytes_per_op": {
          str(r["ops"]): round(r["kir"]["max_rss_kib"] * 1024 / r["ops"])
          for r in rows},
      # Time ratio of each step up in size, kir-opt's and mlir-opt's.
      "growth": [{"from_ops": s["from_ops"], "to_ops": s["to_ops"],
                  "kir": round(s["kir_time_ratio"], 2),
                  "mlir": round(s["mlir_time_ratio"], 2)}
                 for s in linearity],
  }]
  results["occasions"] = results["occasions"][-3:]
  with open(args.json, "w") as f:
    json.dump(results, f, indent=2)
    f.write("\n")

  import table  # pylint: disable=import-outside-toplevel
  print(table.render(results))
  failures = [f"kir-opt is not linear from {s['from_ops']} to {s['to_ops']} "
              f"ops ({s['kir_time_ratio']:.1f}x the time)"
              for s in linearity if not s["kir_linear"]]
  failures += [f"kir-opt is only {r['speedup']:.2f}x mlir-opt per op at "
               f"{r['ops']} ops (target {args.target}x)"
               for r in rows if r["speedup"] < args.target]
  for failure in failures:
    print("FAIL:", failure)
  print(f"results written to {os.path.relpath(args.json, ROOT)}")
  return 1 if failures else 0


if __name__ == "__main__":
  sys.exit(main())
