// Tests for the conflict analysis.
//
// The conflict analysis is checked against brute force: random kernels with
// two accesses whose indices are affine in thread ids, warp and lane ids,
// a block id (an unknown uniform value) and a loop's induction variable
// (and its remainder), under random thread guards and block shapes. For
// every pair the executing threads, block ids and iterations are
// enumerated; the analysis must never answer "disjoint" for a pair that
// overlaps. The precision (disjoint pairs proven disjoint) is printed.
#include "analysis/conflicts.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/thread_analysis.h"
#include "gtest/gtest.h"
#include "ir/sanitizers.h"
#include "parser/parser.h"
#include "parser/testing/parse_for_test.h"

namespace kir {
namespace {

// ---------------------------------------------------------------------------
// Random affine accesses.

enum class TermKind {
  kConst,
  kTx,
  kTy,
  kWarp,
  kLane,
  kTxDiv,
  kTxRem,
  kBlock,
  kIv,
  kIvRem,
  // The forms added for global memory and fewer needless barriers:
  kFlatDiv,      // (iv * C + tid) / m, C a multiple of m
  kFlatRem,      // (iv * C + tid) % m
  kIvOffsetRem,  // (iv + c) % m
  kIvDivSize,    // iv / %T, %T a size
  kIvRemSize,    // iv % %T
  kRoleTid,      // tid - the role's first thread
};

struct Term {
  TermKind kind;
  int64_t coefficient;
  int64_t parameter;   // constant, divisor or modulus
  int64_t parameter2;  // kFlat*: C; kIvOffsetRem: c
};

struct Block {
  int x, y;
};

struct Env {
  int tx, ty, warp, lane;
  int64_t block, iv;
  int tid = 0;
  int64_t size = 1;  // %T
  int role_base = 0;
};

int64_t Evaluate(const std::vector<Term>& terms, const Env& env) {
  int64_t sum = 0;
  for (const Term& term : terms) {
    int64_t value = 0;
    switch (term.kind) {
      case TermKind::kConst:
        value = term.parameter;
        break;
      case TermKind::kTx:
        value = env.tx;
        break;
      case TermKind::kTy:
        value = env.ty;
        break;
      case TermKind::kWarp:
        value = env.warp;
        break;
      case TermKind::kLane:
        value = env.lane;
        break;
      case TermKind::kTxDiv:
        value = env.tx / term.parameter;
        break;
      case TermKind::kTxRem:
        value = env.tx % term.parameter;
        break;
      case TermKind::kBlock:
        value = env.block;
        break;
      case TermKind::kIv:
        value = env.iv;
        break;
      case TermKind::kIvRem:
        value = env.iv % term.parameter;
        break;
      case TermKind::kFlatDiv:
        value = (env.iv * term.parameter2 + env.tid) / term.parameter;
        break;
      case TermKind::kFlatRem:
        value = (env.iv * term.parameter2 + env.tid) % term.parameter;
        break;
      case TermKind::kIvOffsetRem:
        value = (env.iv + term.parameter2) % term.parameter;
        break;
      case TermKind::kIvDivSize:
        value = env.iv / env.size;
        break;
      case TermKind::kIvRemSize:
        value = env.iv % env.size;
        break;
      case TermKind::kRoleTid:
        value = env.tid - env.role_base;
        break;
    }
    sum += term.coefficient * value;
  }
  return sum;
}

// A guard: threads with tx (or the linear id) below / at least a bound, or
// exactly thread 0; or none.
struct Guard {
  int kind = 0;  // 0 none, 1 tx < n, 2 tx >= n, 3 tid == 0, 4 warp < n
  int bound = 0;
  bool Holds(const Env& env) const {
    switch (kind) {
      case 1:
        return env.tx < bound;
      case 2:
        return env.tx >= bound;
      case 3:
        return env.tx == 0 && env.ty == 0;
      case 4:
        return env.warp < bound;
      default:
        return true;
    }
  }
};

struct Access {
  std::vector<std::vector<Term>> indices;  // one per dimension
  int lanes = 1;
  Guard guard;
  bool writes = true;
};

// Which index form a batch of random pairs exercises: every access then has
// a term of that form in some dimension (or, for kGlobal and kRole, the
// buffer is global with sizes the analysis does not know, or both accesses
// run in a role of part of the block).
enum class Form {
  kBase,
  kFlatDivRem,
  kIvOffsetRem,
  kTile,
  kRole,
  kGlobal,
};

class Generator {
 public:
  Generator(uint32_t seed, Form form) : rng_(seed), form_(form) {}

