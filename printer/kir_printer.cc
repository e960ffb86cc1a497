// Prints modules in the canonical kir text format (ir/language.md).
//
// Output goes into one std::string with absl::StrAppend-style appends; no
// streams and no per-op temporaries beyond what absl needs for numbers.
#include "printer/kir_printer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/async_groups.h"

namespace kir {
namespace {

// Binding strength of index-expression operators: additive 1,
// multiplicative 2, atoms 3. Must agree with the parser's grammar.
int Precedence(IndexExpr::Kind kind) {
  switch (kind) {
    case IndexExpr::Kind::kAdd:
    case IndexExpr::Kind::kSub:
      return 1;
    case IndexExpr::Kind::kMul:
    case IndexExpr::Kind::kDiv:
    case IndexExpr::Kind::kMod:
      return 2;
    default:
      return 3;
  }
}

bool IsWait(OpKind kind) {
  return kind == OpKind::kBulkWait || kind == OpKind::kWgmmaWait ||
         kind == OpKind::kCpAsyncWait;
}

// Attributes that ops with custom syntax print as part of that syntax.
bool IsSyntaxAttr(OpKind kind, absl::string_view name) {
  if (kind == OpKind::kPtx) {
    return name == "text" || name == "reads" || name == "writes";
  }
  if (kind == OpKind::kRole) {
    return name == "name" || name == "warp_begin" || name == "warp_end";
  }
  return false;
}

class Printer {
 public:
  Printer(const PrintOptions& options, std::string& out)
      : options_(options), out_(out) {}

  void PrintKernel(const Kernel& kernel);
  void PrintOp(const Op& op, int indent);

 private:
  void Indent(int depth) { out_.append(static_cast<size_t>(depth) * 2, ' '); }
  void AppendValue(const Value* value) {
    out_ += '%';
    if (value == nullptr) {
      out_ += "<null>";
    } else {
      out_ += value->name();
    }
  }
  void AppendIndexExpr(const IndexExpr& expr);
  void AppendIndexExprs(const std::vector<IndexExpr>& exprs);
  void AppendType(const Type& type);
  void AppendString(absl::string_view text);
  void AppendFloat(double value);
  void AppendAttrValue(const Attribute& attr);
  void AppendOperand(const Operand& operand);
  void AppendParam(const Param& param);
  void AppendLaunch(absl::string_view name, const Dim3& dims, bool always);
  void AppendRegion(const Region& region, int indent);
  // ` {name = value, flag}` for attributes not at their default.
  void AppendAttrDict(const Op& op);
  void AppendTypes(const Op& op);
  void AppendTrailer(const Op& op);
  void PrintGeneric(const Op& op, int indent);
  void PrintPtx(const Op& op);

  const PrintOptions& options_;
  std::string& out_;
};

void Printer::AppendIndexExpr(const IndexExpr& expr) {
  switch (expr.kind()) {
    case IndexExpr::Kind::kConstant:
      absl::StrAppend(&out_, expr.constant());
      return;
    case IndexExpr::Kind::kSize:
      AppendValue(expr.size());
      return;
    default:
      break;
  }
  if (const char* function = IndexExpr::FunctionName(expr.kind())) {
    out_ += function;
    out_ += '(';
    AppendIndexExpr(expr.lhs());
    out_ += ", ";
    AppendIndexExpr(expr.rhs());
    out_ += ')';
    return;
  }
  const int precedence = Precedence(expr.kind());
  // Left-associative: a right operand of equal strength needs parentheses,
  // and so does a negative constant on either side.
  auto operand = [&](const IndexExpr& side, bool right) {
    const int side_precedence = Precedence(side.kind());
    const bool parens = side_precedence < precedence ||
                        (right && side_precedence == precedence) ||
                        (side.is_constant() && side.constant() < 0);
    if (parens) out_ += '(';
    AppendIndexExpr(side);
    if (parens) out_ += ')';
  };
  operand(expr.lhs(), false);
  out_ += ' ';
  out_ += IndexExpr::OperatorName(expr.kind());
  out_ += ' ';
  operand(expr.rhs(), true);
}

void Printer::AppendIndexExprs(const std::vector<IndexExpr>& exprs) {
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (i > 0) out_ += ", ";
    AppendIndexExpr(exprs[i]);
  }
}

void Printer::AppendType(const Type& type) {
  switch (type.kind()) {
    case Type::Kind::kScalar:
      out_ += DTypeName(type.dtype());
      return;
    case Type::Kind::kVector:
      absl::StrAppend(&out_, "vec<", type.lanes(), "x", DTypeName(type.dtype()),
                      ">");
      return;
    case Type::Kind::kBuffer:
      out_ += MemorySpaceName(type.space());
      out_ += ' ';
      out_ += DTypeName(type.dtype());
      out_ += '[';
      AppendIndexExprs(type.shape());
      out_ += ']';
      return;
    case Type::Kind::kTensorMap:
      out_ += "tensormap ";
      out_ += DTypeName(type.dtype());
      out_ += '[';
      for (size_t i = 0; i < type.box().size(); ++i) {
        if (i > 0) out_ += ", ";
        absl::StrAppend(&out_, type.box()[i]);
      }
      out_ += ']';
      return;
    case Type::Kind::kToken:
      out_ += "token<";
      out_ += TokenKindName(type.token_kind());
      out_ += '>';
      return;
  }
}

void Printer::AppendString(absl::string_view text) {
  out_ += '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default:
        out_ += c;
        break;
    }
  }
  out_ += '"';
}

