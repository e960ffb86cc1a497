"""Checks that two kir-bench JSON reports of one problem list agree.

usage: compare_runs.py ONE.json TWO.json [--same-times]

The same problems in the same order, each with the same key, configuration
and status, and both reports alike in form (the same fields per row and per
variant); every row names the GPU that ran it. With --same-times the
measured figures agree too (a --resume that took every row from the
earlier report). Timings of two runs are not compared otherwise: they
differ by run-to-run noise, and workers sharing a GPU disturb each other.
"""
import json
import sys


def main():
    one_path, two_path = sys.argv[1:3]
    same_times = "--same-times" in sys.argv[3:]
    with open(one_path) as f:
        one = json.load(f)
    with open(two_path) as f:
        two = json.load(f)
    assert one["pipelines"] == two["pipelines"], (one["pipelines"],
                                                  two["pipelines"])
    rows_one, rows_two = one["results"], two["results"]
    assert len(rows_one) == len(rows_two), (len(rows_one), len(rows_two))
    for a, b in zip(rows_one, rows_two):
        for field in ("name", "key", "config", "status"):
            assert a[field] == b[field], (field, a[field], b[field])
        assert sorted(a) == sorted(b), (sorted(a), sorted(b))
        for row in (a, b):
            assert row["gpu"] != "" and row["device"] != "", row
        assert len(a["variants"]) == len(b["variants"]), a["name"]
        for x, y in zip(a["variants"], b["variants"]):
            assert sorted(x) == sorted(y), (sorted(x), sorted(y))
            assert x["passed"] == y["passed"], (a["name"], x, y)
            if same_times:
                assert x["median_ms"] == y["median_ms"], (x, y)
        if same_times:
            assert a["baseline"] == b["baseline"], (a["baseline"],
                                                    b["baseline"])
    print("reports agree: %d problems" % len(rows_one))


if __name__ == "__main__":
    main()