  int Pick(int lo, int hi) {  // inclusive
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }

  std::vector<Term> Index(int extent, int dim) {
    std::vector<Term> terms;
    const int count = Pick(0, form_ == Form::kBase ? 3 : 2);
    for (int i = 0; i < count; ++i) {
      Term term{static_cast<TermKind>(Pick(1, 9)), Pick(-2, 3), 1, 0};
      if (term.coefficient == 0) term.coefficient = 1;
      if (term.kind == TermKind::kTxDiv) term.parameter = 1 << Pick(1, 4);
      if (term.kind == TermKind::kTxRem) term.parameter = 1 << Pick(1, 4);
      if (term.kind == TermKind::kIvRem) term.parameter = Pick(2, 3);
      terms.push_back(term);
    }
    // The form's own terms, in the last dimension (or, for a tile, the
    // quotient in the first and the remainder in the last), with
    // coefficients large enough to matter against the others.
    const int64_t big = std::max(1, extent / (1 << Pick(0, 2)));
    switch (form_) {
      case Form::kFlatDivRem: {
        if (Pick(0, 1) == 0) break;
        const int64_t m = 1 << Pick(1, 4);
        const int64_t c = m << Pick(0, 2);
        terms.push_back(
            Term{Pick(0, 1) ? TermKind::kFlatDiv : TermKind::kFlatRem,
                 Pick(1, 2), m, c});
        break;
      }
      case Form::kIvOffsetRem:
        if (Pick(0, 2) == 0) break;
        terms.push_back(
            Term{TermKind::kIvOffsetRem, Pick(1, 3), Pick(2, 3), Pick(0, 3)});
        break;
      case Form::kTile:
        if (dim == 0 || Pick(0, 2) == 0) {
          terms.push_back(
              Term{dim == 0 ? TermKind::kIvDivSize : TermKind::kIvRemSize, big,
                   1, 0});
        }
        break;
      case Form::kRole:
        if (Pick(0, 1) == 0) {
          terms.push_back(Term{TermKind::kRoleTid, Pick(1, 2), 1, 0});
        }
        break;
      default:
        break;
    }
    terms.push_back(Term{TermKind::kConst, 1, Pick(0, extent), 0});
    return terms;
  }

  Access MakeAccess(const std::vector<int>& shape, const Block& block) {
    Access access;
    for (size_t d = 0; d < shape.size(); ++d) {
      access.indices.push_back(Index(shape[d], static_cast<int>(d)));
    }
    access.lanes = 1 << Pick(0, 2);
    access.writes = Pick(0, 1) == 1;
    access.guard.kind = Pick(0, 4);
    access.guard.bound = Pick(1, block.x);
    if (access.guard.kind == 4) access.guard.bound = Pick(1, 4);
    return access;
  }

