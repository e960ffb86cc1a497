// Tests for the verifier: valid kernels pass, violations are reported with
// their rule id, location and in program order, and every invalid golden in
// testdata/verifier/ says what the verifier actually reports (a small
// FileCheck and --verify-diagnostics check run here, so the goldens stay
// honest without kir-opt).
#include "analysis/verifier.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "parser/parser.h"

namespace kir {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream stream(path);
  std::stringstream buffer;
  buffer << stream.rdbuf();
  return buffer.str();
}

// The .kir files directly in testdata/<dir>, sorted by name.
std::vector<fs::path> KirFiles(const std::string& dir) {
  std::vector<fs::path> files;
  fs::path root = fs::path(KIR_TESTDATA_DIR) / dir;
  if (!fs::is_directory(root)) return files;
  for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
    if (entry.path().extension() == ".kir") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Parses `text` (which must parse) and verifies it.
absl::Status ParseAndVerify(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(text);
  if (!module.ok()) {
    ADD_FAILURE() << "parse error: " << module.status().message();
    return module.status();
  }
  return Verify(**module);
}

// The "[Vn]" ids in a status message, in order of appearance.
std::vector<std::string> RuleIds(const absl::Status& status) {
  std::vector<std::string> ids;
  absl::string_view message = status.message();
  for (size_t at = message.find("[V"); at != absl::string_view::npos;
       at = message.find("[V", at + 1)) {
    size_t close = message.find(']', at);
    if (close != absl::string_view::npos) {
      ids.emplace_back(message.substr(at + 1, close - at - 1));
    }
  }
  return ids;
}

// ---------------------------------------------------------------------------
// Valid kernels.

TEST(VerifierTest, ExampleKernelsVerify) {
  std::vector<fs::path> files = KirFiles("examples");
  ASSERT_FALSE(files.empty()) << "no examples under " << KIR_TESTDATA_DIR;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    absl::Status status = ParseAndVerify(ReadFile(file));
    EXPECT_TRUE(status.ok()) << status.message();
  }
}

// A warp-specialized kernel: a producer warp loads with cp.async and TMA, a
// consumer warpgroup computes, named barriers hand buffers over.
constexpr absl::string_view kWarpSpecialized = R"(
kernel @pipeline(%in: global f16[256, 64], %out: global f16[256, 64],
                 %in_map: tensormap f16[64, 64] of %in {swizzle = 128},
                 %out_map: tensormap f16[64, 64] of %out)
    grid(4) block(256) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c4 = const 4 : index
  %tile = alloc.shared {align = 1024, swizzle = 128} : shared f16[64, 64]
  %staged = alloc.shared {align = 128} : shared f16[64, 64]
  %bar = alloc.shared {align = 8} : shared mbarrier[1]
  %tid = thread.id x : index
  %is_t0 = cmp eq %tid, %c0 : i1
  if %is_t0 {
    mbarrier.init %bar[%c0] {count = 1}
    fence.mbarrier_init
  }
  barrier.block
  role @producer warps[0, 4) {
    setmaxnreg dec {regs = 40}
    %warp = warp.id : index
    %warp32 = cast %warp : i32
    %lane0 = const 0 : i32
    %uniform = shfl.sync idx %warp32, %lane0 : i32
    %is_warp0 = cmp eq %uniform, %lane0 : i1
    if %is_warp0 {
      %elected = elect.sync : i1
      if %elected {
        mbarrier.arrive_tx %bar[%c0] {bytes = 8192}
        tma.load %tile[%c0, %c0], %in_map[%c0, %c0], %bar[%c0]
      }
    }
    barrier.named {id = 1, threads = 256}
  }
  role @consumer warps[4, 8) {
    setmaxnreg inc {regs = 232}
    mbarrier.wait %bar[%c0], %c0
    barrier.arrive {id = 1, threads = 256}
    %t4 = sub %tid, %c0 : index
    for %i = %c0 to %c4 step %c1 {
      %v = load %tile[%i, %c0] : vec<8xf16>
      store %staged[%i, %c0], %v
    }
    fence.proxy.async shared_cta
    barrier.named {id = 2, threads = 128}
    %is_c0 = cmp eq %tid, %c4 : i1
    if %is_c0 {
      tma.store %out_map[%c0, %c0], %staged[%c0, %c0]
      %t = bulk.commit : token<bulk>
      bulk.wait %t {read}
    }
  }
}
)";

