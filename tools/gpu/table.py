#!/usr/bin/env python3
"""Prints a Markdown table from `kir-run --bench --json` files.

    python3 tools/gpu/table.py tools/gpu/results/*.json
    python3 tools/gpu/table.py --readme README.md tools/gpu/results/*.json

(the second form replaces the text between the gpu-table markers there).

One row per directive: kernel, sizes, time (median, min-max over repeats),
the baseline it is measured against and the speed ratio (baseline time /
kernel time: above 1 is faster than the baseline), registers, spills and
shared memory.
"""
import json
import re
import sys

import readme_table


def sizes_of(directive):
    return " ".join(re.findall(r"\b[A-Z]\w*=\d+", directive))


def spill_text(value):
    return "?" if value is None else str(value)


def table(paths):
    lines = []
    rows = []
    device = None
    all_local_zero = True
    for path in paths:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        device = device or data.get("device", {}).get("name")
        for result in data["results"]:
            variants = result.get("variants") or [{}]
            variant = variants[0]
            all_local_zero = all_local_zero and variant.get("local_bytes") == 0
            time = variant.get("time")
            baseline = result.get("baseline")
            if time is None or baseline is None:
                rows.append([result["kernel"], "",
                             sizes_of(result.get("directive", "")),
                             result.get("status", "?"), "", "", "", "", ""])
                continue
            ratio = baseline["time"]["median_ms"] / time["median_ms"]
            # Hand-lowered (no pipeline) or lowered by the passes.
            lowering = ("hand" if not variant.get("pipeline") else
                        "pipeline `%s`" % variant["pipeline"])
            rows.append([
                result["kernel"],
                lowering,
                sizes_of(result["directive"]),
                "%.1f (%.1f-%.1f)" % (time["median_ms"] * 1e3,
                                      time["min_ms"] * 1e3,
                                      time["max_ms"] * 1e3),
                baseline["name"],
                "%.2fx" % ratio,
                str(variant.get("registers", "")),
                spill_text(variant.get("spill_store_bytes")),
                str(variant.get("shared_bytes", "")),
            ])
    header = ["kernel", "lowered by", "sizes", "time us (min-max)", "baseline",
              "speed vs baseline", "registers", "spill B", "smem B"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for row in rows:
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Device: %s. Time: median over 5 repeats of the median of 50 "
                 "launches (CUDA events), min-max of the 5; the baseline is "
                 "timed the same way in the same process. Spills: from "
                 "`ptxas -v`, ? when the compilation did not report them%s." %
                 (device, " (local memory, which would hold them, is 0 in "
                  "every row)" if all_local_zero else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    readme_table.main(sys.argv[1:], "gpu-table", table)