 private:
  std::mt19937 rng_;
  Form form_;
};

std::string Name(int64_t value) {
  return value < 0 ? absl::StrCat("%km", -value) : absl::StrCat("%k", value);
}

// Emits the ops computing one index; returns its value name.
std::string EmitIndex(const std::vector<Term>& terms, const std::string& name,
                      std::string& body) {
  std::vector<std::string> parts;
  int n = 0;
  for (const Term& term : terms) {
    std::string base;
    const std::string f = absl::StrCat("%", name, "_f", n);
    switch (term.kind) {
      case TermKind::kConst:
        parts.push_back(Name(term.parameter * term.coefficient));
        continue;
      case TermKind::kTx:
        base = "%tx";
        break;
      case TermKind::kTy:
        base = "%ty";
        break;
      case TermKind::kWarp:
        base = "%warp";
        break;
      case TermKind::kLane:
        base = "%lane";
        break;
      case TermKind::kBlock:
        base = "%bid";
        break;
      case TermKind::kIv:
        base = "%i";
        break;
      case TermKind::kRoleTid:
        base = "%rtid";
        break;
      case TermKind::kTxDiv:
      case TermKind::kTxRem:
      case TermKind::kIvRem:
        base = f;
        absl::StrAppend(&body, "    ", base, " = ",
                        term.kind == TermKind::kTxDiv ? "div" : "rem", " ",
                        term.kind == TermKind::kIvRem ? "%i" : "%tx", ", ",
                        Name(term.parameter), " : index\n");
        break;
      case TermKind::kFlatDiv:
      case TermKind::kFlatRem:
        base = f;
        absl::StrAppend(&body, "    ", f, "_s = mul %i, ",
                        Name(term.parameter2), " : index\n    ", f, "_x = add ",
                        f, "_s, %tid : index\n    ", base, " = ",
                        term.kind == TermKind::kFlatDiv ? "div" : "rem", " ", f,
                        "_x, ", Name(term.parameter), " : index\n");
        break;
      case TermKind::kIvOffsetRem:
        base = f;
        absl::StrAppend(&body, "    ", f, "_x = add %i, ",
                        Name(term.parameter2), " : index\n    ", base,
                        " = rem ", f, "_x, ", Name(term.parameter),
                        " : index\n");
        break;
      case TermKind::kIvDivSize:
      case TermKind::kIvRemSize:
        base = f;
        absl::StrAppend(&body, "    ", base, " = ",
                        term.kind == TermKind::kIvDivSize ? "div" : "rem",
                        " %i, %T : index\n");
        break;
    }
    std::string scaled = absl::StrCat("%", name, "_t", n++);
    absl::StrAppend(&body, "    ", scaled, " = mul ", base, ", ",
                    Name(term.coefficient), " : index\n");
    parts.push_back(scaled);
  }
  std::string sum = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string next = absl::StrCat("%", name, "_s", i);
    absl::StrAppend(&body, "    ", next, " = add ", sum, ", ", parts[i],
                    " : index\n");
    sum = next;
  }
  return sum;
}

std::string EmitGuard(const Guard& guard, const std::string& name,
                      std::string& body) {
  std::string cond = absl::StrCat("%", name, "_g");
  switch (guard.kind) {
    case 1:
      absl::StrAppend(&body, "    ", cond, " = cmp lt %tx, ", Name(guard.bound),
                      " : i1\n");
      break;
    case 2:
      absl::StrAppend(&body, "    ", cond, " = cmp ge %tx, ", Name(guard.bound),
                      " : i1\n");
      break;
    case 3:
      absl::StrAppend(&body, "    ", cond, " = cmp eq %tid, %k0 : i1\n");
      break;
    case 4:
      absl::StrAppend(&body, "    ", cond, " = cmp lt %warp, ",
                      Name(guard.bound), " : i1\n");
      break;
    default:
      return "";
  }
  return cond;
}

// Every constant -128..128 is defined up front.
std::string Constants() {
  std::string out;
  for (int v = -128; v <= 128; ++v) {
    absl::StrAppend(&out, "  ", Name(v), " = const ", v, " : index\n");
  }
  return out;
}

std::string EmitAccess(const Access& access, const std::string& name,
                       const std::vector<int>& shape) {
  std::string body;
  std::vector<std::string> indices;
  for (size_t d = 0; d < access.indices.size(); ++d) {
    indices.push_back(
        EmitIndex(access.indices[d], absl::StrCat(name, "d", d), body));
  }
  std::string cond = EmitGuard(access.guard, name, body);
  std::string type =
      access.lanes == 1 ? "f32" : absl::StrCat("vec<", access.lanes, "xf32>");
  std::string op;
  if (access.writes) {
    std::string value =
        access.lanes == 1 ? "%f" : absl::StrCat("%v", access.lanes);
    op = absl::StrCat("store %s[", absl::StrJoin(indices, ", "), "], ", value);
  } else {
    op = absl::StrCat("%", name, "_r = load %s[", absl::StrJoin(indices, ", "),
                      "] : ", type);
  }
  if (cond.empty()) {
    absl::StrAppend(&body, "    ", op, "\n");
  } else {
    absl::StrAppend(&body, "    if ", cond, " {\n      ", op, "\n    }\n");
  }
  return body;
}

struct Outcome {
  int pairs = 0, overlapping = 0, disjoint = 0, proven_disjoint = 0,
      unsound = 0;
  // Pairs without a block id or size: the brute force saw every value they
  // take, so "disjoint" is exact there (those are only sampled).
  int exact_disjoint = 0, exact_proven = 0;
};

bool Uses(const Access& access, std::initializer_list<TermKind> kinds) {
  for (const auto& index : access.indices) {
    for (const Term& term : index) {
      for (TermKind kind : kinds) {
        if (term.kind == kind) return true;
      }
    }
  }
  return false;
}

void RunRandomPairs(uint32_t seed, int count, Form form, Outcome& outcome) {
  const Block blocks[] = {{32, 1}, {64, 1}, {16, 4}, {8, 8}, {96, 1}, {32, 3}};
  Generator gen(seed, form);
  const int kTrips = 4;
  for (int n = 0; n < count; ++n) {
    const Block block = blocks[gen.Pick(0, 5)];
    const int threads_per_block = block.x * block.y;
    std::vector<int> shape;
    const int rank = gen.Pick(1, 2);
    for (int d = 0; d < rank; ++d) shape.push_back(1 << gen.Pick(2, 5));
    Access a = gen.MakeAccess(shape, block);
    Access b = gen.MakeAccess(shape, block);
    if (!a.writes && !b.writes) a.writes = true;
    // Same iteration, or `b` some iterations after `a`.
    const int distance = gen.Pick(0, 2) == 0 ? 0 : gen.Pick(1, 4);
    // A role of some of the block's warps around both accesses.
    const int warps = (threads_per_block + 31) / 32;
    int role_begin = 0, role_end = warps;
    if (form == Form::kRole) {
      role_begin = gen.Pick(0, warps - 1);
      role_end = gen.Pick(role_begin + 1, warps);
    }
    const int role_base = role_begin * 32;

    std::string buffer;
    std::string params = "%out: global f32[4]";
    if (form == Form::kGlobal) {
      // The analysis sees symbolic extents; the brute force, these.
      std::vector<std::string> dims;
      for (int d = 0; d < rank; ++d) dims.push_back(absl::StrCat("%D", d));
      absl::StrAppend(&params, ", %s: global f32[", absl::StrJoin(dims, ", "),
                      "]");
    } else {
      buffer = absl::StrCat("  %s = alloc.shared : shared f32[",
                            absl::StrJoin(shape, ", "), "]\n");
    }
    std::string loop = absl::StrCat("  for %i = %k0 to ", Name(kTrips),
                                    " step %k1 {\n", EmitAccess(a, "a", shape),
                                    EmitAccess(b, "b", shape), "  }\n");
    if (form == Form::kRole) {
      loop = absl::StrCat("  role @r warps[", role_begin, ", ", role_end,
                          ") {\n  %rtid = sub %tid, ", Name(role_base),
                          " : index\n", loop, "  }\n");
    }
    std::string text =
        absl::StrCat("kernel @k sizes(%T, %D0, %D1) (", params, ") block(",
                     block.x, ", ", block.y, ") {\n", Constants(),
                     "  %f = const 1.0 : f32\n"
                     "  %v2 = vec.from %f, %f : vec<2xf32>\n"
                     "  %v4 = vec.from %f, %f, %f, %f : vec<4xf32>\n",
                     buffer,
                     "  %tx = thread.id x : index\n"
                     "  %ty = thread.id y : index\n"
                     "  %warp = warp.id : index\n"
                     "  %lane = lane.id : index\n"
                     "  %tyx = mul %ty, ",
                     Name(block.x),
                     " : index\n"
                     "  %tid = add %tyx, %tx : index\n"
                     "  %bid = block.id x : index\n",
                     loop, "}\n");
    std::unique_ptr<Module> module = ParseForTest(text);
    if (module == nullptr) return;
    const Kernel& kernel = *module->kernels[0];
    ThreadAnalysis threads(kernel);
    ConflictAnalysis conflicts(kernel, threads);
    std::vector<const Op*> accesses;
    const Op* loop_op = nullptr;
    Walk(kernel.body(), [&](const Op& op) {
      if (op.kind() == OpKind::kFor) loop_op = &op;
      if (op.kind() == OpKind::kStore || op.kind() == OpKind::kLoad) {
        if (op.operand_value(0)->name() == "s") accesses.push_back(&op);
      }
    });
    ASSERT_EQ(accesses.size(), 2u) << text;
    const Op& op_a = *accesses[0];
    const Op& op_b = *accesses[1];
    MemoryEffect ea = MemoryEffectsOf(op_a)[0];
    MemoryEffect eb = MemoryEffectsOf(op_b)[0];
    std::vector<CarriedLoop> carried;
    if (distance > 0) carried.push_back(CarriedLoop{loop_op, distance});
    const bool answer =
        conflicts.MayOverlap(op_a, ea, conflicts.Executing(op_a), op_b, eb,
                             conflicts.Executing(op_b), carried);

    // Brute force: linear element offsets in the buffer, of in-bounds
    // accesses only (an index outside its dimension is undefined behaviour,
    // ir/language.md; the analysis may assume it never happens).
    auto offset = [&](const Access& access, const Env& env) -> int64_t {
      int64_t linear = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        const int64_t index = Evaluate(access.indices[d], env);
        const int64_t width = d + 1 == shape.size() ? access.lanes : 1;
        if (index < 0 || index + width > shape[d]) return -1;
        linear = linear * shape[d] + index;
      }
      return linear;
    };
    auto env_of = [&](int t, int64_t bid, int64_t iv, int64_t size) {
      Env env{t % block.x, t / block.x, t / 32, t % 32, bid, iv};
      env.tid = t;
      env.size = size;
      env.role_base = role_base;
      return env;
    };
    auto in_role = [&](int t) {
      return t / 32 >= role_begin && t / 32 < role_end;
    };
    const bool sized = Uses(a, {TermKind::kIvDivSize, TermKind::kIvRemSize}) ||
                       Uses(b, {TermKind::kIvDivSize, TermKind::kIvRemSize});
    bool truth = false;
    for (int64_t size = 1; size <= (sized ? 3 : 1) && !truth; ++size) {
      for (int64_t bid = 0; bid < 3 && !truth; ++bid) {
        for (int64_t iv_b = 0; iv_b < kTrips && !truth; ++iv_b) {
          // distance 4 stands for "4 or more".
          for (int64_t iv_a = 0; iv_a < kTrips && !truth; ++iv_a) {
            const int64_t gap = iv_b - iv_a;
            if (distance == 0
                    ? gap != 0
                    : (distance < CarriedLoop::kMaxDistance ? gap != distance
                                                            : gap < distance)) {
              continue;
            }
            for (int t1 = 0; t1 < threads_per_block && !truth; ++t1) {
              if (!in_role(t1)) continue;
              Env env_a = env_of(t1, bid, iv_a, size);
              if (!a.guard.Holds(env_a)) continue;
              const int64_t off_a = offset(a, env_a);
              if (off_a < 0) continue;
              for (int t2 = 0; t2 < threads_per_block; ++t2) {
                if (t1 == t2 || !in_role(t2)) continue;
                Env env_b = env_of(t2, bid, iv_b, size);
                if (!b.guard.Holds(env_b)) continue;
                const int64_t off_b = offset(b, env_b);
                if (off_b < 0) continue;
                if (off_a < off_b + b.lanes && off_b < off_a + a.lanes) {
                  truth = true;
                  break;
                }
              }
            }
          }
        }
      }
    }
    ++outcome.pairs;
    if (truth) {
      ++outcome.overlapping;
      if (!answer) {
        ++outcome.unsound;
        ADD_FAILURE() << "unsound: the analysis proved disjoint a pair that "
                         "overlaps (distance "
                      << distance << ")\n"
                      << text;
      }
    } else {
      ++outcome.disjoint;
      if (!answer) ++outcome.proven_disjoint;
      if (!Uses(a, {TermKind::kBlock}) && !Uses(b, {TermKind::kBlock}) &&
          !sized) {
        ++outcome.exact_disjoint;
        if (!answer) ++outcome.exact_proven;
      }
    }
  }
}