TEST(VerifierTest, WarpSpecializedKernelVerifies) {
  absl::Status status = ParseAndVerify(kWarpSpecialized);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(VerifierTest, CpAsyncGroupsInEveryThreadVerify) {
  absl::Status status = ParseAndVerify(R"(
kernel @copy(%in: global f32[1024], %out: global f32[1024]) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %c128 = const 128 : index
  %tid = thread.id x : index
  %buf = alloc.shared : shared f32[2, 128]
  for %k = %c0 to %c2 step %c1 {
    %base = mul %k, %c128 : index
    %i = add %base, %tid : index
    cp.async %buf[%k, %tid], %in[%i] {bytes = 4}
    %t = cp.async.commit : token<cp_async>
    cp.async.wait %t@1
  }
  cp.async.wait %t
  barrier.block
  %v = load %buf[%c1, %tid] : f32
  store %out[%tid], %v
}
)");
  EXPECT_TRUE(status.ok()) << status.message();
}

// An op under a condition that is never true runs in no thread: a copy
// there issues nothing for the commit after it to match (V31), and a commit
// there commits nothing for a wait to match (V32). circular-buffer commits
// a warp-specialized loop's wgmma groups so (the pass fuzzer found a
// zero-init wgmma under `cmp eq %c6, %c0`, which V31 then rejected).
TEST(VerifierTest, GroupOpsThatRunInNoThreadNeedNoMatch) {
  for (const char* text : {R"(
kernel @copy_that_never_runs(%g: global f32[128]) block(128) {
  %c0 = const 0 : index
  %c6 = const 6 : index
  %tid = thread.id x : index
  %s = alloc.shared : shared f32[128]
  %never = cmp eq %c6, %c0 : i1
  if %never {
    cp.async %s[%tid], %g[%tid] {bytes = 4}
  } else {
    cp.async %s[%tid], %g[%tid] {bytes = 8}
  }
  %t = cp.async.commit : token<cp_async>
  cp.async.wait %t
}
)",
                           R"(
kernel @commit_that_never_runs(%g: global f32[128]) block(128) {
  %c0 = const 0 : index
  %c6 = const 6 : index
  %tid = thread.id x : index
  %s = alloc.shared : shared f32[128]
  %never = cmp eq %c6, %c0 : i1
  if %never {
    cp.async %s[%tid], %g[%tid] {bytes = 4}
    %t = cp.async.commit : token<cp_async>
  }
  cp.async.wait %t
}
)"}) {
    absl::Status status = ParseAndVerify(text);
    EXPECT_TRUE(status.ok()) << status.message();
  }
}

// Thread sets are unknown when the block shape is symbolic: the rules that
// compare them have nothing to compare, and report nothing.
TEST(VerifierTest, SymbolicBlockShapeVerifies) {
  absl::Status status = ParseAndVerify(R"(
kernel @scale sizes(%N, %T) (%x: global f32[%N]) grid(cdiv(%N, %T)) block(%T) {
  %c0 = const 0 : index
  %tid = thread.id x : index
  %in = cmp lt %tid, %N : i1
  if %in {
    %v = load %x[%tid] : f32
    %w = mul %v, %v : f32
    store %x[%tid], %w
  }
}
)");
  EXPECT_TRUE(status.ok()) << status.message();
}

// ---------------------------------------------------------------------------
// Reporting.

TEST(VerifierTest, ReportsEveryViolationInProgramOrder) {
  absl::Status status = ParseAndVerify(R"(
kernel @k(%in: global f32[32]) grid(0) block(32) {
  %tid = thread.id x : index
  if %tid {
  }
  %h = load %in[%tid] : f16
  %bad = const 2 : i1
}
)");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(RuleIds(status),
            (std::vector<std::string>{"V48", "V13", "V12", "V5"}))
      << status.message();
  // Each diagnostic is located at its op and shows the line with a caret.
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "<string>:6:3: error: [V12] load result"))
      << status.message();
  EXPECT_TRUE(
      absl::StrContains(status.message(), "  %h = load %in[%tid] : f16\n  ^"))
      << status.message();
}

