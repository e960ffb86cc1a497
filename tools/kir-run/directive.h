// `// run:` directives: what kir-run executes and checks.
//
//   // run: @epilogue M=256 N=384 acc=normal(seed=1) alpha=0.5
//   //      out=fill(nan) => out ~= bf16(alpha * acc) rtol=1e-2 atol=1e-3
//
// (one line in a file; wrapped here). Grammar (ir/language.md, "Run
// directives", has the full reference):
//
// clang-format off
//   directive ::= '//' 'run:' option* '@'kernel binding* '=>' check (';' check)*
//   option    ::= 'pipeline' '=' quoted-string
//               | 'workspace' '=' ('each' | 'once')
//   binding   ::= name '=' (number | init)
//   init      ::= 'normal' '(' args ')' | 'uniform' '(' args ')'
//               | 'randint' '(' args ')' | 'iota' '(' args ')'
//               | 'fill' '(' number ')' | 'zeros'
//   check     ::= name '==' expr | name '~=' expr tolerance+
//   tolerance ::= 'rtol' '=' number | 'atol' '=' number
//   expr      ::= + - * / and @ (matrix product, at the level of *), unary -,
//                 postfix .T, calls bf16(e) f16(e) f32(e) (round to that
//                 type), exp(e), abs(e); names and numbers.
// clang-format on
//
// Parsing is independent of any GPU; names are resolved against the kernel
// later (runner.cc), with located errors.
#ifndef KIR_TOOLS_KIR_RUN_DIRECTIVE_H_
#define KIR_TOOLS_KIR_RUN_DIRECTIVE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/location.h"

namespace kir {

// How an input tensor is filled before the launch.
struct InputInit {
  enum class Kind { kNormal, kUniform, kIota, kFill, kRandInt };
  Kind kind = Kind::kFill;
  uint64_t seed = 0;  // normal, uniform, randint
  // normal: mean, stddev; uniform: low, high; iota: start, step; fill:
  // value (first); randint: low, high (integers, both included).
  double first = 0;
  double second = 0;
};

// `name=value`: a size or scalar takes a number, a tensor an init.
struct Binding {
  std::string name;
  Location loc;
  bool is_number = false;
  double number = 0;
  std::string number_text;         // as written, to tell integers from floats
  std::optional<int64_t> integer;  // when number_text is an integer literal
  InputInit init;
};

// A reference expression, evaluated on the GPU in f32 (runner.cc).
struct RefExpr {
  enum class Kind {
    kName,  // a tensor or scalar parameter, or a size
    kNumber,
    kNeg,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kMatmul,     // 2-D matrix product, f32 accumulation
    kTranspose,  // 2-D
    kRound,      // to `round_to` ("bf16", "f16", "f32") and back to f32
    kExp,
    kAbs,
  };
  Kind kind = Kind::kNumber;
  Location loc;
  std::string name;      // kName
  double number = 0;     // kNumber
  std::string round_to;  // kRound
  std::vector<std::unique_ptr<RefExpr>> operands;

  // The expression as written, fully parenthesized (for messages).
  std::string ToString() const;
};

struct Check {
  std::string output;  // the tensor parameter compared
  Location loc;
  std::unique_ptr<RefExpr> reference;
  bool exact = false;  // `==`
  double rtol = 0;     // `~=`: |got - ref| <= atol + rtol * |ref|
  double atol = 0;
};

// When kir-run fills the kernel's workspaces (alloc.workspace) with zeros.
enum class WorkspaceZeroing {
  kEachLaunch,  // `workspace=each` (default): before every launch
  kOnce,        // `workspace=once`: when allocated; the kernel must leave
                // them as it needs them at its next launch
};

struct RunDirective {
  Location loc;      // of `run:`
  std::string text;  // after `run:`, trimmed
  std::string kernel;
  Location kernel_loc;
  std::optional<std::string> pipeline;  // `pipeline='...'`
  Location pipeline_loc;                // of the quoted pipeline
  WorkspaceZeroing workspace = WorkspaceZeroing::kEachLaunch;
  std::optional<Location> workspace_loc;  // of `workspace`, when given
  std::vector<Binding> bindings;
  std::vector<Check> checks;
};

// Every `// run:` directive in `source`, in order. Errors are located
// diagnostics, all of them joined.
absl::StatusOr<std::vector<RunDirective>> ParseRunDirectives(
    const std::shared_ptr<const SourceFile>& source);

}  // namespace kir

#endif  // KIR_TOOLS_KIR_RUN_DIRECTIVE_H_