// Runs `count` pairs (KIR_CONFLICT_PAIRS overrides) of `form` and checks
// that none is unsound; prints the precision.
Outcome CheckAgainstBruteForce(const char* label, Form form, int count,
                               uint32_t seed) {
  const char* pairs_env = std::getenv("KIR_CONFLICT_PAIRS");
  const char* seed_env = std::getenv("KIR_CONFLICT_SEED");
  if (pairs_env) count = std::atoi(pairs_env);
  if (seed_env) seed = std::atoi(seed_env);
  Outcome outcome;
  RunRandomPairs(seed, count, form, outcome);
  EXPECT_EQ(outcome.unsound, 0);
  EXPECT_EQ(outcome.pairs, count);
  const double precision =
      outcome.disjoint == 0
          ? 1.0
          : static_cast<double>(outcome.proven_disjoint) / outcome.disjoint;
  const double exact_precision =
      outcome.exact_disjoint == 0
          ? 1.0
          : static_cast<double>(outcome.exact_proven) / outcome.exact_disjoint;
  std::printf(
      "conflict analysis, %s: %d random pairs, %d overlap, %d disjoint, %d of "
      "those proven disjoint (precision %.1f%%), %d unsound; without block "
      "ids and sizes %d of %d disjoint pairs proven (%.1f%%)\n",
      label, outcome.pairs, outcome.overlapping, outcome.disjoint,
      outcome.proven_disjoint, 100.0 * precision, outcome.unsound,
      outcome.exact_proven, outcome.exact_disjoint, 100.0 * exact_precision);
  return outcome;
}

