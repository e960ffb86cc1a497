#!/usr/bin/env python3
"""Prints the README's table of tma-atomic's reset forms from kir-bench runs.

Each JSON is a `kir-bench testdata/bench/splitk.csv --compare` report of four
pipelines, in this order: default (serial), tma-atomic reset=last,
tma-atomic reset=parity, tma-serial (`tools/gpu/experiments.sh
splitk-reset` makes one). For each problem the table gives the % of cuBLASLt of each
pipeline as min-max over the runs, and the time of parity over last.

  splitk_reset_table.py RUN1.json RUN2.json ...
"""
import json
import math
import sys

NAMES = ["serial", "tma-atomic last", "tma-atomic parity", "tma-serial"]


def span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt % lo if fmt % lo == fmt % hi else (fmt % lo) + "-" + (fmt % hi)


def main(paths):
    runs = [json.load(open(p)) for p in paths]
    rows = {}
    order = []
    for run in runs:
        for result in run["results"]:
            name = result["name"]
            if name not in rows:
                rows[name] = {"config": result["config"], "pct": [[] for _ in NAMES],
                              "ratio": []}
                order.append(name)
            variants = result["variants"]
            if len(variants) != len(NAMES):
                sys.exit("%s: %d pipelines, expected %d" % (name, len(variants), len(NAMES)))
            for i, variant in enumerate(variants):
                rows[name]["pct"][i].append(variant["percent_of_cublas"])
            rows[name]["ratio"].append(variants[2]["median_ms"] / variants[1]["median_ms"])
    print("| problem | configuration | " + " | ".join(NAMES) + " | parity / last |")
    print("|---|---|" + "---:|" * (len(NAMES) + 1))
    all_ratios = []
    for name in order:
        row = rows[name]
        config = row["config"].split(" ")[0] + ", " + row["config"].split("splitk=")[1].split("/")[0] + " splits"
        cells = [span(p, "%.1f%%") for p in row["pct"]]
        all_ratios += row["ratio"]
        print("| %s | %s | %s | %s |" % (name.split(" ")[0], config, " | ".join(cells),
                                        span(row["ratio"], "%.3f")))
    geo = math.exp(sum(math.log(r) for r in all_ratios) / len(all_ratios))
    print()
    print("Geometric mean of parity / last over %d measurements: %.3f" % (len(all_ratios), geo))


if __name__ == "__main__":
    main(sys.argv[1:])
