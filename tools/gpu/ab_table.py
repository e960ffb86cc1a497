#!/usr/bin/env python3
"""Prints a Markdown table from `kir-run --compare-pipelines --json` files.

    python3 tools/gpu/ab_table.py tools/gpu/results/ab/*.json
    python3 tools/gpu/ab_table.py --readme README.md tools/gpu/results/ab/*.json

One row per experiment: the two pipelines (P1 and P2, shortened to what
differs), the time of each (median of the repeats' medians), both against
the same-run copy floor, and time(P2) / time(P1) with its min and max over
the repeats (above 1: P2 is slower).
"""
import json
import os
import sys

import readme_table


def passes(pipeline):
    """Splits `a,b{x=1,y=2},c` at the commas outside braces."""
    parts, depth, current = [], 0, ""
    for c in pipeline:
        if c == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        current += c
    return parts + [current]


def shorten(p1, p2):
    a, b = passes(p1), passes(p2)
    # Keep only the passes that differ.
    da = [x for x, y in zip(a, b) if x != y] or a
    db = [y for x, y in zip(a, b) if x != y] or b
    return ",".join(da), ",".join(db)


def table(paths):
    lines = ["| experiment | P1 | P2 | P1 us | P2 us | registers P1 / P2 | "
             "floor (copy) us | P2 / P1 (min-max) |",
             "|---|---|---|---|---|---|---|---|"]
    device = None
    repeats = None
    for path in paths:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        device = device or data.get("device", {}).get("name")
        for result in data["results"]:
            variants = result.get("variants", [])
            compare = result.get("compare")
            if len(variants) != 2 or not compare:
                lines.append("| %s | %s | | | | | | |" % (
                    os.path.basename(path)[:-5], result.get("status")))
                continue
            p1, p2 = shorten(variants[0]["pipeline"], variants[1]["pipeline"])
            floor = result["baseline"]["time"]["median_ms"]
            repeats = compare.get("repeats")
            lines.append("| %s | `%s` | `%s` | %.1f | %.1f | %s / %s | %.1f | %.4f (%.4f-%.4f) |" % (
                os.path.basename(path)[:-5], p1, p2,
                variants[0]["time"]["median_ms"] * 1e3,
                variants[1]["time"]["median_ms"] * 1e3,
                variants[0].get("registers", "?"),
                variants[1].get("registers", "?"), floor * 1e3,
                compare["ratio_p2_over_p1"], compare["min"], compare["max"]))
    lines.append("")
    lines.append("Device: %s. Each variant's time: the median over %s repeats "
                 "of the median of 50 launches, the two variants interleaved; "
                 "the ratio's min-max is over the repeats." % (device, repeats))
    return "\n".join(lines)


if __name__ == "__main__":
    readme_table.main(sys.argv[1:], "ab-table", table)