double Precision(const Outcome& outcome) {
  return outcome.disjoint == 0
             ? 1.0
             : static_cast<double>(outcome.proven_disjoint) / outcome.disjoint;
}

TEST(ConflictAnalysisTest, RandomAffinePairsAgainstBruteForce) {
  // KIR_CONFLICT_PAIRS=N KIR_CONFLICT_SEED=S run a larger or other sample;
  // the sanitizer build runs a tenth.
  const int pairs = SanitizerScaled(1500);
  Outcome outcome =
      CheckAgainstBruteForce("affine", Form::kBase, pairs, 20261122);
  // Enough of both kinds for the comparison to mean something.
  EXPECT_GT(outcome.disjoint, pairs / 10);
  EXPECT_GT(outcome.overlapping, pairs / 10);
  // The analysis is exact on most of these shapes; a drop means a lost case
  // (bounded on the whole sample, in the Release build).
  if (!kSanitizedBuild) {
    EXPECT_GT(Precision(outcome), 0.5);
  }
}

// Each index form the analysis follows beyond affine terms, 1000 pairs
// each, with the precision it must keep (well under what it reaches, so
// that only a lost case fails).
struct FormCase {
  const char* label;
  Form form;
  uint32_t seed;
  double min_precision;
};

class FormAgainstBruteForce : public testing::TestWithParam<FormCase> {};

