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


def _seconds(value):
  return f"{value * 1e3:.0f} ms" if value < 10 else f"{value:.1f} s"


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
  steps = ", ".join(
      f"{_count(s['from_ops'])} to {_count(s['to_ops'])} ops: kir-opt "
      f"{s['kir_time_ratio']:.1f}x, mlir-opt {s['mlir_time_ratio']:.1f}x"
      for s in results["linearity"])
  lines.append("")
  lines.append(
      f"Median of {results['repeat']} runs of `TOOL FILE -o /dev/null` (parse, "
      f"verify, print) on {results['machine']['cpu']} "
      f"({results['machine']['cores']} cores), {results['date']}; "
      f"kir-opt {results['kir_opt']['build_type']} build, "
      f"{results['mlir_opt']['version']}. Time for 10x the ops: {steps}.")
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
