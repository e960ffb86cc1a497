#!/usr/bin/env python3
"""Renders tools/bench/results.json as the Markdown table in README.md.

usage: table.py [RESULTS_JSON] [--readme README.md]
Without --readme, prints the table; with it, replaces the text between the
`<!-- bench-table:begin -->` and `<!-- bench-table:end -->` markers.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BEGIN = "<!-- bench-table:begin -->"
END = "<!-- bench-table:end -->"


def _count(count):
  """10k, 100k, 1M: the generator lands a few ops short of round sizes."""
  if count >= 999_500:
    return f"{count / 1e6:.3g}M"
  return f"{count / 1e3:.3g}k"


def _commit(record):
  """'4258ab6, ' when the run recorded the commit it measured, else ''."""
  return f"{record['commit']}, " if record.get("commit") else ""


def _seconds(value):
  return f"{value * 1e3:.0f} ms" if value < 10 else f"{value:.1f} s"


def _verdict(results):
  """Sentences on the two targets, so the prose never drifts from the data."""
  target = results["target_speedup"]
  misses = [r for r in results["rows"] if r["speedup"] < target]
  if misses:
    where = ", ".join(f"{_count(r['ops'])} ops ({r['speedup']:.2f}x)"
                      for r in misses)
    speed = (f"kir-opt misses the per-op target (at least {target:g}x "
             f"mlir-opt) at {where}.")
  else:
    speed = (f"kir-opt meets the per-op target (at least {target:g}x "
             f"mlir-opt) at every size.")
  steps = []
  for i, s in enumerate(results["linearity"]):
    bound = "the 11x bound for 10x the ops" if i == 0 else "it"
    verdict = "within" if s["kir_linear"] else "over"
    steps.append(
        f"{s['kir_time_ratio']:.1f}x from {_count(s['from_ops'])} to "
        f"{_count(s['to_ops'])} ops ({verdict} {bound}; mlir-opt "
        f"{s['mlir_time_ratio']:.1f}x)")
  if len(steps) > 1:
    steps = [", ".join(steps[:-1]) + " and " + steps[-1]]
  linear = f"kir-opt's time grows {steps[0]}." if steps else ""
  largest = results["rows"][-1]
  memory = (f"At {_count(largest['ops'])} ops the peak RSS is "
            f"{largest['kir']['max_rss_kib'] * 1024 / largest['ops']:.0f} "
            f"bytes per op for kir-opt and "
            f"{largest['mlir']['max_rss_kib'] * 1024 / largest['ops']:.0f} "
            f"for mlir-opt.")
  return " ".join(part for part in (speed, linear, memory) if part)


def render(results):
  lines = [
      "| ops | tool | bytes | time | ops/s | MB/s | peak RSS "
      "| kir-opt speed per op |",
      "|---:|---|---:|---:|---:|---:|---:|---:|",
  ]
  for row in results["rows"]:
    for tool, name in (("kir", "kir-opt"), ("mlir", "mlir-opt-19")):
      m = row[tool]
      speedup = f"**{row['speedup']:.2f}x**" if tool == "kir" else ""
      lines.append(
          f"| {_count(row['ops'])} | {name} | {m['bytes'] / 1e6:.1f} MB "
          f"| {_seconds(m['seconds'])} | {_count(m['ops_per_second'])} "
          f"| {m['mb_per_second']:.1f} | {m['max_rss_kib'] / 1024:.0f} MiB "
          f"| {speedup} |")
  lines.append("")
  lines.append(
      f"Median CPU time (user + sys) of {results['repeat']} alternating "
      f"runs of "
      f"`TOOL FILE -o /dev/null` (parse, verify, print) on "
      f"{results['machine']['cpu']} ({results['machine']['cores']} cores), "
      f"{results['date']}; "
      f"kir-opt {results['kir_opt']['build_type']} build"
      + (f" at {results['kir_opt']['commit']}"
         if results["kir_opt"].get("commit") else "") + ", "
      f"{results['mlir_opt']['version']}.")
  lines.append("")
  lines.append(_verdict(results))
  occasions = results.get("occasions", [])
  if len(occasions) > 1:
    parts = []
    for occasion in occasions:
      speedups = ", ".join(f"{_count(int(ops))} {value:.2f}x"
                           for ops, value in occasion["speedups"].items())
      growth = ", ".join(
          f"{_count(g['from_ops'])} to {_count(g['to_ops'])} {g['kir']:.1f}x "
          f"(mlir-opt {g['mlir']:.1f}x)" for g in occasion.get("growth", []))
      parts.append(f"{occasion['date']} (" + _commit(occasion) +
                   f"load {occasion['load_average_before']}"
                   f"): {speedups}" + (f"; time growth {growth}"
                                       if growth else ""))
    lines.append("")
    lines.append(f"kir-opt's speed per op on the last {len(occasions)} "
                 f"occasions: " + " | ".join(parts) + ".")
  return "\n".join(lines)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("results", nargs="?",
                      default=os.path.join(HERE, "results.json"))
  parser.add_argument("--readme")
  args = parser.parse_args()
  with open(args.results) as f:
    table = render(json.load(f))
  if not args.readme:
    print(table)
    return 0
  with open(args.readme) as f:
    readme = f.read()
  pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
  if not pattern.search(readme):
    sys.exit(f"{args.readme} has no {BEGIN} ... {END} section")
  readme = pattern.sub(lambda _: f"{BEGIN}\n{table}\n{END}", readme)
  with open(args.readme, "w") as f:
    f.write(readme)
  return 0


if __name__ == "__main__":
  sys.exit(main())