TEST_P(FormAgainstBruteForce, NeverUnsound) {
  const FormCase& c = GetParam();
  // A tenth under the sanitizers, for soundness only: the precision, a
  // property of the analysis and the sample, is bounded on the whole sample
  // in the Release build.
  const int pairs = SanitizerScaled(1000);
  Outcome outcome = CheckAgainstBruteForce(c.label, c.form, pairs, c.seed);
  EXPECT_GT(outcome.disjoint, pairs / 10);
  if (!kSanitizedBuild) {
    EXPECT_GT(Precision(outcome), c.min_precision);
  }
}

INSTANTIATE_TEST_SUITE_P(
    ConflictAnalysisTest, FormAgainstBruteForce,
    testing::Values(FormCase{"div/rem of r*C + tid", Form::kFlatDivRem, 7, 0.5},
                    FormCase{"(iv + c) % m", Form::kIvOffsetRem, 8, 0.5},
                    FormCase{"iv / T, iv % T tiles", Form::kTile, 9, 0.3},
                    FormCase{"role of some warps", Form::kRole, 10, 0.5},
                    FormCase{"global, symbolic extents", Form::kGlobal, 11,
                             0.5}));

// ---------------------------------------------------------------------------
// Specific conflict answers.

struct Pair {
  std::unique_ptr<Module> module;
  std::unique_ptr<ThreadAnalysis> threads;
  std::unique_ptr<ConflictAnalysis> conflicts;
  std::vector<const Op*> accesses;  // ops touching shared memory
  const Op* loop = nullptr;

  bool Overlap(int a, int b, int distance = 0) {
    const Op& op_a = *accesses[a];
    const Op& op_b = *accesses[b];
    auto shared_effect = [](const Op& op) {
      for (const MemoryEffect& e : MemoryEffectsOf(op)) {
        if (e.space == MemorySpace::kShared) return e;
      }
      return MemoryEffect();
    };
    std::vector<CarriedLoop> carried;
    if (distance > 0) carried.push_back(CarriedLoop{loop, distance});
    return conflicts->MayOverlap(
        op_a, shared_effect(op_a), conflicts->Executing(op_a), op_b,
        shared_effect(op_b), conflicts->Executing(op_b), carried);
  }
};

Pair Analyze(const std::string& block, const std::string& body) {
  Pair pair;
  pair.module = ParseForTest(absl::StrCat(
      "kernel @k(%g: global f32[64, 64], %map: tensormap f32[16, 32] of %g) ",
      block, " {\n", Constants(),
      "  %f = const 1.0 : f32\n"
      "  %tx = thread.id x : index\n"
      "  %warp = warp.id : index\n"
      "  %lane = lane.id : index\n",
      body, "\n}\n"));
  if (pair.module == nullptr) return pair;
  const Kernel& kernel = *pair.module->kernels[0];
  pair.threads = std::make_unique<ThreadAnalysis>(kernel);
  pair.conflicts = std::make_unique<ConflictAnalysis>(kernel, *pair.threads);
  Walk(kernel.body(), [&](const Op& op) {
    if (op.kind() == OpKind::kFor && pair.loop == nullptr) pair.loop = &op;
    for (const MemoryEffect& e : MemoryEffectsOf(op)) {
      if (e.space == MemorySpace::kShared) {
        pair.accesses.push_back(&op);
        break;
      }
    }
  });
  return pair;
}

