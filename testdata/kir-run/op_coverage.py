#!/usr/bin/env python3
"""Checks that every op kind of ir/ops.def is executed by a GPU test.

An op kind counts as executed when it occurs in a kernel that

  * a `// run:` directive of its .kir file names (`// run: @kernel ...`), and
  * that file is run by kir-run from a lit test that requires a GPU: some
    .kir file under the test root has a `REQUIRES:` line naming `cuda` and a
    `RUN:` line that invokes `kir-run` on the file (`%s` for itself, or a
    path such as `%S/other.kir`).

Directives that name a pipeline are counted on what kir-opt prints after
that pipeline (--kir-opt is then required), since that is what runs.

Exit status 0 when every op kind except the documented exclusions is
executed; 1 otherwise, listing the missing kinds. Directories named
`Inputs` are skipped (fixtures of other tests).

  op_coverage.py --ops-def ir/ops.def --root testdata [--kir-opt PATH]
                 [--list] [--exclude KIND]...
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

# Op kinds that no GPU test can execute yet, each with the reason (none
# now; --exclude adds one, for the tests of this script).
EXCLUDED = {}

OP_DEF = re.compile(r'^KIR_OP\(\s*\w+\s*,\s*"([^"]+)"', re.MULTILINE)
# One op per line: optional results, then the mnemonic.
OP_LINE = re.compile(r"^\s*(?:%[\w.$-]+(?:\s*,\s*%[\w.$-]+)*\s*=\s*)?"
                     r"([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*)(?![\w.])")
KERNEL_LINE = re.compile(r"^\s*kernel\s+@([\w.$-]+)")
DIRECTIVE = re.compile(r"^\s*//\s*run:(.*)$")
DIRECTIVE_KERNEL = re.compile(r"@([\w.$-]+)")
DIRECTIVE_PIPELINE = re.compile(r"""\bpipeline\s*=\s*(['"])(.*?)\1""")
REQUIRES = re.compile(r"^\s*//\s*REQUIRES:(.*)$")
RUN = re.compile(r"^\s*//\s*RUN:(.*)$")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def op_kinds(ops_def_path):
    kinds = OP_DEF.findall(read(ops_def_path))
    if not kinds:
        sys.exit("op_coverage: no KIR_OP entries in %s" % ops_def_path)
    return kinds


def kir_files(root):
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in ("Inputs", "Output"))
        for name in sorted(files):
            if name.endswith(".kir"):
                yield os.path.normpath(os.path.join(directory, name))


def run_lines(text):
    """The RUN: commands of a lit test, continuation lines joined."""
    commands, pending = [], ""
    for line in text.splitlines():
        match = RUN.match(line)
        if not match:
            continue
        part = match.group(1).strip()
        if part.endswith("\\"):
            pending += part[:-1] + " "
            continue
        commands.append(pending + part)
        pending = ""
    if pending:
        commands.append(pending)
    return commands


def requires_cuda(text):
    for line in text.splitlines():
        match = REQUIRES.match(line)
        if match and "cuda" in re.split(r"[\s,&|()!]+", match.group(1)):
            return True
    return False


def files_run_on_gpu(test_path, text):
    """The files a GPU lit test runs kir-run on."""
    if not requires_cuda(text):
        return set()
    directory = os.path.dirname(test_path)
    targets = set()
    for command in run_lines(text):
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        if "kir-run" not in words:
            continue
        for word in words[words.index("kir-run") + 1:]:
            if word in ("|", "&&", "||", ";"):
                break
            path = word.replace("%s", test_path).replace("%S", directory)
            path = path.replace("%p", directory)
            if path.endswith(".kir"):
                targets.add(os.path.normpath(path))
    return targets


def kernels_of(text):
    """{kernel name: set of mnemonics in it}, by line."""
    kernels, current = {}, None
    for line in text.splitlines():
        if line.lstrip().startswith("//"):
            continue
        match = KERNEL_LINE.match(line)
        if match:
            current = kernels.setdefault(match.group(1), set())
            continue
        match = OP_LINE.match(line)
        if match and current is not None:
            current.add(match.group(1))
    return kernels


def directives_of(text):
    """[(kernel, pipeline or None)] for each `// run:` line."""
    found = []
    for line in text.splitlines():
        match = DIRECTIVE.match(line)
        if not match:
            continue
        body = match.group(1)
        kernel = DIRECTIVE_KERNEL.search(body)
        pipeline = DIRECTIVE_PIPELINE.search(body.split("@", 1)[0])
        found.append((kernel.group(1) if kernel else None,
                      pipeline.group(2) if pipeline else None))
    return found


def lowered_text(kir_opt, path, pipeline):
    if not kir_opt:
        sys.exit("op_coverage: %s has a directive with pipeline '%s'; pass "
                 "--kir-opt to count what it runs" % (path, pipeline))
    result = subprocess.run([kir_opt, "--pipeline=" + pipeline, path],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("op_coverage: kir-opt --pipeline='%s' %s failed:\n%s" %
                 (pipeline, path, result.stderr))
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops-def", required=True)
    parser.add_argument("--root", required=True,
                        help="directory searched for .kir files")
    parser.add_argument("--kir-opt", help="for directives with a pipeline")
    parser.add_argument("--list", action="store_true",
                        help="print which files execute each op kind")
    parser.add_argument("--exclude", action="append", default=[],
                        metavar="KIND",
                        help="also exclude KIND (for this script's tests)")
    args = parser.parse_args()
    for kind in args.exclude:
        EXCLUDED[kind] = "excluded on the command line"

    kinds = op_kinds(args.ops_def)
    texts = {path: read(path) for path in kir_files(args.root)}
    on_gpu = set()
    for path, text in texts.items():
        on_gpu |= files_run_on_gpu(path, text)

    executed = {}  # mnemonic -> files
    for path in sorted(on_gpu):
        if path not in texts:
            continue
        for kernel, pipeline in directives_of(texts[path]):
            text = texts[path]
            if pipeline:
                text = lowered_text(args.kir_opt, path, pipeline)
            for mnemonic in kernels_of(text).get(kernel, ()):
                executed.setdefault(mnemonic, set()).add(
                    os.path.relpath(path, args.root))

    root_name = os.path.normpath(args.root)
    print("op_coverage: %d of %d op kinds executed by GPU tests under %s "
          "(%d files run by kir-run in GPU lit tests)" %
          (sum(k in executed for k in kinds), len(kinds), root_name,
           len(on_gpu & set(texts))))
    if args.list:
        for kind in kinds:
            print("  %-20s %s" % (kind, ", ".join(
                sorted(executed.get(kind, ()))) or "-"))
    for kind, reason in sorted(EXCLUDED.items()):
        if kind not in kinds:
            print("op_coverage: excluded op kind '%s' is not in %s; drop the "
                  "exclusion" % (kind, args.ops_def))
            return 1
        print("op_coverage: excluded: %s (%s)" % (kind, reason))
    missing = [k for k in kinds if k not in executed and k not in EXCLUDED]
    if missing:
        print("op_coverage: FAILED: %d op kind(s) not executed by any GPU "
              "test: %s" % (len(missing), " ".join(missing)))
        return 1
    print("op_coverage: every op kind is executed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