// Shortest text that reads back to the same double, always recognisable as
// a float: it contains '.' or 'e', or is inf or nan.
void Printer::AppendFloat(double value) {
  if (std::isnan(value)) {
    out_ += "nan";
    return;
  }
  if (std::isinf(value)) {
    out_ += value < 0 ? "-inf" : "inf";
    return;
  }
  char buffer[64];
  std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  absl::string_view text(buffer, result.ptr - buffer);
  out_.append(text.data(), text.size());
  if (text.find_first_of(".e") == absl::string_view::npos) out_ += ".0";
}

void Printer::AppendAttrValue(const Attribute& attr) {
  switch (attr.kind) {
    case AttrKind::kInt:
    case AttrKind::kFlag:
      absl::StrAppend(&out_, attr.int_value);
      return;
    case AttrKind::kNumber:
      if (attr.is_integral) {
        absl::StrAppend(&out_, attr.int_value);
      } else {
        AppendFloat(attr.float_value);
      }
      return;
    case AttrKind::kString:
      AppendString(attr.string_value);
      return;
    case AttrKind::kEnum:
      out_ += attr.string_value;
      return;
    case AttrKind::kInts:
      out_ += '[';
      for (size_t i = 0; i < attr.ints.size(); ++i) {
        if (i > 0) out_ += ", ";
        absl::StrAppend(&out_, attr.ints[i]);
      }
      out_ += ']';
      return;
  }
}

void Printer::AppendOperand(const Operand& operand) {
  AppendValue(operand.value);
  if (operand.indexed) {
    out_ += '[';
    for (size_t i = 0; i < operand.indices.size(); ++i) {
      if (i > 0) out_ += ", ";
      AppendValue(operand.indices[i]);
    }
    out_ += ']';
  }
  if (operand.distance != 0) absl::StrAppend(&out_, "@", operand.distance);
}

void Printer::AppendParam(const Param& param) {
  AppendValue(param.value);
  out_ += ": ";
  const Type& type = param.value->type();
  switch (param.kind) {
    case Param::Kind::kScalar:
      AppendType(type);
      return;
    case Param::Kind::kTensor: {
      AppendType(type);
      bool first = true;
      auto separator = [&] {
        out_ += first ? " {" : ", ";
        first = false;
      };
      if (param.layout == TensorLayout::kColumnMajor) {
        separator();
        out_ += "layout = col_major";
      } else if (param.layout == TensorLayout::kStrided) {
        separator();
        out_ += "strides = [";
        AppendIndexExprs(param.strides);
        out_ += ']';
      }
      if (param.align != 16) {
        separator();
        absl::StrAppend(&out_, "align = ", param.align);
      }
      if (!first) out_ += '}';
      return;
    }
    case Param::Kind::kTensorMap: {
      AppendType(type);
      out_ += " of ";
      AppendValue(param.tensor);
      bool first = true;
      auto separator = [&] {
        out_ += first ? " {" : ", ";
        first = false;
      };
      if (param.swizzle != 0) {
        separator();
        absl::StrAppend(&out_, "swizzle = ", param.swizzle);
      }
      if (param.oob != OobFill::kZero) {
        separator();
        out_ += "oob = nan";
      }
      if (!first) out_ += '}';
      return;
    }
  }
}