TEST(ConflictAnalysisTest, SameFunctionOfTheThreadIsSameThread) {
  Pair p = Analyze("block(128)", R"(
  %s = alloc.shared : shared f32[128]
  store %s[%tx], %f
  %r = load %s[%tx] : f32
  %r2 = load %s[%k0] : f32)");
  EXPECT_FALSE(p.Overlap(0, 1));  // each thread its own element
  EXPECT_TRUE(p.Overlap(0, 2));   // thread 0's element, read by all
}

TEST(ConflictAnalysisTest, ConstantStagesAreDisjoint) {
  Pair p = Analyze("block(128)", R"(
  %s = alloc.shared : shared f32[2, 128]
  store %s[%k0, %tx], %f
  %r = load %s[%k1, %k5] : f32
  %r2 = load %s[%k0, %k5] : f32)");
  EXPECT_FALSE(p.Overlap(0, 1));
  EXPECT_TRUE(p.Overlap(0, 2));
}

TEST(ConflictAnalysisTest, DifferentAllocationsAliasOnlyByOverlappingOffsets) {
  Pair p = Analyze("block(128)", R"(
  %a = alloc.shared {offset = 0} : shared f32[128]
  %b = alloc.shared {offset = 256} : shared f32[128]
  %c = alloc.shared {offset = 512} : shared f32[128]
  %d = alloc.shared : shared f32[128]
  store %a[%tx], %f
  %rb = load %b[%k0] : f32
  %rc = load %c[%k0] : f32
  %rd = load %d[%k0] : f32)");
  EXPECT_TRUE(p.Overlap(0, 1));   // bytes 256..511 are in both %a and %b
  EXPECT_FALSE(p.Overlap(0, 2));  // %c starts where %a ends
  EXPECT_FALSE(p.Overlap(0, 3));  // no offsets: planned apart
}

TEST(ConflictAnalysisTest, UniformUnknownsCancelOnlyInTheSameIteration) {
  Pair p = Analyze("block(64)", R"(
  %s = alloc.shared : shared f32[4, 64]
  %bid = block.id x : index
  %row = rem %bid, %k4 : index
  for %i = %k0 to %k8 step %k1 {
    %stage = rem %i, %k2 : index
    store %s[%stage, %tx], %f
    %r = load %s[%stage, %k0] : f32
    %r2 = load %s[%row, %k0] : f32
  })");
  EXPECT_TRUE(p.Overlap(0, 1));      // thread 0's element, read by all
  EXPECT_FALSE(p.Overlap(0, 1, 1));  // one iteration later: the other stage
  EXPECT_TRUE(p.Overlap(0, 1, 2));   // two later: the same stage again
  EXPECT_TRUE(p.Overlap(0, 2));      // a row unrelated to the stage
}

TEST(ConflictAnalysisTest, InductionVariableStepsApart) {
  Pair p = Analyze("block(32)", R"(
  %s = alloc.shared : shared f32[2, 16, 16]
  %sa = alloc.shared : shared bf16[32, 32]
  %v = vec.from %f, %f : vec<2xf32>
  for %j = %k0 to %k2 step %k1 {
    %col = mul %j, %k16 : index
    %h = const 1.0 : bf16
    %frag = vec.from %h, %h, %h, %h, %h, %h, %h, %h : vec<8xbf16>
    stmatrix %sa[%k0, %col], %frag
  })");
  // stmatrix boxes of iterations 0 and 1 sit side by side.
  EXPECT_FALSE(p.Overlap(0, 0, 1));
}

TEST(ConflictAnalysisTest, RemaindersOfOneFormDifferByTheirOffsets) {
  Pair p = Analyze("block(64)", R"(
  %s = alloc.shared : shared f32[3, 64]
  %mirror = sub %k63, %tx : index
  for %i = %k0 to %k8 step %k1 {
    %ahead = add %i, %k2 : index
    %fill = rem %ahead, %k3 : index
    store %s[%fill, %tx], %f
    %stage = rem %i, %k3 : index
    %r = load %s[%stage, %mirror] : f32
  })");
  EXPECT_FALSE(p.Overlap(0, 1));     // stages i + 2 and i: different
  EXPECT_FALSE(p.Overlap(0, 1, 1));  // i + 2 and i + 1
  EXPECT_TRUE(p.Overlap(0, 1, 2));   // filled two iterations before the read
  EXPECT_TRUE(p.Overlap(0, 1, 4));   // four or more: five is two again
}

