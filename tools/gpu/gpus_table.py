"""Summarizes tools/gpu/gpus.sh's runs against issue 18's criteria.

usage: gpus_table.py OUT_DIR GPUS

Reads one.json (--gpus=1), all.json (--gpus=all), killed.json (a run on
all GPUs with one worker killed) and resumed.json (its --resume), with
their .seconds and .rc files. Prints, per problem, % of cuBLAS on one GPU
and on all, their relative difference against the run-to-run spread of
the repeats (largest (max - min) / median over the kernel's and cuBLAS's
repeats of both runs), and the GPU each ran on; then whether every
problem is correct in both runs, the wall times against the bound of
1.2 / N of one GPU's, and what the killed worker cost. Exits 1 when a
criterion is not met.
"""
import json
import os
import statistics
import sys


def load(out, name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def read(out, name, suffix, default=""):
    path = os.path.join(out, name + suffix)
    if not os.path.exists(path):
        return default
    with open(path) as f:
        return f.read().strip()


def percent(row):
    variants = row.get("variants") or []
    if row["status"] != "passed" or not variants:
        return None
    return variants[0].get("percent_of_cublas")


def spread(row):
    """(max - min) / median of the kernel's and cuBLAS's repeat medians."""
    widest = 0.0
    series = [row["baseline"].get("repeat_ms") or []]
    series += [v.get("repeat_ms") or [] for v in row.get("variants") or []]
    for values in series:
        values = [x for x in values if x]
        if len(values) >= 2:
            widest = max(widest,
                         (max(values) - min(values)) / statistics.median(values))
    return widest


def main():
    out, gpus = sys.argv[1], int(sys.argv[2])
    one, every = load(out, "one"), load(out, "all")
    ok = True
    if one is None or every is None:
        print("missing one.json or all.json: the runs did not finish")
        return 1
    rows_one = {r["name"]: r for r in one["results"]}
    print("%-28s %10s %10s %8s %8s  %s" %
          ("problem", "1 GPU", "all GPUs", "diff", "spread", "GPU"))
    outside = 0
    for row in every["results"]:
        base = rows_one.get(row["name"])
        a, b = (percent(base) if base else None), percent(row)
        if a and b:
            diff = b / a - 1
            noise = max(spread(base), spread(row))
            flag = "" if abs(diff) <= noise else "  outside the spread"
            outside += bool(flag)
            print("%-28s %9.1f%% %9.1f%% %+7.1f%% %7.1f%%  %s%s" %
                  (row["name"][:28], a, b, 100 * diff, 100 * noise,
                   row.get("gpu", ""), flag))
        else:
            print("%-28s %10s %10s %8s %8s  %s" %
                  (row["name"][:28], base["status"] if base else "absent",
                   row["status"], "", "", row.get("gpu", "")))
    failed_one = [r["name"] for r in one["results"] if r["status"] != "passed"]
    failed_all = [r["name"] for r in every["results"] if r["status"] != "passed"]
    print("\nproblems: %d on 1 GPU, %d on %d GPUs; not passed: 1 GPU %s, all "
          "%s" % (len(one["results"]), len(every["results"]), gpus,
                  failed_one or "none", failed_all or "none"))
    ok = ok and not failed_one and not failed_all
    print("ratios outside the repeats' spread: %d of %d" %
          (outside, len(every["results"])))
    used = sorted({r.get("gpu", "") for r in every["results"]})
    print("GPUs that ran problems in the run on all: %s" % ", ".join(used))

    wall_one = float(read(out, "one", ".seconds", "nan"))
    wall_all = float(read(out, "all", ".seconds", "nan"))
    bound = 1.2 / gpus
    ratio = wall_all / wall_one if wall_one else float("nan")
    print("wall time: 1 GPU %.1f s, %d GPUs %.1f s, ratio %.3f (bound 1.2/%d "
          "= %.3f): %s" % (wall_one, gpus, wall_all, ratio, gpus, bound,
                           "met" if ratio <= bound else "NOT met"))
    ok = ok and ratio <= bound

    killed, resumed = load(out, "killed"), load(out, "resumed")
    worker = read(out, "killed", ".worker", "none")
    if killed is None:
        print("killed run: no report")
        ok = False
    else:
        lost = [r for r in killed["results"] if r["status"] == "lost"]
        other = [r["name"] for r in killed["results"]
                 if r["status"] not in ("passed", "lost")]
        print("killed run (worker %s killed): %d lost %s, %d passed, other "
              "failures %s" % (worker, len(lost), [r["name"] for r in lost],
                               len(killed["results"]) - len(lost) - len(other),
                               other or "none"))
        for r in lost:
            print("  %s: %s" % (r["name"], r["message"]))
        ok = ok and len(lost) == 1 and not other
    if resumed is not None:
        not_passed = [r["name"] for r in resumed["results"]
                      if r["status"] != "passed"]
        first = (read(out, "resumed", ".err").splitlines() or [""])[0]
        print("resumed: %s; not passed: %s" % (first, not_passed or "none"))
        ok = ok and not not_passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