TEST(VerifierTest, ModuleJoinsItsKernels) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(R"(
kernel @a() block(2048) {
}
kernel @b() block(32) {
}
kernel @c() grid(0) block(32) {
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status status = Verify(**module);
  EXPECT_EQ(RuleIds(status), (std::vector<std::string>{"V47", "V48"}))
      << status.message();
  EXPECT_TRUE(Verify(*(*module)->kernels[1]).ok());
}

// Rules that need the thread analysis wait for a kernel that is otherwise
// well formed: here the type error hides the divergent shuffle.
TEST(VerifierTest, ThreadRulesRunOnlyOnOtherwiseValidKernels) {
  constexpr absl::string_view kDivergentShuffle = R"(
kernel @k(%out: global i32[32]) block(32) {
  %c16 = const 16 : index
  %tid = thread.id x : index
  %lane0 = const 0 : i32
  %low = cmp lt %tid, %c16 : i1
  if %low {
    %x = cast %tid : i32
    %y = shfl.sync idx %x, %lane0 : i32
    store %out[%tid], %y
  }
  %extra = const 0.5 : EXTRA
}
)";
  std::string valid_but_divergent =
      absl::StrReplaceAll(kDivergentShuffle, {{"EXTRA", "f32"}});
  std::string also_mistyped =
      absl::StrReplaceAll(kDivergentShuffle, {{"EXTRA", "i32"}});
  EXPECT_EQ(RuleIds(ParseAndVerify(valid_but_divergent)),
            std::vector<std::string>{"V33"});
  EXPECT_EQ(RuleIds(ParseAndVerify(also_mistyped)),
            std::vector<std::string>{"V5"});
}

// ---------------------------------------------------------------------------
// V1 and V3 through the builder: the parser never produces these.

TEST(VerifierTest, BuiltOpWithoutRequiredAttributeBreaksV1) {
  Kernel kernel("k");
  kernel.block.x = IndexExpr::Constant(32);
  OpBuilder b(kernel.body());
  Value* c0 = b.Constant(0, DType::kIndex, "c0");
  Value* bar = b.Create(OpKind::kAllocShared, {}, {},
                        {Type::Buffer(MemorySpace::kShared, DType::kMbarrier,
                                      {IndexExpr::Constant(1)})},
                        {"bar"})
                   ->result();
  b.Create(OpKind::kMbarrierInit, {Ref(bar, {c0})});  // no count
  absl::Status status = Verify(kernel);
  EXPECT_EQ(RuleIds(status), std::vector<std::string>{"V1"});
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "mbarrier.init needs attribute `count`"))
      << status.message();
}

TEST(VerifierTest, BuiltOperandOfTheWrongSlotKindBreaksV1) {
  Kernel kernel("k");
  kernel.block.x = IndexExpr::Constant(32);
  Param tensor;
  tensor.kind = Param::Kind::kTensor;
  Value* in = kernel
                  .AddParam("in",
                            Type::Buffer(MemorySpace::kGlobal, DType::kF32,
                                         {IndexExpr::Constant(32)}),
                            tensor)
                  .value;
  OpBuilder b(kernel.body());
  // A load needs `%in[...]`; a plain value operand has no indices.
  b.Create(OpKind::kLoad, {Use(in)}, {}, {Type::Scalar(DType::kF32)}, {"v"});
  absl::Status status = Verify(kernel);
  EXPECT_EQ(RuleIds(status), std::vector<std::string>{"V1"});
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "load source must be a buffer reference"))
      << status.message();
}

TEST(VerifierTest, BuiltParameterOfTheWrongTypeBreaksV1) {
  Kernel kernel("k");
  kernel.block.x = IndexExpr::Constant(32);
  Param map;
  map.kind = Param::Kind::kTensorMap;  // but no tensor and a scalar type
  kernel.AddParam("map", Type::Scalar(DType::kI32), map);
  absl::Status status = Verify(kernel);
  EXPECT_EQ(RuleIds(status), std::vector<std::string>{"V1"});
}

TEST(VerifierTest, BuiltUseBeforeDefinitionBreaksV3) {
  Kernel kernel("k");
  kernel.block.x = IndexExpr::Constant(32);
  OpBuilder b(kernel.body());
  Value* one = b.Constant(1, DType::kIndex, "one");
  b.Binary(OpKind::kAdd, one, one, "two");
  // Move the constant after its use, as a broken pass might.
  kernel.body().Append(kernel.body().Take(0));
  absl::Status status = Verify(kernel);
  EXPECT_EQ(RuleIds(status), std::vector<std::string>{"V3"});
  EXPECT_TRUE(
      absl::StrContains(status.message(), "%one is used before it is defined"))
      << status.message();
}

