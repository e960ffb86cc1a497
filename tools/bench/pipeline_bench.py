#!/usr/bin/env python3
"""Times the default pipeline: how its cost grows with loop depth, kernel
size and loop-body length, and what it costs on the examples.

Five families of kernels, each through `kir-opt --pipeline=default`:

  examples   every unlowered kernel in testdata/examples/;
  depth D    one shared write and a read of another thread's element inside
             a nest of D loops of two iterations (insert-syncs must order
             the pair within an iteration and around every loop);
  size N     a straight-line kernel of about N ops: units of a shared write,
             a read of another thread's element and a register store, each
             unit needing barriers against its neighbours;
  loop N     the same units, about N ops of them, inside one loop of two
             iterations (each barrier is placed, and asked whether it is
             needed, inside the loop body);
  tma N      N units of a shared write by every thread and a TMA store of
             it by thread 0: a bulk group, a wait, two barriers and a proxy
             fence each (each group's global write stays pending to the
             end of the kernel, so the ordering state grows with N).

Each kernel runs --repeat times (median of CPU time, user + sys, of the
child process; wall time beside it; the largest peak resident memory of
the runs, and for the sizes that per op). The sizes run in --repeat
rounds of one run each (up to five of a size whose run takes under a
quarter second, whose time varies more between runs), so that a busy
stretch of a shared machine slows every size alike. A run over --timeout
seconds is
reported as such and ends that family's larger sizes. The load average
before and after the runs goes into the footnote, since other work on the
machine slows the larger sizes most. Prints a table and writes everything
to --json; --readme puts the table into the README between
`<!-- pipeline-bench:begin -->` and `<!-- pipeline-bench:end -->`.

With --instructions, each size also runs once under valgrind's callgrind,
which counts the instructions kir-opt executes: a figure the machine's
caches and other work do not change, so its growth between sizes says
whether the work is linear when the CPU time's growth is in doubt.

usage: pipeline_bench.py [--kir-opt PATH] [--depths 1,...] [--sizes 1000,...]
                         [--loop-sizes 1000,...] [--tma-units 100,...]
                         [--repeat 5] [--timeout 120] [--instructions]
                         [--json FILE] [--readme README.md]
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


# Both families' first ops: the thread's element, its mirror, the buffers.
PROLOGUE = [
    "  %c0 = const 0 : index",
    "  %c1 = const 1 : index",
    "  %c2 = const 2 : index",
    "  %c127 = const 127 : index",
    "  %f = const 1.0 : f32",
    "  %tx = thread.id x : index",
    "  %mirror = sub %c127, %tx : index",
    "  %s = alloc.shared : shared f32[128]",
    "  %acc = alloc.reg : reg f32[1]",
]


def nest_kernel(depth):
  lines = ["kernel @nest() block(128) {"] + PROLOGUE
  for d in range(depth):
    lines.append("  " * (d + 1) + "for %%i%d = %%c0 to %%c2 step %%c1 {" % d)
  pad = "  " * (depth + 1)
  lines += [
      pad + "store %s[%tx], %f",
      pad + "%v = load %s[%mirror] : f32",
      pad + "store %acc[%c0], %v",
  ]
  for d in reversed(range(depth)):
    lines.append("  " * (d + 1) + "}")
  lines.append("}")
  return "\n".join(lines) + "\n"


UNIT_OPS = 3  # store, load, register store


TMA_PROLOGUE = [
    "  %c0 = const 0 : index",
    "  %c2 = const 2 : index",
    "  %v = const 1.0 : bf16",
    "  %buf = alloc.shared {align = 128} : shared bf16[64, 32]",
    "  %tid = thread.id x : index",
    "  %row = div %tid, %c2 : index",
    "  %is_t0 = cmp eq %tid, %c0 : i1",
]
TMA_UNIT_OPS = 3  # store, if, tma.store


def write_tma_kernel(f, units):
  """Writes `units` TMA-store units to the file `f`; returns the op
  count."""
  f.write("kernel @tma_units(%out: global bf16[64, 256], "
          "%map: tensormap bf16[64, 32] of %out) block(128) {\n")
  f.write("\n".join(TMA_PROLOGUE) + "\n")
  for _ in range(units):
    f.write("  store %buf[%row, %c0], %v\n"
            "  if %is_t0 {\n"
            "    tma.store %map[%c0, %c0], %buf[%c0, %c0]\n"
            "  }\n")
  f.write("}\n")
  return len(TMA_PROLOGUE) + units * TMA_UNIT_OPS


def write_straight_kernel(f, ops, in_loop=False):
  """Writes about `ops` ops to the file `f`, a line at a time (a child
  process starts with this one's peak resident memory, which a kernel
  built in memory would raise for every run after it), inside one loop of
  two iterations with `in_loop`; returns the op count."""
  loop_ops = 1 if in_loop else 0
  units = max(1, (ops - len(PROLOGUE) - loop_ops) // UNIT_OPS)
  name = "loop_body" if in_loop else "straight"
  f.write("\n".join(["kernel @%s() block(128) {" % name] + PROLOGUE) + "\n")
  pad = "  "
  if in_loop:
    f.write("  for %i = %c0 to %c2 step %c1 {\n")
    pad = "    "
  for u in range(units):
    f.write("%sstore %%s[%%tx], %%f\n"
            "%s%%v%d = load %%s[%%mirror] : f32\n"
            "%sstore %%acc[%%c0], %%v%d\n" % (pad, pad, u, pad, u))
  if in_loop:
    f.write("  }\n")
  f.write("}\n")
  return len(PROLOGUE) + loop_ops + units * UNIT_OPS


def time_once(kir_opt, path, timeout):
  """(cpu seconds, wall seconds, peak RSS in KiB, user seconds, sys seconds)
  of one run, or None past the timeout; exits if kir-opt fails."""
  command = [kir_opt, path, "--pipeline=default", "-o", os.devnull]
  start = time.monotonic()
  process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
  # wait4 gives this child's own usage (RUSAGE_CHILDREN's peak RSS would be
  # the largest of every child so far).
  deadline = start + timeout
  while True:
    pid, status, usage = os.wait4(process.pid, os.WNOHANG)
    if pid != 0:
      break
    if time.monotonic() > deadline:
      process.kill()
      os.wait4(process.pid, 0)
      process.stderr.close()
      return None
    time.sleep(0.005)
  wall = time.monotonic() - start
  stderr = process.stderr.read().decode(errors="replace")
  process.stderr.close()
  if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("%s failed:\n%s" % (" ".join(command), stderr))
  return (usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss,
          usage.ru_utime, usage.ru_stime)


# What fresh memory costs this machine: a process that only writes one byte
# per page of `size` bytes, over `seconds` (0: at once). On a virtual
# machine whose host takes back the pages the guest frees (free page
# reporting), a process that grows for longer than the guest's reporting
# delay finds fewer pages still backed, so the same memory costs more sys
# time when touched slowly, as kir-opt touches it, than at once.
TOUCH = """
import mmap, sys, time
size, seconds = int(sys.argv[1]), float(sys.argv[2])
memory = mmap.mmap(-1, size)
chunk = 16 << 20
for offset in range(0, size, mmap.PAGESIZE):
  memory[offset] = 1
  if seconds and offset % chunk == 0:
    time.sleep(seconds * chunk / size)
