#!/usr/bin/env python3
"""Prints the circular-buffer GEMM table from tools/gpu/gemm_bench.sh's
JSON files (named SHAPE.VARIANT.ROUND.json):

    python3 tools/gpu/gemm_table.py tools/gpu/results/gemm/*.json
    python3 tools/gpu/gemm_table.py --readme README.md tools/gpu/results/gemm/*.json

(the second form replaces the text between the gemm-table markers there).

One row per shape: each variant's time (the median over its rounds of the
median of its repeats) and its speed against cuBLASLt timed in the same
process (cuBLAS time / kernel time, each round's ratio, then the median
over rounds), and the speed of the pipeline-lowered kernels against the
hand-lowered one (hand time / their time, from the medians: above 1 is
faster than the hand-lowered kernel).
"""
import json
import os
import statistics
import sys

import readme_table

VARIANTS = ["hand", "warp-specialized", "merged-producer", "pipelined"]


def load(paths):
    """{shape: {variant: [(time_ms, cublas_ms, registers), ...]}}, device."""
    data = {}
    device = None
    for path in paths:
        shape, variant, _, _ = os.path.basename(path).rsplit(".", 3)
        with open(path, encoding="utf-8") as f:
            result = json.load(f)
        device = device or result.get("device", {}).get("name")
        for entry in result["results"]:
            variant_data = (entry.get("variants") or [{}])[0]
            time = variant_data.get("time")
            if entry.get("status") != "passed" or time is None:
                raise SystemExit("%s: %s" % (path, entry.get("status")))
            data.setdefault(shape, {}).setdefault(variant, []).append(
                (time["median_ms"], entry["baseline"]["time"]["median_ms"],
                 variant_data.get("registers"), time.get("samples")))
    return data, device


def table(paths):
    data, device = load(paths)
    header = ["M x N x K", "cuBLASLt us"]
    for variant in VARIANTS:
        header += ["%s us" % variant, "%s vs cuBLAS" % variant]
    header += ["%s / hand" % v for v in VARIANTS[1:]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    rounds = 0
    for shape in sorted(data, key=lambda s: [int(x) for x in s.split("x")]):
        variants = data[shape]
        cublas = statistics.median(t[1] for v in variants.values() for t in v)
        row = [shape.replace("x", " x "), "%.1f" % (cublas * 1e3)]
        medians = {}
        for variant in VARIANTS:
            samples = variants.get(variant, [])
            rounds = max(rounds, len(samples))
            if not samples:
                row += ["", ""]
                continue
            medians[variant] = statistics.median(t[0] for t in samples)
            speed = statistics.median(t[1] / t[0] for t in samples)
            row += ["%.1f" % (medians[variant] * 1e3), "%.2fx" % speed]
        for variant in VARIANTS[1:]:
            row.append("%.3f" % (medians["hand"] / medians[variant])
                       if "hand" in medians and variant in medians else "")
        lines.append("| " + " | ".join(row) + " |")
    registers = {v: sorted({t[2] for s in data.values() for t in s.get(v, [])})
                 for v in VARIANTS}
    repeats = sorted({t[3] for s in data.values() for v in s.values()
                      for t in v})
    lines.append("")
    lines.append(
        "Device: %s. bf16 A (MxK) and B (NxK), f32 C = A @ B^T. Each kernel "
        "and cuBLASLt timed in one `kir-run --bench` process (median of %s "
        "repeats of 20 launches); %d rounds of the kernels "
        "interleaved, medians over the rounds. Registers per thread: %s." %
        (device, "/".join(str(r) for r in repeats), rounds, ", ".join(
            "%s %s" % (v, "/".join(str(r) for r in registers[v]))
            for v in VARIANTS)))
    return "\n".join(lines)


if __name__ == "__main__":
    readme_table.main(sys.argv[1:], "gemm-table", table)