// Scope is decided from where the definition and the use sit: a token
// committed in a loop inside an if is usable after both, but not in the
// if's other branch; a loop's induction variable not past its loop.
TEST(VerifierTest, TokensOutliveTheRegionsAroundTheirCommit) {
  const std::string prefix = R"(
kernel @k(%in: global f32[1024], %out: global f32[1024]) block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c2 = const 2 : index
  %tid = thread.id x : index
  %always = cmp lt %c0, %c1 : i1
  %buf = alloc.shared : shared f32[2, 128]
  if %always {
    for %k = %c0 to %c2 step %c1 {
      cp.async %buf[%k, %tid], %in[%tid] {bytes = 4}
      %t = cp.async.commit : token<cp_async>
    }
)";
  absl::Status after = ParseAndVerify(prefix + R"(
  }
  cp.async.wait %t
  barrier.block
  %v = load %buf[%c1, %tid] : f32
  store %out[%tid], %v
}
)");
  EXPECT_TRUE(after.ok()) << after.message();

  absl::Status other_branch = ParseAndVerify(prefix + R"(
  } else {
    cp.async.wait %t
  }
  for %j = %c0 to %c2 step %k {
    %x = const 1.0 : f32
  }
}
)");
  EXPECT_EQ(RuleIds(other_branch), (std::vector<std::string>{"V3", "V3"}));
  EXPECT_TRUE(
      absl::StrContains(other_branch.message(), "%t is not in scope here"))
      << other_branch.message();
  EXPECT_TRUE(
      absl::StrContains(other_branch.message(), "%k is not in scope here"))
      << other_branch.message();
}

// ---------------------------------------------------------------------------
// The goldens.

// One `// -----` separated case of a golden: its lines [begin, end), 0-based.
struct GoldenCase {
  int begin = 0;
  int end = 0;
};

std::vector<GoldenCase> SplitCases(const std::vector<std::string>& lines) {
  std::vector<GoldenCase> cases;
  int begin = 0;
  for (int i = 0; i <= static_cast<int>(lines.size()); ++i) {
    if (i == static_cast<int>(lines.size()) ||
        absl::StripAsciiWhitespace(lines[i]) == "// -----") {
      cases.push_back({begin, i});
      begin = i + 1;
    }
  }
  return cases;
}

// Verifies one case, keeping the file's line numbers as kir-opt does;
// returns the rendered diagnostics ("" when the case verifies).
std::string RunCase(const std::string& name,
                    const std::vector<std::string>& lines,
                    const GoldenCase& golden_case) {
  std::string text;
  for (int i = 0; i < golden_case.end; ++i) {
    if (i >= golden_case.begin) text += lines[i];
    text += "\n";
  }
  auto source = std::make_shared<SourceFile>();
  source->name = name;
  source->text = std::move(text);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(source);
  if (!module.ok()) {
    ADD_FAILURE() << "line " << golden_case.begin + 1
                  << ": the case does not parse: " << module.status().message();
    return std::string(module.status().message());
  }
  absl::Status status = Verify(**module);
  return status.ok() ? "" : std::string(status.message()) + "\n";
}

// A CHECK pattern as this test understands it: literal text with
// `[[# @LINE + N]]` substitutions and optional `{{^}}` / `{{$}}` anchors
// (matched with --strict-whitespace). Returns false on anything else.
bool ExpandPattern(absl::string_view pattern, int line, std::string* literal,
                   bool* at_start, bool* at_end) {
  *at_start = absl::ConsumePrefix(&pattern, "{{^}}");
  *at_end = absl::ConsumeSuffix(&pattern, "{{$}}");
  literal->clear();
  while (!pattern.empty()) {
    if (absl::StartsWith(pattern, "{{")) return false;
    if (!absl::StartsWith(pattern, "[[")) {
      literal->push_back(pattern.front());
      pattern.remove_prefix(1);
      continue;
    }
    size_t close = pattern.find("]]");
    if (close == absl::string_view::npos) return false;
    std::string expression;
    for (char c : pattern.substr(2, close - 2)) {
      if (c != ' ' && c != '#') expression.push_back(c);
    }
    absl::string_view rest = expression;
    if (!absl::ConsumePrefix(&rest, "@LINE")) return false;
    int offset = 0;
    if (!rest.empty()) {
      bool minus = rest.front() == '-';
      if (!minus && rest.front() != '+') return false;
      rest.remove_prefix(1);
      if (!absl::SimpleAtoi(rest, &offset)) return false;
      if (minus) offset = -offset;
    }
    absl::StrAppend(literal, line + offset);
    pattern.remove_prefix(close + 2);
  }
  return true;
}

