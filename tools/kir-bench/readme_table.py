#!/usr/bin/env python3
"""Renders a kir-bench JSON report as the Markdown table in README.md.

usage: readme_table.py RESULTS_JSON [--readme README.md] [--marker NAME]

Without --readme, prints the table; with it, replaces the text between
`<!-- MARKER:begin -->` and `<!-- MARKER:end -->` (--marker, default
kir-bench-table).
The table has a row per problem (configuration, kernel and cuBLASLt
times, % of cuBLAS per variant, status) and the geometric means, so the
README's figures always come from the committed JSON.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "gpu"))
from readme_table import put_into_readme  # pylint: disable=wrong-import-position

MARKER = "kir-bench-table"


def render(report):
  variants = report["pipelines"]
  header = ["problem", "configuration", "cuBLASLt ms"]
  for i, variant in enumerate(variants):
    name = f"P{i + 1}" if len(variants) > 1 else "kernel"
    header += [f"{name} ms", f"{name} % of cuBLAS"]
  header.append("status")
  lines = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i < 2 or i == len(header) - 1 else "---:"
                          for i in range(len(header))) + "|"]
  for result in report["results"]:
    baseline = result.get("baseline") or {}
    row = [result["name"], f"`{result.get('config', '')}`",
           f"{baseline['median_ms']:.4f}" if "median_ms" in baseline else "-"]
    by_pipeline = {v["pipeline"]: v for v in result.get("variants", [])}
    for variant in variants:
      v = by_pipeline.get(variant)
      if v is None or v.get("median_ms") is None:
        row += ["-", "-"]
        continue
      percent = v.get("percent_of_cublas")
      row += [f"{v['median_ms']:.4f}",
              f"{percent:.1f}%" if percent is not None else "-"]
    row.append(result["status"])
    lines.append("| " + " | ".join(row) + " |")
  lines.append("")
  # The summaries follow the pipelines' order (their names may carry a
  # "Pn " prefix).
  for i, summary in enumerate(report["summary"]):
    percents = [v["percent_of_cublas"] for r in report["results"]
                for v in r.get("variants", [])
                if v["pipeline"] == variants[i] and
                v.get("percent_of_cublas") is not None]
    if not percents:
      continue
    below = sum(1 for p in percents if p < 75)
    name = f"P{i + 1}" if len(variants) > 1 else f"`{variants[i]}`"
    ratio = summary.get("geomean_ratio_to_p1")
    lines.append(
        f"Geometric mean ({name}): "
        f"**{summary['geomean_percent_of_cublas']:.1f}%** of cuBLASLt over "
        f"{summary['problems_timed']} of {summary['problems']} problems "
        f"(min {min(percents):.1f}%, max {max(percents):.1f}%; "
        f"{below} below 75%)"
        + (f"; time / time(P1) {ratio:.3f}" if ratio is not None else "")
        + ".")
    lines.append("")
  if len(variants) > 1:
    lines.append("")
    lines.append("Pipelines: " + "; ".join(
        f"P{i + 1} `{variant}`" for i, variant in enumerate(variants)) + ".")
  lines.append("")
  lines.append(f"{report['device']}, commit {report['commit']}, "
               f"`{report['problems_file']}`, heuristic configurations"
               f"{' and tuning' if report.get('tune') else ''}.")
  return re.sub(r"\n{3,}", "\n\n", "\n".join(lines))


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("results")
  parser.add_argument("--readme")
  parser.add_argument("--marker", default=MARKER,
                      help="the README section: <!-- MARKER:begin --> ... "
                      "<!-- MARKER:end -->")
  args = parser.parse_args()
  with open(args.results) as f:
    table = render(json.load(f))
  if not args.readme:
    print(table)
    return 0
  put_into_readme(args.readme, args.marker, table)
  return 0


if __name__ == "__main__":
  sys.exit(main())