// Dimensions up to the last one that is not 1; `always` prints at least x.
void Printer::AppendLaunch(absl::string_view name, const Dim3& dims,
                           bool always) {
  int count = 0;
  for (int i = 0; i < 3; ++i) {
    std::optional<int64_t> constant = dims[i].AsConstant();
    if (!constant || *constant != 1) count = i + 1;
  }
  if (count == 0) {
    if (!always) return;
    count = 1;
  }
  out_ += ' ';
  out_.append(name.data(), name.size());
  out_ += '(';
  for (int i = 0; i < count; ++i) {
    if (i > 0) out_ += ", ";
    AppendIndexExpr(dims[i]);
  }
  out_ += ')';
}

void Printer::PrintKernel(const Kernel& kernel) {
  absl::StrAppend(&out_, "kernel @", kernel.name());
  if (!kernel.sizes().empty()) {
    out_ += " sizes(";
    for (size_t i = 0; i < kernel.sizes().size(); ++i) {
      if (i > 0) out_ += ", ";
      AppendValue(kernel.sizes()[i].get());
    }
    out_ += ") ";
  }
  out_ += '(';
  const std::vector<Param>& params = kernel.params();
  if (params.size() == 1) {
    AppendParam(params[0]);
  } else {
    for (size_t i = 0; i < params.size(); ++i) {
      out_ += "\n    ";
      AppendParam(params[i]);
      if (i + 1 < params.size()) out_ += ',';
    }
  }
  out_ += ')';
  AppendLaunch("grid", kernel.grid, /*always=*/true);
  AppendLaunch("block", kernel.block, /*always=*/true);
  AppendLaunch("cluster", kernel.cluster, /*always=*/false);
  AppendRegion(kernel.body(), 0);
  out_ += '\n';
}

// ` {` ops `}`, the ops one level deeper than `indent`.
void Printer::AppendRegion(const Region& region, int indent) {
  out_ += " {\n";
  for (const auto& op : region.ops()) {
    PrintOp(*op, indent + 1);
    out_ += '\n';
  }
  Indent(indent);
  out_ += '}';
}

void Printer::AppendAttrDict(const Op& op) {
  const OpInfo& info = op.info();
  bool first = true;
  for (const auto& [name, attr] : op.attrs()) {
    const AttrSpec* spec = info.FindAttr(name);
    if (spec == nullptr || spec->positional || IsSyntaxAttr(op.kind(), name)) {
      continue;
    }
    if (spec->default_value.has_value() && attr == *spec->default_value) {
      continue;
    }
    out_ += first ? " {" : ", ";
    first = false;
    out_.append(name.data(), name.size());
    if (attr.kind == AttrKind::kFlag) continue;  // set: flags print bare
    out_ += " = ";
    AppendAttrValue(attr);
  }
  if (!first) out_ += '}';
}

void Printer::AppendTypes(const Op& op) {
  for (int i = 0; i < op.num_results(); ++i) {
    out_ += i == 0 ? " : " : ", ";
    AppendType(op.result(i)->type());
  }
}

void Printer::AppendTrailer(const Op& op) {
  if (options_.provenance && !op.provenance().empty()) {
    out_ += " loc(inserted ";
    AppendString(op.provenance().pass);
    for (size_t i = 0; i < op.provenance().because.size(); ++i) {
      out_ += i == 0 ? " for " : ", ";
      const Location& loc = op.provenance().because[i];
      absl::StrAppend(&out_, loc.line, ":", loc.column);
    }
    out_ += ')';
  }
  if (options_.pending_counts && IsWait(op.kind())) {
    std::optional<int> pending = PendingGroupsAfterWait(op);
    out_ += " // pending: ";
    if (pending) {
      absl::StrAppend(&out_, *pending);
    } else {
      out_ += '?';
    }
  }
}

void Printer::PrintGeneric(const Op& op, int indent) {
  const OpInfo& info = op.info();
  out_ += info.mnemonic;
  for (const AttrSpec& spec : info.attrs) {
    if (!spec.positional) continue;
    out_ += ' ';
    if (const Attribute* attr = op.FindAttr(spec.name)) {
      if (attr->kind == AttrKind::kFlag) {
        if (attr->int_value != 0) out_ += spec.name;
      } else {
        AppendAttrValue(*attr);
      }
    } else if (spec.default_value.has_value()) {
      AppendAttrValue(*spec.default_value);
    } else {
      absl::StrAppend(&out_, "<missing ", spec.name, ">");
    }
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    out_ += i == 0 ? " " : ", ";
    AppendOperand(op.operand(i));
  }
  AppendAttrDict(op);
  AppendTypes(op);
  for (int i = 0; i < op.num_regions(); ++i) AppendRegion(op.region(i), indent);
}