bool LineMatches(absl::string_view line, const std::string& literal,
                 bool at_start, bool at_end) {
  if (at_start && at_end) return line == literal;
  if (at_start) return absl::StartsWith(line, literal);
  if (at_end) return absl::EndsWith(line, literal);
  return absl::StrContains(line, literal);
}

// Checks `output` against the CHECK and CHECK-NEXT lines of `lines`, line
// by line, as `FileCheck --strict-whitespace` would.
void CheckFileCheckDirectives(const std::vector<std::string>& lines,
                              const std::string& output) {
  std::vector<std::string> out = absl::StrSplit(output, '\n');
  int next = 0;  // the first output line not yet matched
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    absl::string_view line = absl::StripLeadingAsciiWhitespace(lines[i]);
    if (!absl::ConsumePrefix(&line, "// CHECK")) continue;
    bool must_be_next = absl::ConsumePrefix(&line, "-NEXT");
    if (!absl::ConsumePrefix(&line, ":")) {
      ADD_FAILURE() << "line " << i + 1 << ": unsupported directive";
      continue;
    }
    std::string literal;
    bool at_start = false;
    bool at_end = false;
    if (!ExpandPattern(absl::StripLeadingAsciiWhitespace(line), i + 1, &literal,
                       &at_start, &at_end)) {
      ADD_FAILURE() << "line " << i + 1 << ": unsupported pattern";
      continue;
    }
    int found = -1;
    for (int o = next; o < static_cast<int>(out.size()); ++o) {
      if (LineMatches(out[o], literal, at_start, at_end)) {
        found = o;
        break;
      }
      if (must_be_next) break;
    }
    if (found < 0) {
      ADD_FAILURE() << "line " << i + 1 << ": no match for \"" << literal
                    << "\"" << (must_be_next ? " on the next line" : "")
                    << " after output line " << next << " of:\n"
                    << output;
      return;
    }
    next = found + 1;
  }
}

// Checks `output` against expected-error/-note directives: each must match a
// diagnostic of its severity on its line whose message contains its text,
// and each diagnostic must be expected.
void CheckExpectedDiagnostics(const std::string& name,
                              const std::vector<std::string>& lines,
                              const GoldenCase& golden_case,
                              const std::string& output) {
  struct Expected {
    std::string severity;
    int line;
    std::string text;
    bool matched = false;
  };
  std::vector<Expected> expected;
  for (int i = golden_case.begin; i < golden_case.end; ++i) {
    absl::string_view line = lines[i];
    size_t at = line.find("expected-");
    if (at == absl::string_view::npos) continue;
    line.remove_prefix(at + 9);
    Expected e;
    for (const char* severity : {"error", "note", "warning"}) {
      if (absl::ConsumePrefix(&line, severity)) e.severity = severity;
    }
    e.line = i + 1;
    if (absl::ConsumePrefix(&line, "@")) {
      size_t space = line.find(' ');
      int offset = 0;
      ASSERT_TRUE(absl::SimpleAtoi(line.substr(0, space), &offset))
          << "line " << i + 1;
      e.line += offset;
      line.remove_prefix(space);
    }
    size_t open = line.find("{{");
    size_t close = line.rfind("}}");
    ASSERT_TRUE(open != absl::string_view::npos &&
                close != absl::string_view::npos && !e.severity.empty())
        << "line " << i + 1 << ": malformed directive";
    e.text = std::string(line.substr(open + 2, close - open - 2));
    expected.push_back(e);
  }
  for (absl::string_view out_line : absl::StrSplit(output, '\n')) {
    if (!absl::ConsumePrefix(&out_line, name + ":")) continue;
    std::vector<std::string> parts =
        absl::StrSplit(out_line, absl::MaxSplits(": ", 2));
    ASSERT_EQ(parts.size(), 3u) << out_line;
    int line = 0;
    ASSERT_TRUE(
        absl::SimpleAtoi(parts[0].substr(0, parts[0].find(':')), &line));
    auto it =
        std::find_if(expected.begin(), expected.end(), [&](const Expected& e) {
          return !e.matched && e.line == line && e.severity == parts[1] &&
                 absl::StrContains(parts[2], e.text);
        });
    if (it == expected.end()) {
      ADD_FAILURE() << "unexpected " << parts[1] << " on line " << line << ": "
                    << parts[2];
    } else {
      it->matched = true;
    }
  }
  for (const Expected& e : expected) {
    EXPECT_TRUE(e.matched) << "expected " << e.severity << " on line " << e.line
                           << " was not reported: " << e.text;
  }
}

