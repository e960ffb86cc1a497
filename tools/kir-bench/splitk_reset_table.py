#!/usr/bin/env python3
"""Prints the README's split-K tables from kir-bench runs.

Each JSON is a `kir-bench CSV --compare` report of the same pipelines in the
same order (`tools/gpu/experiments.sh splitk-reset` or `splitk-cluster`
makes one). For each problem the table gives the % of cuBLASLt of each
pipeline as min-max over the runs, and the time of pipeline I over
pipeline J (1-based, as the header names them).

  splitk_reset_table.py [--names A,B,...] [--ratio I/J] RUN1.json RUN2.json ...

The defaults are those of splitk-reset: serial, tma-atomic reset=last,
tma-atomic reset=parity, tma-serial, and parity / last (--ratio 3/2).
"""
import argparse
import json
import math
import sys


def span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt % lo if fmt % lo == fmt % hi else (fmt % lo) + "-" + (fmt % hi)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--names", default="serial,tma-atomic last,tma-atomic parity,tma-serial")
    parser.add_argument("--ratio", default="3/2")
    parser.add_argument("runs", nargs="+")
    args = parser.parse_args()
    names = args.names.split(",")
    top, bottom = (int(i) - 1 for i in args.ratio.split("/"))
    ratio_name = "%s / %s" % (names[top].split(" ")[-1], names[bottom].split(" ")[-1])
    rows = {}
    order = []
    for path in args.runs:
        for result in json.load(open(path))["results"]:
            name = result["name"]
            if name not in rows:
                rows[name] = {"config": result["config"], "pct": [[] for _ in names],
                              "ratio": []}
                order.append(name)
            variants = result["variants"]
            if len(variants) != len(names):
                sys.exit("%s: %d pipelines, expected %d" % (name, len(variants), len(names)))
            for i, variant in enumerate(variants):
                rows[name]["pct"][i].append(variant["percent_of_cublas"])
            rows[name]["ratio"].append(variants[top]["median_ms"] / variants[bottom]["median_ms"])
    print("| problem | configuration | " + " | ".join(names) + " | %s |" % ratio_name)
    print("|---|---|" + "---:|" * (len(names) + 1))
    all_ratios = []
    for name in order:
        row = rows[name]
        words = row["config"].split(" ")
        config = "%s %s, %s splits" % (words[0], words[1],
                                       row["config"].split("splitk=")[1].split("/")[0])
        skew = [w for w in words if w.startswith("skew=")]
        if skew:
            config += ", skew " + skew[0].split("=")[1]
        cells = [span(p, "%.1f%%") for p in row["pct"]]
        all_ratios += row["ratio"]
        print("| %s | %s | %s | %s |" % (name.split(" ")[0], config, " | ".join(cells),
                                        span(row["ratio"], "%.3f")))
    geo = math.exp(sum(math.log(r) for r in all_ratios) / len(all_ratios))
    print()
    print("Geometric mean of %s over %d measurements: %.3f" % (ratio_name, len(all_ratios), geo))


if __name__ == "__main__":
    main()