void Printer::PrintPtx(const Op& op) {
  out_ += "ptx ";
  // Printed even when unverified: the text may be missing.
  AppendString(op.has_text() ? op.text() : absl::string_view());
  // Inputs, then `reads` buffers, then `writes` buffers; the counts are
  // clamped so that inconsistent IR still prints.
  const int total = op.num_operands();
  int writes = static_cast<int>(
      std::min<int64_t>(std::max<int64_t>(op.writes(), 0), total));
  int reads = static_cast<int>(
      std::min<int64_t>(std::max<int64_t>(op.reads(), 0), total - writes));
  const int inputs = total - reads - writes;
  out_ += " (";
  for (int i = 0; i < inputs; ++i) {
    if (i > 0) out_ += ", ";
    AppendOperand(op.operand(i));
  }
  out_ += ')';
  auto clause = [&](absl::string_view name, int begin, int count) {
    if (count == 0) return;
    out_ += ' ';
    out_.append(name.data(), name.size());
    out_ += '(';
    for (int i = 0; i < count; ++i) {
      if (i > 0) out_ += ", ";
      AppendOperand(op.operand(begin + i));
    }
    out_ += ')';
  };
  clause("reads", inputs, reads);
  clause("writes", inputs + reads, writes);
  AppendAttrDict(op);
  AppendTypes(op);
}

void Printer::PrintOp(const Op& op, int indent) {
  Indent(indent);
  for (int i = 0; i < op.num_results(); ++i) {
    if (i > 0) out_ += ", ";
    AppendValue(op.result(i));
  }
  if (op.num_results() > 0) out_ += " = ";
  switch (op.kind()) {
    case OpKind::kFor:
      if (op.num_operands() != 3 || op.num_regions() != 1 ||
          op.region(0).num_arguments() != 1) {
        PrintGeneric(op, indent);
        break;
      }
      out_ += "for ";
      AppendValue(op.region(0).argument(0));
      out_ += " = ";
      AppendOperand(op.operand(0));
      out_ += " to ";
      AppendOperand(op.operand(1));
      out_ += " step ";
      AppendOperand(op.operand(2));
      AppendAttrDict(op);
      AppendRegion(op.region(0), indent);
      break;
    case OpKind::kIf:
      if (op.num_operands() != 1 || op.num_regions() < 1 ||
          op.num_regions() > 2) {
        PrintGeneric(op, indent);
        break;
      }
      out_ += "if ";
      AppendOperand(op.operand(0));
      AppendAttrDict(op);
      AppendRegion(op.region(0), indent);
      if (op.num_regions() == 2 && !op.region(1).empty()) {
        out_ += " else";
        AppendRegion(op.region(1), indent);
      }
      break;
    case OpKind::kRole:
      if (op.num_regions() != 1) {
        PrintGeneric(op, indent);
        break;
      }
      // IR missing a required attribute still prints (the verifier
      // reports it).
      absl::StrAppend(&out_, "role @", op.has_name() ? op.name() : "",
                      " warps[", op.has_warp_begin() ? op.warp_begin() : 0,
                      ", ", op.has_warp_end() ? op.warp_end() : 0, ")");
      AppendRegion(op.region(0), indent);
      break;
    case OpKind::kSplitK:
      if (op.num_operands() != 1 || op.num_regions() != 2) {
        PrintGeneric(op, indent);
        break;
      }
      out_ += "splitk ";
      AppendOperand(op.operand(0));
      AppendAttrDict(op);
      out_ += " body";
      AppendRegion(op.region(0), indent);
      out_ += " epilogue";
      AppendRegion(op.region(1), indent);
      break;
    case OpKind::kPtx:
      PrintPtx(op);
      break;
    default:
      PrintGeneric(op, indent);
      break;
  }
  AppendTrailer(op);
}

}  // namespace

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string out;
  // The canonical text is about as long as what was parsed; reserving it
  // saves the copies (and the doubled peak) of growing a large output.
  if (module.source != nullptr) {
    out.reserve(module.source->text.size() + module.source->text.size() / 8);
  }
  Printer printer(options, out);
  for (size_t i = 0; i < module.kernels.size(); ++i) {
    if (i > 0) out += '\n';
    printer.PrintKernel(*module.kernels[i]);
  }
  return out;
}

std::string PrintKernel(const Kernel& kernel, const PrintOptions& options) {
  std::string out;
  Printer(options, out).PrintKernel(kernel);
  return out;
}

std::string PrintOp(const Op& op, const PrintOptions& options, int indent) {
  std::string out;
  Printer(options, out).PrintOp(op, indent);
  return out;
}

}  // namespace kir