TEST(VerifierGoldenTest, GoldensMatchTheVerifier) {
  std::vector<fs::path> files = KirFiles("verifier");
  ASSERT_FALSE(files.empty());
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    std::string name = file.filename().string();
    std::vector<std::string> lines = absl::StrSplit(ReadFile(file), '\n');
    ASSERT_FALSE(lines.empty());
    const bool verify_diagnostics =
        absl::StrContains(lines[0], "--verify-diagnostics");
    const bool expect_failure = absl::StrContains(lines[0], "RUN: not ");
    ASSERT_TRUE(verify_diagnostics || expect_failure)
        << "first line is not a known RUN line: " << lines[0];
    std::string output;
    for (const GoldenCase& golden_case : SplitCases(lines)) {
      // Each case says what it proves.
      bool has_kernel = false;
      bool has_summary = false;
      for (int i = golden_case.begin; i < golden_case.end; ++i) {
        has_kernel |= absl::StartsWith(lines[i], "kernel ");
        has_summary |= absl::StartsWith(lines[i], "/// ");
      }
      if (!has_kernel) continue;
      EXPECT_TRUE(has_summary)
          << "case at line " << golden_case.begin + 1 << " has no /// summary";
      std::string case_output = RunCase(name, lines, golden_case);
      EXPECT_FALSE(case_output.empty())
          << "case at line " << golden_case.begin + 1 << " verifies";
      if (verify_diagnostics) {
        CheckExpectedDiagnostics(name, lines, golden_case, case_output);
      }
      output += case_output;
    }
    if (!verify_diagnostics) CheckFileCheckDirectives(lines, output);
  }
}

// The numbered checklist at the top of verifier.h.
std::vector<int> HeaderRuleIds() {
  std::string header =
      ReadFile(fs::path(KIR_TESTDATA_DIR) / ".." / "analysis" / "verifier.h");
  std::vector<int> ids;
  for (absl::string_view line : absl::StrSplit(header, '\n')) {
    if (!absl::ConsumePrefix(&line, "//   V")) continue;
    int id = 0;
    if (absl::SimpleAtoi(line.substr(0, line.find(' ')), &id)) {
      ids.push_back(id);
    }
  }
  return ids;
}

TEST(VerifierGoldenTest, HeaderListsRulesInOrder) {
  std::vector<int> ids = HeaderRuleIds();
  ASSERT_FALSE(ids.empty());
  for (int i = 0; i < static_cast<int>(ids.size()); ++i) {
    EXPECT_EQ(ids[i], i + 1);
  }
}

TEST(VerifierGoldenTest, EveryRuleHasAnInvalidGolden) {
  // V1 (ops have their ops.def shape) holds for everything the parser
  // builds; the builder tests above cover it.
  const std::set<int> kBuilderOnly = {1};
  std::set<int> covered;
  for (const fs::path& file : KirFiles("verifier")) {
    for (absl::string_view line : absl::StrSplit(ReadFile(file), '\n')) {
      bool expectation = absl::StrContains(line, "// CHECK") ||
                         absl::StrContains(line, "expected-error");
      if (!expectation) continue;
      for (size_t at = line.find("[V"); at != absl::string_view::npos;
           at = line.find("[V", at + 1)) {
        int id = 0;
        absl::string_view digits = line.substr(at + 2);
        digits = digits.substr(0, digits.find(']'));
        if (absl::SimpleAtoi(digits, &id)) covered.insert(id);
      }
    }
  }
  for (int id : HeaderRuleIds()) {
    if (kBuilderOnly.count(id) != 0) continue;
    EXPECT_TRUE(covered.count(id) != 0)
        << "rule V" << id << " has no invalid golden in testdata/verifier/";
  }
}

}  // namespace
}  // namespace kir
