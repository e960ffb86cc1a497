#include "tools/fuzz/mutate.h"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/ir.h"

namespace kir {
namespace {

struct Span {
  size_t begin, end;
};

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.';
}

// Integer literals (not inside a word or a value name) and value names
// (`%x`), outside comments and strings.
void FindTokens(absl::string_view text, std::vector<Span>& integers,
                std::vector<Span>& names) {
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"') {
      ++i;
      while (i < text.size() && text[i] != '"' && text[i] != '\n') ++i;
      ++i;
    } else if (c == '%') {
      size_t end = i + 1;
      while (end < text.size() && IsWordChar(text[end])) ++end;
      if (end > i + 1) names.push_back({i, end});
      i = end;
    } else if ((c >= '0' && c <= '9') ||
               (c == '-' && i + 1 < text.size() && text[i + 1] >= '0' &&
                text[i + 1] <= '9')) {
      size_t end = i + 1;
      while (end < text.size() && IsWordChar(text[end])) ++end;
      if (absl::string_view(text.data() + i, end - i).find('.') ==
          absl::string_view::npos) {
        integers.push_back({i, end});
      }
      i = end;
    } else if (IsWordChar(c)) {
      while (i < text.size() && IsWordChar(text[i])) ++i;
    } else {
      ++i;
    }
  }
}

std::string InterestingInteger(absl::string_view old, std::mt19937_64& random) {
  int64_t parsed = 0;
  std::from_chars(old.data(), old.data() + old.size(), parsed);
  const uint64_t value = static_cast<uint64_t>(parsed);  // wraps, never UB
  const int64_t candidates[] = {0,
                                1,
                                2,
                                -1,
                                3,
                                4,
                                8,
                                16,
                                31,
                                32,
                                33,
                                64,
                                127,
                                128,
                                256,
                                1024,
                                1025,
                                65535,
                                int64_t{1} << 31,
                                (int64_t{1} << 31) - 1,
                                int64_t{1} << 32,
                                int64_t{1} << 62,
                                INT64_MAX,
                                INT64_MIN,
                                static_cast<int64_t>(value + 1),
                                static_cast<int64_t>(value - 1),
                                static_cast<int64_t>(value * 2),
                                parsed / 2};
  return std::to_string(
      candidates[random() % (sizeof(candidates) / sizeof(candidates[0]))]);
}

// The values `op` may use: sizes, parameters, results of earlier ops of its
// region and the regions around it, and the arguments of those regions.
std::vector<Value*> VisibleValues(const Kernel& kernel, const Op& op) {
  std::vector<Value*> visible;
  for (const auto& size : kernel.sizes()) visible.push_back(size.get());
  for (const Param& param : kernel.params()) visible.push_back(param.value);
  for (const Op* child = &op; child->parent_region() != nullptr;) {
    const Region& region = *child->parent_region();
    for (int a = 0; a < region.num_arguments(); ++a) {
      visible.push_back(region.argument(a));
    }
    for (int i = 0; i < region.IndexOf(child); ++i) {
      for (int r = 0; r < region.op(i).num_results(); ++r) {
        visible.push_back(region.op(i).result(r));
      }
    }
    child = region.parent_op();
    if (child == nullptr) break;
  }
  return visible;
}

}  // namespace

bool MutateToken(std::string& text, std::mt19937_64& random) {
  std::vector<Span> integers, names;
  FindTokens(text, integers, names);
  const size_t total = integers.size() + names.size();
  if (total == 0) return false;
  const size_t pick = random() % total;
  Span span;
  std::string replacement;
  if (pick < integers.size()) {
    span = integers[pick];
    replacement = InterestingInteger(
        absl::string_view(text).substr(span.begin, span.end - span.begin),
        random);
  } else {
    span = names[pick - integers.size()];
    const Span other = names[random() % names.size()];
    replacement = text.substr(other.begin, other.end - other.begin);
  }
  text.replace(span.begin, span.end - span.begin, replacement);
  return true;
}

bool MutateIr(Module& module, std::mt19937_64& random) {
  std::vector<std::pair<Kernel*, Op*>> ops;
  for (const auto& kernel : module.kernels) {
    Walk(kernel->body(), [&](Op& op) { ops.push_back({kernel.get(), &op}); });
  }
  if (ops.empty()) return false;
  Kernel* kernel = nullptr;
  Op* op = nullptr;
  std::tie(kernel, op) = ops[random() % ops.size()];
  switch (random() % 4) {
    case 0: {  // an attribute or constant into another value
      const std::vector<AttrSpec>& specs = op->info().attrs;
      if (specs.empty()) return false;
      const AttrSpec& spec = specs[random() % specs.size()];
      const Attribute* current = op->FindAttr(spec.name);
      if (spec.kind == AttrKind::kEnum && !spec.enum_values.empty()) {
        op->SetAttr(spec.name,
                    Attribute::Enum(
                        spec.enum_values[random() % spec.enum_values.size()]));
      } else if (spec.kind == AttrKind::kFlag) {
        op->SetAttr(spec.name,
                    Attribute::Flag(current == nullptr || !current->int_value));
      } else if (spec.kind == AttrKind::kInt ||
                 (spec.kind == AttrKind::kNumber &&
                  (current == nullptr || current->is_integral))) {
        const std::string old =
            std::to_string(current != nullptr ? current->int_value : 0);
        int64_t value = 0;
        const std::string text = InterestingInteger(old, random);
        std::from_chars(text.data(), text.data() + text.size(), value);
        op->SetAttr(spec.name, spec.kind == AttrKind::kInt
                                   ? Attribute::Int(value)
                                   : Attribute::Integer(value));
      } else {
        return false;
      }
      return true;
    }
    case 1: {  // an operand into another visible value of its type
      if (op->num_operands() == 0) return false;
      Operand& operand =
          op->mutable_operand(static_cast<int>(random() % op->num_operands()));
      std::vector<Value*> candidates;
      for (Value* value : VisibleValues(*kernel, *op)) {
        if (operand.value != nullptr && value != operand.value &&
            value->type() == operand.value->type()) {
          candidates.push_back(value);
        }
      }
      if (candidates.empty()) return false;
      operand.value = candidates[random() % candidates.size()];
      return true;
    }
    case 2: {  // swap with the op before it, if it does not use its results
      Region& region = *op->parent_region();
      const int index = region.IndexOf(op);
      if (index == 0) return false;
      const Op& before = region.op(index - 1);
      bool depends = false;
      auto check = [&](const Op& user) {
        user.ForEachUse([&](const Value* value) {
          for (int r = 0; r < before.num_results(); ++r) {
            depends = depends || value == before.result(r);
          }
        });
      };
      check(*op);
      for (int r = 0; r < op->num_regions(); ++r) {
        Walk(static_cast<const Region&>(op->region(r)), check);
      }
      if (depends) return false;
      region.Insert(index - 1, region.Take(index));
      return true;
    }
    default: {  // remove an op without regions whose results nothing uses
      if (op->num_regions() > 0) return false;
      bool used = false;
      auto count = [&](const Value* value) {
        for (int r = 0; r < op->num_results(); ++r) {
          used = used || value == op->result(r);
        }
      };
      Walk(static_cast<const Region&>(kernel->body()),
           [&](const Op& other) { other.ForEachUse(count); });
      // A tensor map's workspace is used by the parameter.
      static_cast<const Kernel&>(*kernel).ForEachParamUse(count);
      if (used) return false;
      Region& region = *op->parent_region();
      region.Take(region.IndexOf(op));
      return true;
    }
  }
}

}  // namespace kir
