"""Checks kir-bench's JSON, CSV and SVG from one run against each other.

usage: check_outputs.py OUT.json OUT.csv OUT.svg PROBLEMS VARIANTS

Every problem passed, was timed against cuBLASLt and has a % of cuBLAS in
each file; the SVG is well-formed XML with one bar per problem and variant.
"""
import csv
import json
import math
import sys
import xml.etree.ElementTree as ElementTree


def main():
    json_path, csv_path, svg_path = sys.argv[1:4]
    problems, variants = int(sys.argv[4]), int(sys.argv[5])
    with open(json_path) as f:
        report = json.load(f)
    results = report["results"]
    assert len(results) == problems, (len(results), problems)
    for result in results:
        assert result["status"] == "passed", result
        assert result["baseline"]["name"] == "cublasLt", result
        assert result["baseline"]["median_ms"] > 0, result
        assert len(result["variants"]) == variants, result
        for variant in result["variants"]:
            assert variant["checked"] and variant["passed"], variant
            assert variant["percent_of_cublas"] > 0, variant
            assert math.isfinite(variant["max_abs_error"]), variant
    assert len(report["summary"]) == variants
    for summary in report["summary"]:
        assert summary["problems_timed"] == problems, summary
        assert summary["geomean_percent_of_cublas"] > 0, summary

    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == problems * variants, len(rows)
    for row in rows:
        assert row["status"] == "passed", row
        assert float(row["percent_of_cublas"]) > 0, row

    svg = ElementTree.parse(svg_path).getroot()
    rects = svg.findall("{http://www.w3.org/2000/svg}rect")
    # The background, a bar per problem and variant, a legend swatch each.
    assert len(rects) == 1 + problems * variants + variants, len(rects)
    print("outputs agree: %d problems x %d variants" % (problems, variants))


if __name__ == "__main__":
    main()