"""


def touch_sys(size, seconds):
  """The sys seconds of touching `size` fresh bytes over `seconds`."""
  process = subprocess.Popen([sys.executable, "-c", TOUCH, str(size),
                              str(seconds)])
  _, status, usage = os.wait4(process.pid, 0)
  if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("the memory-touch check failed")
  return usage.ru_stime


def page_cost(entry, repeat):
  """The median sys time of touching `entry`'s peak at once and over its
  median wall time, alternating."""
  result = entry["result"]
  size = result["max_rss_kib"] * 1024
  at_once, paced = [], []
  for _ in range(repeat):
    at_once.append(touch_sys(size, 0))
    paced.append(touch_sys(size, result["wall_s"]))
  return {"ops": entry["ops"], "bytes": size, "over_s": result["wall_s"],
          "at_once_sys_s": statistics.median(at_once),
          "paced_sys_s": statistics.median(paced),
          "runs_at_once_sys_s": [round(t, 4) for t in at_once],
          "runs_paced_sys_s": [round(t, 4) for t in paced]}


def count_instructions(kir_opt, path, timeout):
  """The instructions one run executes (callgrind's total), or None past
  the timeout; exits if valgrind or kir-opt fails."""
  with tempfile.TemporaryDirectory() as tmp:
    command = ["valgrind", "--tool=callgrind",
               "--callgrind-out-file=" + os.path.join(tmp, "callgrind.out"),
               kir_opt, path, "--pipeline=default", "-o", os.devnull]
    try:
      process = subprocess.run(command, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
      return None
    except FileNotFoundError:
      sys.exit("--instructions needs valgrind (apt-get install valgrind)")
    stderr = process.stderr.decode(errors="replace")
    collected = re.search(r"Collected : (\d+)", stderr)
    if process.returncode != 0 or not collected:
      sys.exit("%s failed:\n%s" % (" ".join(command), stderr))
    return int(collected.group(1))


def summary(samples):
  result = {
      "cpu_s": statistics.median(s[0] for s in samples),
      "wall_s": statistics.median(s[1] for s in samples),
      "runs_cpu_s": [round(s[0], 4) for s in samples],
      # The kernel's share is mostly page faults: on a virtual machine a
      # page the process touches first can cost the host a fault too, so
      # it varies more between runs than the user time does.
      "user_s": statistics.median(s[3] for s in samples),
      "sys_s": statistics.median(s[4] for s in samples),
      "runs_sys_s": [round(s[4], 4) for s in samples],
      "max_rss_kib": max(s[2] for s in samples),
      "runs": len(samples),
  }
  return result


def measure(kir_opt, path, repeat, timeout):
  samples = []
  for _ in range(repeat):
    sample = time_once(kir_opt, path, timeout)
    if sample is None:
      return {"timed_out": True, "timeout_s": timeout}
    samples.append(sample)
    if sample[1] > timeout / 4:  # slow: one more run is enough
      repeat = min(repeat, 2)
  return summary(samples)


# A size whose run takes less than this runs several times per round (up
# to MAX_RUNS_PER_ROUND): a run of a few tens of milliseconds varies more
# between runs on a shared machine than a long one, and its median over
# five runs moved the growth to the next size by a tenth or more.
SHORT_RUN_S = 0.25
MAX_RUNS_PER_ROUND = 5


def measure_alternating(kir_opt, paths, repeat, timeout):
  """Times `paths` in rounds, each running every path once (a short one
  several times), so that a slower stretch of a shared machine falls on
  every size alike and the growth between sizes is not the load's. A path
  that times out is dropped, with every larger one after it."""
  samples = [[] for _ in paths]
  timed_out = [False] * len(paths)
  for _ in range(repeat):
    for i, path in enumerate(paths):
      if any(timed_out[:i + 1]):
        break
      if len(samples[i]) >= 2 and samples[i][-1][1] > timeout / 4:
        continue  # slow: two runs are enough
      runs = 1
      if samples[i]:
        runs = max(1, min(MAX_RUNS_PER_ROUND,
                          int(SHORT_RUN_S / max(samples[i][0][0], 1e-3))))
      for _ in range(runs):
        sample = time_once(kir_opt, path, timeout)
        if sample is None:
          timed_out[i] = True
          break
        samples[i].append(sample)
      if timed_out[i]:
        break
  return [{"timed_out": True, "timeout_s": timeout}
          if timed_out[i] or not samples[i] else summary(samples[i])
          for i in range(len(paths))]


def seconds(result):
  if result.get("timed_out"):
    return "> %d" % result["timeout_s"]
  value = result["cpu_s"]
  return "%.3f" % value if value < 10 else "%.1f" % value


def memory(entry, baseline_kib):
  """Peak RSS, and for the sizes the bytes per op above an empty kernel's
  peak (the process's own: code, libraries, tables)."""
  result = entry["result"]
  if result.get("timed_out") or "max_rss_kib" not in result:
    return "", ""
  rss = result["max_rss_kib"] * 1024
  per_op = ""
  if entry["family"] in ("size", "loop") and entry["ops"]:
    per_op = "%d B" % round(max(0, rss - baseline_kib * 1024) / entry["ops"])
  return "%.0f MiB" % (rss / 2**20), per_op


def instructions(entry, previous):
  """Callgrind's count, with its growth against the row above."""
  count = entry["result"].get("instructions")
  if count is None:
    return ""
  text = ("%.2f G" % (count / 1e9) if count >= 1e9 else
          "%.0f M" % (count / 1e6) if count >= 1e7 else
          "%.1f M" % (count / 1e6))
  before = previous and previous["result"].get("instructions")
  if before and previous["family"] == entry["family"]:
    text += " (%.2fx)" % (count / before)
  return text


def user_and_sys(entry, previous):
  """The user and sys medians, the user time's growth against `previous`
  (a row of the same family) for the sizes. Empty in JSON written before
  they were recorded."""
  result = entry["result"]
  if result.get("timed_out") or "user_s" not in result:
    return "", ""
  user = "%.3f" % result["user_s"]
  before = previous and previous["result"].get("user_s")
  if before and entry["family"] in ("size", "loop"):
    user += " (%.1fx)" % (result["user_s"] / before)
  return user, "%.3f" % result["sys_s"]


def page_cost_note(cost):
  if not cost:
    return ""
  return (" Fresh memory: a process touching %.0f MiB (the %d-op run's "
          "peak) took %.3f s of sys time at once and %.3f s over %.1f s "
          "(that run's time), median of %d each." %
          (cost["bytes"] / 2**20, cost["ops"], cost["at_once_sys_s"],
           cost["paced_sys_s"], cost["over_s"],
           len(cost["runs_at_once_sys_s"])))


def table(data):
  counted = any("instructions" in e["result"] for e in data["results"])
  rows = ["| kernel | ops | CPU s (median) | growth | user s (growth) | sys s "
          "| peak RSS | per op |" +
          (" instructions (growth) |" if counted else ""),
          "|---|---|---|---|---|---|---|---|" + ("---|" if counted else "")]
  previous = None
  for entry in data["results"]:
    growth = ""
    same_family = previous and previous["family"] == entry["family"]
    if (same_family and entry["family"] != "example" and
        not previous["result"].get("timed_out") and
        not entry["result"].get("timed_out") and previous["result"]["cpu_s"] > 0):
      growth = "%.1fx" % (entry["result"]["cpu_s"] / previous["result"]["cpu_s"])
    ops = "" if entry["ops"] is None else str(entry["ops"])
    rss, per_op = memory(entry, data["empty_kernel_rss_kib"])
    user, system = user_and_sys(entry, previous if same_family else None)
    rows.append("| %s | %s | %s | %s | %s | %s | %s | %s |" %
                (entry["name"], ops, seconds(entry["result"]), growth, user,
                 system, rss, per_op) +
                (" %s |" % instructions(entry, previous) if counted else ""))
    previous = entry
  rows.append("")
  load = data.get("load_average")
  rows.append(
      "kir-opt %s, `--pipeline=default`, median CPU time (user + sys) of %d "
      "rounds of runs (2 when a run takes over a quarter of the %d s "
      "timeout; the sizes alternate, one run of each per round, up to five "
      "of a size whose first run took under a quarter second), %s, %s%s. "
      "Growth: against the row above (depth + 1, or the ratio of the sizes). "
      "User and sys: the medians of the two parts of the CPU time (sys is "
      "mostly page faults, which on a virtual machine vary between runs "
      "more than the user time does). "
      "Peak RSS: the largest of the runs (the whole process: text, parsed "
      "IR, analyses, output); per op: above an empty kernel's %.0f MiB.%s" %
      (data["commit"], data["repeat"], data["timeout_s"], data["machine"],
       data["date"],
       ", load average %.2f before and %.2f after" % tuple(load)
       if load else "", data["empty_kernel_rss_kib"] / 1024,
       page_cost_note(data.get("page_cost")) +
       (" Instructions: executed in one run under valgrind's callgrind, "
        "growth against the row above (a count the machine's load does not "
        "change)." if counted else "")))
  return "\n".join(rows)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--kir-opt",
                      default=os.path.join(ROOT, "build-ci", "tools",
                                           "kir-opt", "kir-opt"))
  parser.add_argument("--depths", default="1,2,3,4,5,6,7,8")
  parser.add_argument("--sizes", default="1000,10000,100000,1000000")
  parser.add_argument("--loop-sizes", default="1000,10000,100000")
  parser.add_argument("--tma-units", default="100,300,1000")
  parser.add_argument("--repeat", type=int, default=5)
  parser.add_argument("--timeout", type=int, default=120)
  parser.add_argument("--instructions", action="store_true",
                      help="also count each size's instructions under "
                      "callgrind (about 50 times slower than a run)")
  parser.add_argument("--instructions-timeout", type=int, default=1800)
  parser.add_argument("--note", default="",
                      help="said after the machine in the table's footnote "
                      "(e.g. that it was shared with other work)")
  parser.add_argument("--no-page-cost", dest="page_cost",
                      action="store_false",
                      help="skip touching the largest size's peak memory "
                      "at once and at its pace")
  parser.add_argument("--json")
  parser.add_argument("--readme")
  args = parser.parse_args()

  commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
  data = {
      "commit": commit,
      "date": datetime.date.today().isoformat(),
      "machine": "%s, %d cores%s" % (platform.machine(), os.cpu_count(),
                                     ", " + args.note if args.note else ""),
      "repeat": args.repeat,
      "timeout_s": args.timeout,
      "results": [],
  }
  load_before = os.getloadavg()[0]

  def record(family, name, ops, path, result=None):
    if result is None:
      result = measure(args.kir_opt, path, args.repeat, args.timeout)
    data["results"].append(
        {"family": family, "name": name, "ops": ops, "result": result})
    print("%-28s %7s ops  %s s  %s" %
          (name, ops or "", seconds(result),
           " ".join(memory({"family": family, "ops": ops, "result": result},
                           data["empty_kernel_rss_kib"]))),
          flush=True)
    return not result.get("timed_out")

  with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "empty.kir")
    with open(path, "w", encoding="utf-8") as f:
      f.write("kernel @empty() block(128) {\n}\n")
    empty = measure(args.kir_opt, path, args.repeat, args.timeout)
    data["empty_kernel_rss_kib"] = empty.get("max_rss_kib", 0)

  examples = os.path.join(ROOT, "testdata", "examples")
  for name in sorted(os.listdir(examples)):
    # The examples are the unlowered kernels (the other files there are
    # lit tests that run them).
    path = os.path.join(examples, name)
    if not name.endswith(".kir") or name.endswith(".lowered.kir"):
      continue
    with open(path, encoding="utf-8") as f:
      if not re.search(r"^kernel @", f.read(), re.M):
        continue
    record("example", name[:-len(".kir")], None, path)

  with tempfile.TemporaryDirectory() as tmp:
    for depth in (int(d) for d in args.depths.split(",") if d):
      path = os.path.join(tmp, "nest%d.kir" % depth)
      with open(path, "w", encoding="utf-8") as f:
        f.write(nest_kernel(depth))
      if not record("depth", "loop depth %d" % depth, 10 + depth, path):
        break
    for family, name, sizes, in_loop in (
        ("size", "straight-line", args.sizes, False),
        ("loop", "loop body", args.loop_sizes, True)):
      kernels = []
      for size in (int(s) for s in sizes.split(",") if s):
        path = os.path.join(tmp, "%s%d.kir" % (family, size))
        with open(path, "w", encoding="utf-8") as f:
          ops = write_straight_kernel(f, size, in_loop)
        kernels.append((ops, path))
      results = measure_alternating(args.kir_opt, [p for _, p in kernels],
                                    args.repeat, args.timeout)
      for (ops, path), result in zip(kernels, results):
        if args.instructions and not result.get("timed_out"):
          count = count_instructions(args.kir_opt, path,
                                     args.instructions_timeout)
          if count is not None:
            result["instructions"] = count
        if not record(family, name, ops, path, result):
          break
    kernels = []
    for units in (int(u) for u in args.tma_units.split(",") if u):
      path = os.path.join(tmp, "tma%d.kir" % units)
      with open(path, "w", encoding="utf-8") as f:
        ops = write_tma_kernel(f, units)
      kernels.append((units, ops, path))
    results = measure_alternating(args.kir_opt, [p for _, _, p in kernels],
                                  args.repeat, args.timeout)
    for (units, ops, path), result in zip(kernels, results):
      if not record("tma", "TMA-store units (%d)" % units, ops, path,
                    result):
        break

  sizes = [e for e in data["results"]
           if e["family"] == "size" and not e["result"].get("timed_out")]
  if sizes and args.page_cost:
    data["page_cost"] = page_cost(sizes[-1], args.repeat)
  data["load_average"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
  text = table(data)
  print()
  print(text)
  if args.json:
    with open(args.json, "w", encoding="utf-8") as f:
      json.dump(data, f, indent=1)
      f.write("\n")
  if args.readme:
    with open(args.readme, encoding="utf-8") as f:
      readme = f.read()
    begin, end = "<!-- pipeline-bench:begin -->", "<!-- pipeline-bench:end -->"
    head, rest = readme.split(begin)
    _, tail = rest.split(end)
    with open(args.readme, "w", encoding="utf-8") as f:
      f.write(head + begin + "\n" + text + "\n" + end + tail)
  return 0


if __name__ == "__main__":
  sys.exit(main())