TEST(ConflictAnalysisTest, FlattenedIndexSplitsIntoRowAndColumn) {
  Pair p = Analyze("block(128)", R"(
  %s = alloc.shared : shared f32[16, 64]
  for %r = %k0 to %k8 step %k1 {
    %base = mul %r, %k128 : index
    %flat = add %base, %tx : index
    %row = div %flat, %k64 : index
    %col = rem %flat, %k64 : index
    store %s[%row, %col], %f
  }
  %r2 = load %s[%k0, %k5] : f32)");
  EXPECT_FALSE(p.Overlap(0, 0));     // one element per thread per iteration
  EXPECT_FALSE(p.Overlap(0, 0, 1));  // the next iteration's rows
  EXPECT_TRUE(p.Overlap(0, 1));      // thread 5's element, read by all
}

TEST(ConflictAnalysisTest, QuotientAndRemainderDetermineTheTile) {
  Pair p = Analyze("block(64)", R"(
  %s = alloc.shared : shared f32[64, 64]
  %n = block.dim x : index
  %bid = block.id x : index
  %tn = add %bid, %k1 : index
  %row16 = rem %tx, %k16 : index
  %col4 = div %tx, %k16 : index
  for %tile = %bid to %k64 step %n {
    %tm = div %tile, %tn : index
    %tr = rem %tile, %tn : index
    %m0 = mul %tm, %k16 : index
    %n0 = mul %tr, %k16 : index
    %row = add %m0, %row16 : index
    %col = add %n0, %col4 : index
    store %s[%row, %col], %f
    %only_row = add %k0, %row16 : index
    %r = load %s[%only_row, %col] : f32
  })");
  // Different tiles: the quotient and the remainder by the (unknown) tile
  // count cannot both agree, so the 16x16 blocks are different.
  EXPECT_FALSE(p.Overlap(0, 0, 1));
  EXPECT_FALSE(p.Overlap(0, 0, 4));
  // Same iteration, other threads: different elements.
  EXPECT_FALSE(p.Overlap(0, 0));
  // A read of row block 0 of each tile's columns: tiles that share the
  // remainder share those elements.
  EXPECT_TRUE(p.Overlap(0, 1, 1));
}

TEST(ConflictAnalysisTest, ThreadPairsSelectWhoseAccessesCount) {
  Pair p = Analyze("block(64)", R"(
  %s = alloc.shared : shared f32[64]
  %mirror = sub %k63, %tx : index
  store %s[%tx], %f
  %r = load %s[%tx] : f32
  %r2 = load %s[%mirror] : f32)");
  auto overlap = [&](int a, int b, ThreadPairs pairs) {
    const Op& op_a = *p.accesses[a];
    const Op& op_b = *p.accesses[b];
    return p.conflicts->MayOverlap(
        op_a, MemoryEffectsOf(op_a)[0], p.conflicts->Executing(op_a), op_b,
        MemoryEffectsOf(op_b)[0], p.conflicts->Executing(op_b), {}, pairs);
  };
  EXPECT_FALSE(overlap(0, 1, ThreadPairs::kDistinct));
  EXPECT_TRUE(overlap(0, 1, ThreadPairs::kSame));
  EXPECT_TRUE(overlap(0, 1, ThreadPairs::kAny));
  EXPECT_TRUE(overlap(0, 2, ThreadPairs::kDistinct));
  EXPECT_FALSE(overlap(0, 2, ThreadPairs::kSame));
}

TEST(ConflictAnalysisTest, ElectedLaneIsOneThread) {
  Pair p = Analyze("block(128)", R"(
  %s = alloc.shared : shared f32[128]
  %w32 = cast %warp : i32
  %z = const 0 : i32
  %wu = shfl.sync idx %w32, %z : i32
  %is_w0 = cmp eq %wu, %z : i1
  if %is_w0 {
    %e = elect.sync : i1
    if %e {
      store %s[%k0], %f
    }
    %e2 = elect.sync : i1
    if %e2 {
      %r = load %s[%k0] : f32
    }
  }
  %r3 = load %s[%k0] : f32)");
  EXPECT_FALSE(p.Overlap(0, 1));  // the same elected lane
  EXPECT_TRUE(p.Overlap(0, 2));   // any other thread
}

}  // namespace
}  // namespace kir
