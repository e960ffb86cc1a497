# lit configuration for the kir goldens. Loaded through the lit.site.cfg.py
# that CMake writes into <build>/testdata, which sets the paths used here.
import os
import shutil
import subprocess
import sys


config.name = "kir"
config.suffixes = [".kir"]
# Fixtures read by other tests, not tests themselves.
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kir_obj_root, "testdata")


sys.path.insert(0, config.test_source_root)
from kir_lit_format import KirShTest  # noqa: E402

config.test_format = KirShTest(execute_external=False)

# FileCheck fails on captured variables leaking across CHECK-LABELs and on
# unused prefixes, so typos in check prefixes do not pass silently.
config.environment["FILECHECK_OPTS"] = (
    "-enable-var-scope --allow-unused-prefixes=false")


def tool_pattern(name):
    # Only the bare word: not inside paths (%S/kir-opt/...) or flags.
    return r"(?<![\w./-])" + name.replace("-", r"\-") + r"(?![\w./-])"


kir_opt = os.path.join(config.kir_tools_dir, "kir-opt", "kir-opt")
kir_run = os.path.join(config.kir_tools_dir, "kir-run", "kir-run")
kir_check = os.path.join(config.kir_tools_dir, "kir-check", "kir-check")
kir_gen = os.path.join(config.kir_tools_dir, "kir-gen", "kir-gen")
kir_bench = os.path.join(config.kir_tools_dir, "kir-bench", "kir-bench")
filecheck = os.path.join(config.llvm_tools_dir, "FileCheck")
if not os.path.exists(filecheck):
    filecheck = shutil.which("FileCheck-19") or "FileCheck"
not_tool = os.path.join(config.llvm_tools_dir, "not")
if not os.path.exists(not_tool):
    # A portable stand-in: succeeds when the command fails.
    not_tool = "%s %s" % (sys.executable,
                          os.path.join(config.test_source_root, "not.py"))

# `expect-exit N command...`: succeeds when the command exits with code N
# (lit's shell only distinguishes zero from non-zero).
expect_exit = "%s %s" % (sys.executable,
                         os.path.join(config.test_source_root, "expect_exit.py"))

config.substitutions.append((tool_pattern("kir-opt"), kir_opt))
config.substitutions.append((tool_pattern("kir-run"), kir_run))
config.substitutions.append((tool_pattern("kir-check"), kir_check))
config.substitutions.append((tool_pattern("kir-gen"), kir_gen))
config.substitutions.append((tool_pattern("kir-bench"), kir_bench))
config.substitutions.append((tool_pattern("expect-exit"), expect_exit))
config.substitutions.append((tool_pattern("sass-divergence"), "%s %s" % (
    sys.executable, os.path.join(config.test_source_root, "sass_divergence.py"))))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append((tool_pattern("FileCheck"), filecheck))
config.substitutions.append((tool_pattern("not"), not_tool))

# --- Features ---------------------------------------------------------------
# `cuda`: kir-run can run kernels here (it was built, and `kir-run --probe`
# finds a usable sm_90 GPU). Tests that need one say `REQUIRES: cuda`; a test
# without a REQUIRES line that comes out UNSUPPORTED fails (kir_lit_format).
# `cuobjdump` and `compute-sanitizer`: those CUDA tools are installed.

if os.path.exists(kir_run):
    try:
        probe = subprocess.run([kir_run, "--probe"], capture_output=True,
                               text=True, timeout=120)
        probe_text = (probe.stdout + probe.stderr).strip()
        if probe.returncode == 0:
            config.available_features.add("cuda")
    except (OSError, subprocess.TimeoutExpired) as error:
        probe_text = "kir-run --probe failed: %s" % error
    lit_config.note("kir-run --probe: " + (probe_text or "(no output)"))
else:
    lit_config.note("kir-run was not built (no CUDA toolkit)")


def find_cuda_tool(name):
    for directory in [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]:
        path = os.path.join(directory, "bin", name)
        if directory and os.access(path, os.X_OK):
            return path
    return shutil.which(name)


for cuda_tool in ["cuobjdump", "compute-sanitizer"]:
    if find_cuda_tool(cuda_tool):
        config.available_features.add(cuda_tool)

# In a sanitizer build (KIR_SANITIZE) a report aborts the tool, so that a
# `not` or `expect-exit` line cannot take it for the failure it expects;
# leaks are reported too. Options given in the environment win.
if getattr(config, "kir_sanitize", False):
    config.environment.setdefault("ASAN_OPTIONS",
                                  "detect_leaks=1:abort_on_error=1")
    config.environment.setdefault(
        "UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:abort_on_error=1")
    config.available_features.add("sanitizers")

# kir-run and the CUDA tools it starts look for CUDA here.
for variable in ["CUDA_HOME", "LD_LIBRARY_PATH", "KIR_CACHE_DIR", "HOME"]:
    if variable in os.environ:
        config.environment[variable] = os.environ[variable]

lit_config.note("kir-opt: " + kir_opt)
lit_config.note("features: " + (", ".join(sorted(config.available_features))
                                or "(none)"))
