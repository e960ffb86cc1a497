// Recursive-descent parser for the kir text format (ir/language.md).
//
// Generic ops are parsed from their ops.def spec (operand slots, positional
// and named attributes); only the kernel header and the ops with custom
// syntax (for, if, role, splitk, ptx) have their own productions. Each
// production method has its grammar rule above it.
#include "parser/parser.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/charconv.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/builder.h"
#include "ir/check.h"
#include "ir/diagnostics.h"
#include "parser/lexer.h"

namespace kir {
namespace {

#define KIR_RETURN_IF_ERROR(expr)              \
  do {                                         \
    absl::Status kir_status_ = (expr);         \
    if (!kir_status_.ok()) return kir_status_; \
  } while (false)

// The values of the kernel being parsed, looked up by name: a table of
// pointers (8 bytes a slot) hashed by the name each value holds, so that
// with a million values it still fits in the CPU caches.
struct ValueNameHash {
  using is_transparent = void;
  size_t operator()(absl::string_view name) const {
    return absl::Hash<absl::string_view>{}(name);
  }
  size_t operator()(const Value* value) const { return (*this)(value->name()); }
};
struct ValueNameEq {
  using is_transparent = void;
  static absl::string_view Name(absl::string_view name) { return name; }
  static absl::string_view Name(const Value* value) { return value->name(); }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return Name(a) == Name(b);
  }
};

// A use, before its definition, of a token from an earlier iteration
// (`%t@1`); resolved when the kernel ends.
struct ForwardUse {
  Op* op = nullptr;
  int operand = 0;
  Token token;
};

// A named attribute as written, before it is stored on the op.
struct ParsedAttr {
  const AttrSpec* spec = nullptr;
  Attribute value;
  Token name;
};

const absl::flat_hash_map<absl::string_view, OpKind>& MnemonicTable() {
  static const auto* table = [] {
    auto* map = new absl::flat_hash_map<absl::string_view, OpKind>();
    for (int i = 0; i < kNumOpKinds; ++i) {
      const OpInfo& info = GetOpInfo(static_cast<OpKind>(i));
      map->emplace(info.mnemonic, info.kind);
    }
    return map;
  }();
  return *table;
}

const char* SlotName(OperandSlot slot) {
  switch (slot) {
    case OperandSlot::kValue:
      return "value";
    case OperandSlot::kRef:
      return "buffer reference %buf[...]";
    case OperandSlot::kBuffer:
      return "whole buffer";
    case OperandSlot::kVariadic:
      return "one or more values";
    case OperandSlot::kOptional:
      return "an optional value";
  }
  return "operand";
}

const char* AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt:
      return "an integer";
    case AttrKind::kNumber:
      return "a number";
    case AttrKind::kFlag:
      return "a flag";
    case AttrKind::kString:
      return "a string";
    case AttrKind::kInts:
      return "a list of integers";
    case AttrKind::kEnum:
      return "an enum";
  }
  return "a value";
}

std::string Plural(int64_t count, absl::string_view noun) {
  return absl::StrCat(count, " ", noun, count == 1 ? "" : "s");
}

// "value, buffer reference %buf[...]" for notes about operands.
std::string DescribeSlots(const OpInfo& info) {
  std::vector<const char*> names;
  for (OperandSlot slot : info.operands) names.push_back(SlotName(slot));
  return absl::StrJoin(names, ", ");
}

// "id: an integer, threads: an integer" for notes about attributes.
std::string DescribeAttrs(const OpInfo& info) {
  std::vector<std::string> parts;
  for (const AttrSpec& spec : info.attrs) {
    std::string part = absl::StrCat(spec.name, ": ", AttrKindName(spec.kind));
    if (spec.kind == AttrKind::kEnum) {
      absl::StrAppend(&part, " (", absl::StrJoin(spec.enum_values, "|"), ")");
    }
    if (spec.positional) absl::StrAppend(&part, ", positional");
    if (spec.optional) absl::StrAppend(&part, ", optional");
    parts.push_back(std::move(part));
  }
  return absl::StrJoin(parts, "; ");
}

// The element type spelled `name`; a switch on the length instead of a
// scan, since every result type goes through here.
std::optional<DType> DTypeFromName(absl::string_view name) {
  switch (name.size()) {
    case 2:
      if (name == "i1") return DType::kI1;
      break;
    case 3:
      if (name == "i32") return DType::kI32;
      if (name == "f32") return DType::kF32;
      if (name == "i64") return DType::kI64;
      if (name == "f16") return DType::kF16;
      break;
    case 4:
      if (name == "bf16") return DType::kBF16;
      break;
    case 5:
      if (name == "index") return DType::kIndex;
      break;
    case 8:
      if (name == "mbarrier") return DType::kMbarrier;
      break;
    default:
      break;
  }
  return std::nullopt;
}

// A scalar type (every dtype but mbarrier).
std::optional<DType> ScalarTypeFromName(absl::string_view name) {
  std::optional<DType> dtype = DTypeFromName(name);
  if (dtype == DType::kMbarrier) return std::nullopt;
  return dtype;
}

class Parser {
 public:
  explicit Parser(std::shared_ptr<const SourceFile> source)
      : source_(std::move(source)), lexer_(source_->text) {}

  absl::StatusOr<std::unique_ptr<Module>> Parse();

 private:
  // --- Tokens and diagnostics.
  const Token& tok() const { return token_; }
  void Advance() { token_ = lexer_.Next(); }
  // The token after the current one, without consuming anything.
  Token PeekNext() const {
    Lexer copy = lexer_;
    return copy.Next();
  }
  bool Consume(Tok kind) {
    if (token_.kind != kind) return false;
    Advance();
    return true;
  }
  bool ConsumeIdentifier(absl::string_view spelling) {
    if (!token_.IsIdentifier(spelling)) return false;
    Advance();
    return true;
  }
  Location Loc(const Token& token) const {
    return Location{source_, token.line, token.column};
  }
  Location Loc(int line, int column) const {
    return Location{source_, line, column};
  }
  InFlightDiagnostic ErrorAt(const Token& token) const {
    return Error(Loc(token));
  }
  // "expected <what>, found <current token>", or the lexer's error.
  InFlightDiagnostic Unexpected(absl::string_view what) const;
  absl::Status Expect(Tok kind, absl::string_view what = {});
  absl::Status ExpectIdentifier(absl::string_view spelling);

  // --- Literals.
  absl::Status ParseInteger(int64_t* value, absl::string_view what);
  absl::Status ParseIntInRange(int64_t min, int64_t max, int64_t* value,
                               absl::string_view what);
  absl::Status ParseNumber(Attribute* value, absl::string_view what);
  absl::Status ParseString(std::string* value, absl::string_view what);

  // --- Values.
  // Checks that a value name is free where it is defined (not taken in the
  // kernel, nor earlier in `pending`, the names of one op's results). The
  // name reads as undefined until Define adds the value it names.
  absl::Status CheckNameFree(const Token& name,
                             const std::vector<Token>& pending = {});
  void Define(const Token& name, Value* value);
  // The value named `name` in the current kernel, or null.
  Value* FindValue(absl::string_view name);
  absl::Status LookupValue(const Token& name, Value** value);
  absl::Status ParseValueUse(Value** value, absl::string_view what);

  // --- Kernels.
  absl::Status ParseKernel(Module& module);
  absl::Status ParseSizes(Kernel& kernel);
  absl::Status ParseParam(Kernel& kernel);
  absl::Status ParseTensorAttrs(int rank, Param& param);
  absl::Status ParseMapAttrs(Param& param);
  absl::Status ParseLaunch(Kernel& kernel, bool seen[3], Token first[3]);
  absl::Status ResolveForwardUses();

  // --- Index expressions and types.
  absl::Status ParseIndexExpr(IndexExpr* expr);
  absl::Status ParseIndexExprList(std::vector<IndexExpr>* exprs,
                                  absl::string_view what);
  absl::Status ParseTerm(IndexExpr* expr);
  absl::Status ParseAtom(IndexExpr* expr);
  absl::Status MakeBinary(IndexExpr::Kind kind, const Token& op, IndexExpr lhs,
                          IndexExpr rhs, IndexExpr* expr);
  absl::Status ParseType(Type* type);
  absl::Status ParseDType(bool allow_mbarrier, DType* dtype);

  // --- Regions and ops.
  absl::Status ParseRegion(Region& region);
  absl::Status ParseOp(Region& region);
  absl::Status ParseGenericOp(Region& region, const Token& start,
                              const Token& mnemonic, const OpInfo& info,
                              Op** result);
  InFlightDiagnostic MissingOperand(const OpInfo& info, const Token& mnemonic,
                                    int index, OperandSlot slot) const;
  absl::Status ParseOperand(const OpInfo& info, const Token& mnemonic,
                            int index, OperandSlot slot, Operand* operand);
  absl::Status ParseOperands(const OpInfo& info, const Token& mnemonic,
                             OperandList* operands);
  absl::Status ParseAttrValue(const OpInfo& info, const AttrSpec& spec,
                              Attribute* value);
  absl::Status ParseAttrDict(const OpInfo& info,
                             absl::Span<const absl::string_view> custom,
                             std::vector<ParsedAttr>* attrs);
  bool AtAttrDict(const OpInfo& info) const;
  absl::Status CheckRequiredAttrs(const OpInfo& info, const Token& mnemonic,
                                  const std::vector<ParsedAttr>& attrs);
  absl::Status CheckResultNames(const OpInfo& info, const Token& start,
                                const std::vector<Token>& names);
  absl::Status ParseResultTypes(const OpInfo& info, const Token& mnemonic,
                                int num_results, std::vector<Type>* types);
  Op* CreateOp(Region& region, OpKind kind, const Token& start,
               const std::vector<Token>& names, const std::vector<Type>& types,
               OperandList operands, std::vector<ParsedAttr>& attrs,
               size_t first_forward_use);
  absl::Status ParseFor(Region& region, const Token& start, Op** result);
  absl::Status ParseIf(Region& region, const Token& start, Op** result);
  absl::Status ParseRole(Region& region, const Token& start, Op** result);
  absl::Status ParseSplitK(Region& region, const Token& start,
                           const Token& mnemonic, Op** result);
  absl::Status ParsePtx(Region& region, const Token& start,
                        const Token& mnemonic, Op** result);
  absl::Status ParseProvenance(Op& op);

  std::shared_ptr<const SourceFile> source_;
  Lexer lexer_;
  Token token_;
  int region_depth_ = 0;
  int expr_depth_ = 0;
  int expr_operators_ = 0;
  // Scratch space reused across ops; a generic op is finished before the
  // next op starts, so these are never in use twice.
  std::vector<Token> names_;
  std::vector<ParsedAttr> attrs_;
  std::vector<Token> type_tokens_;
  std::vector<Type> types_;
  std::vector<std::string> result_names_;

  // The kernel being parsed and its values.
  Kernel* kernel_ = nullptr;
  absl::flat_hash_set<Value*, ValueNameHash, ValueNameEq> values_;
  // Where a value's name was written, when that is not where the value's
  // location points (the results after an op's first, an induction
  // variable): for "previous definition" notes.
  absl::flat_hash_map<const Value*, std::pair<int, int>> name_positions_;
  // A direct-mapped cache of recently defined and used values in front of
  // `values_`. Most uses are a few ops after the definition; the cache keeps
  // them out of the big table, which with a million values no longer fits
  // in the CPU caches. Cleared for each kernel.
  static constexpr size_t kRecentSize = 1024;
  static size_t RecentIndex(absl::string_view name) {
    // Length, first and last two characters: cheap, and it separates the
    // usual `%v12`, `%w12`, `%v13` patterns.
    size_t hash = name.size();
    if (!name.empty()) {
      hash = hash * 31 + static_cast<unsigned char>(name.front());
      hash = hash * 31 + static_cast<unsigned char>(name.back());
      if (name.size() > 1) {
        hash = hash * 31 + static_cast<unsigned char>(name[name.size() - 2]);
      }
    }
    return (hash ^ (hash >> 10)) & (kRecentSize - 1);
  }
  std::vector<Value*> recent_ = std::vector<Value*>(kRecentSize, nullptr);
  std::vector<ForwardUse> forward_uses_;
  // Tensor maps over a workspace name an `alloc.workspace` of the body,
  // resolved once the body is parsed: (index into the kernel's params,
  // the name's token).
  std::vector<std::pair<size_t, Token>> workspace_maps_;
  absl::Status ResolveWorkspaceMaps(Kernel& kernel);
};

// ---------------------------------------------------------------------------
// Tokens and diagnostics.

InFlightDiagnostic Parser::Unexpected(absl::string_view what) const {
  if (tok().is(Tok::kError)) {
    InFlightDiagnostic diagnostic = ErrorAt(tok());
    diagnostic << lexer_.error();
    return diagnostic;
  }
  std::string found;
  if (tok().is(Tok::kEof)) {
    found = "end of file";
  } else {
    absl::string_view text = tok().text;
    if (text.size() > 40) text = text.substr(0, 40);
    found = absl::StrCat("'", text, tok().text.size() > 40 ? "...'" : "'");
  }
  InFlightDiagnostic diagnostic = ErrorAt(tok());
  diagnostic << "expected " << what << ", found " << found;
  return diagnostic;
}

absl::Status Parser::Expect(Tok kind, absl::string_view what) {
  if (Consume(kind)) return absl::OkStatus();
  return Unexpected(what.empty() ? TokDescription(kind) : what);
}

absl::Status Parser::ExpectIdentifier(absl::string_view spelling) {
  if (ConsumeIdentifier(spelling)) return absl::OkStatus();
  return Unexpected(absl::StrCat("'", spelling, "'"));
}

// ---------------------------------------------------------------------------
// Literals.

// integer ::= '-'? ([0-9]+ | '0x' [0-9a-fA-F]+)
absl::Status Parser::ParseInteger(int64_t* value, absl::string_view what) {
  Token minus = tok();
  bool negative = Consume(Tok::kMinus);
  if (!tok().is(Tok::kInteger)) return Unexpected(what);
  absl::string_view text = tok().text;
  uint64_t magnitude = 0;
  bool overflow = false;
  if (text.size() > 2 && (text[1] == 'x' || text[1] == 'X')) {
    for (char c : text.substr(2)) {
      int digit = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
      if (magnitude > (std::numeric_limits<uint64_t>::max() >> 4)) {
        overflow = true;
        break;
      }
      magnitude = magnitude * 16 + static_cast<uint64_t>(digit);
    }
  } else {
    for (char c : text) {
      uint64_t digit = static_cast<uint64_t>(c - '0');
      if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
        overflow = true;
        break;
      }
      magnitude = magnitude * 10 + digit;
    }
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (overflow || magnitude > limit) {
    return ErrorAt(negative ? minus : tok())
           << "integer literal does not fit in 64 bits";
  }
  *value = negative ? static_cast<int64_t>(0 - magnitude)
                    : static_cast<int64_t>(magnitude);
  Advance();
  return absl::OkStatus();
}

absl::Status Parser::ParseIntInRange(int64_t min, int64_t max, int64_t* value,
                                     absl::string_view what) {
  Token at = tok();
  KIR_RETURN_IF_ERROR(ParseInteger(value, what));
  if (*value < min || *value > max) {
    return ErrorAt(at) << what << " must be between " << min << " and " << max
                       << ", got " << *value;
  }
  return absl::OkStatus();
}

// number ::= integer | '-'? (float | 'inf') | 'nan'
absl::Status Parser::ParseNumber(Attribute* value, absl::string_view what) {
  if (tok().is(Tok::kMinus)) {
    Token next = PeekNext();
    if (next.is(Tok::kInteger)) {
      int64_t integer = 0;
      KIR_RETURN_IF_ERROR(ParseInteger(&integer, what));
      *value = Attribute::Integer(integer);
      return absl::OkStatus();
    }
    if (!next.is(Tok::kFloat) && !next.IsIdentifier("inf")) {
      Advance();
      return Unexpected(what);
    }
  } else if (tok().is(Tok::kInteger)) {
    int64_t integer = 0;
    KIR_RETURN_IF_ERROR(ParseInteger(&integer, what));
    *value = Attribute::Integer(integer);
    return absl::OkStatus();
  }
  bool negative = Consume(Tok::kMinus);
  double number = 0;
  if (tok().IsIdentifier("inf")) {
    number = std::numeric_limits<double>::infinity();
  } else if (tok().IsIdentifier("nan") && !negative) {
    number = std::numeric_limits<double>::quiet_NaN();
  } else if (tok().is(Tok::kFloat)) {
    absl::string_view text = tok().text;
    absl::from_chars_result result =
        absl::from_chars(text.data(), text.data() + text.size(), number);
    if (result.ec != std::errc() || result.ptr != text.data() + text.size()) {
      return ErrorAt(tok())
             << "float literal '" << text << "' is out of range for f64";
    }
  } else {
    return Unexpected(what);
  }
  Advance();
  *value = Attribute::Float(negative ? -number : number);
  return absl::OkStatus();
}

// string ::= '"' ( [^"\\\n] | '\\' ["\\nt] )* '"'
absl::Status Parser::ParseString(std::string* value, absl::string_view what) {
  if (!tok().is(Tok::kString)) return Unexpected(what);
  absl::string_view text = tok().text;
  text = text.substr(1, text.size() - 2);
  value->clear();
  value->reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      char escaped = text[++i];
      c = escaped == 'n' ? '\n' : escaped == 't' ? '\t' : escaped;
    }
    value->push_back(c);
  }
  Advance();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Values.

absl::Status Parser::CheckNameFree(const Token& name,
                                   const std::vector<Token>& pending) {
  int line = 0, column = 0;
  for (const Token& earlier : pending) {
    if (earlier.ValueName() == name.ValueName()) {
      line = earlier.line;
      column = earlier.column;
      break;
    }
  }
  if (line == 0) {
    auto it = values_.find(name.ValueName());
    if (it == values_.end()) return absl::OkStatus();
    auto position = name_positions_.find(*it);
    if (position != name_positions_.end()) {
      std::tie(line, column) = position->second;
    } else {
      line = (*it)->loc().line;
      column = (*it)->loc().column;
    }
  }
  return ErrorAt(name).Note(Loc(line, column), "previous definition is here")
         << "redefinition of " << name.text;
}

void Parser::Define(const Token& name, Value* value) {
  values_.insert(value);
  const Location& loc = value->loc();
  if (loc.line != name.line || loc.column != name.column) {
    name_positions_[value] = {name.line, name.column};
  }
  recent_[RecentIndex(value->name())] = value;
}

Value* Parser::FindValue(absl::string_view name) {
  Value*& cached = recent_[RecentIndex(name)];
  if (cached != nullptr && cached->name() == name) return cached;
  auto it = values_.find(name);
  if (it == values_.end()) return nullptr;
  cached = *it;
  return *it;
}

absl::Status Parser::LookupValue(const Token& name, Value** value) {
  *value = FindValue(name.ValueName());
  if (*value == nullptr) {
    return ErrorAt(name) << "use of undefined value " << name.text;
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseValueUse(Value** value, absl::string_view what) {
  if (!tok().is(Tok::kValueName)) return Unexpected(what);
  KIR_RETURN_IF_ERROR(LookupValue(tok(), value));
  Advance();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Module and kernels.

// module ::= kernel*
absl::StatusOr<std::unique_ptr<Module>> Parser::Parse() {
  auto module = std::make_unique<Module>();
  module->source = source_;
  if (source_->text.size() > kMaxSourceBytes) {
    return Error(Loc(1, 1))
           << "input is too large (" << source_->text.size()
           << " bytes; the limit is " << kMaxSourceBytes << ")";
  }
  // Lines end with LF or CRLF. With CR alone (old Mac files) the file
  // would read as one line whose first comment swallows the rest.
  const absl::string_view text = source_->text;
  for (size_t cr = text.find('\r'); cr != absl::string_view::npos;
       cr = text.find('\r', cr + 1)) {
    if (cr + 1 < text.size() && text[cr + 1] == '\n') continue;
    const size_t line_start = text.rfind('\n', cr);
    const int line =
        1 + static_cast<int>(std::count(text.begin(), text.begin() + cr, '\n'));
    const int column = static_cast<int>(
        cr - (line_start == absl::string_view::npos ? 0 : line_start + 1) + 1);
    return Error(Loc(line, column))
           << "carriage return without a line feed: kir lines end with LF "
              "or CRLF (convert the file, e.g. with tr '\\r' '\\n')";
  }
  absl::flat_hash_map<std::string, Location> kernel_names;
  Advance();
  while (!tok().is(Tok::kEof)) {
    Token start = tok();
    KIR_RETURN_IF_ERROR(ParseKernel(*module));
    const Kernel& kernel = *module->kernels.back();
    auto [it, inserted] = kernel_names.emplace(kernel.name(), kernel.loc());
    if (!inserted) {
      return ErrorAt(start).Note(it->second, "previous definition is here")
             << "redefinition of kernel @" << kernel.name();
    }
  }
  return module;
}

// kernel ::= 'kernel' '@' ident sizes? '(' (param (',' param)*)? ')'
//            launch* region
absl::Status Parser::ParseKernel(Module& module) {
  Token start = tok();
  if (!ConsumeIdentifier("kernel")) return Unexpected("'kernel'");
  KIR_RETURN_IF_ERROR(Expect(Tok::kAt, "'@' and the kernel name"));
  if (!tok().is(Tok::kIdentifier)) return Unexpected("kernel name");
  module.kernels.push_back(
      std::make_unique<Kernel>(std::string(tok().text), Loc(start)));
  Kernel& kernel = *module.kernels.back();
  kernel_ = &kernel;
  // ReserveName rejects a name defined twice, so the kernel need not index
  // the names as well while they are read.
  kernel.BeginTrustedNames();
  values_.clear();
  name_positions_.clear();
  // About one value per 40 bytes of the source left; sizing the table once
  // saves rehashing it while it grows.
  const size_t left =
      source_->text.size() -
      static_cast<size_t>(start.text.data() - source_->text.data());
  values_.reserve(std::min<size_t>(left / 40, size_t{1} << 22));
  std::fill(recent_.begin(), recent_.end(), nullptr);
  forward_uses_.clear();
  workspace_maps_.clear();
  Advance();

  if (tok().IsIdentifier("sizes")) KIR_RETURN_IF_ERROR(ParseSizes(kernel));
  KIR_RETURN_IF_ERROR(Expect(Tok::kLParen, "'(' to start the parameters"));
  if (!tok().is(Tok::kRParen)) {
    do {
      KIR_RETURN_IF_ERROR(ParseParam(kernel));
    } while (Consume(Tok::kComma));
  }
  KIR_RETURN_IF_ERROR(Expect(Tok::kRParen, "',' or ')'"));

  bool seen[3] = {false, false, false};
  Token first[3];
  while (tok().is(Tok::kIdentifier)) {
    KIR_RETURN_IF_ERROR(ParseLaunch(kernel, seen, first));
  }
  if (!tok().is(Tok::kLBrace)) {
    return Unexpected("'grid', 'block', 'cluster' or '{' to start the body");
  }
  KIR_RETURN_IF_ERROR(ParseRegion(kernel.body()));
  KIR_RETURN_IF_ERROR(ResolveForwardUses());
  KIR_RETURN_IF_ERROR(ResolveWorkspaceMaps(kernel));
  kernel.EndTrustedNames();
  kernel_ = nullptr;
  return absl::OkStatus();
}

// sizes ::= 'sizes' '(' value (',' value)* ')'
absl::Status Parser::ParseSizes(Kernel& kernel) {
  KIR_RETURN_IF_ERROR(ExpectIdentifier("sizes"));
  KIR_RETURN_IF_ERROR(Expect(Tok::kLParen));
  do {
    if (!tok().is(Tok::kValueName)) return Unexpected("a size name");
    KIR_RETURN_IF_ERROR(CheckNameFree(tok()));
    Define(tok(), kernel.AddSize(std::string(tok().ValueName()), Loc(tok())));
    Advance();
  } while (Consume(Tok::kComma));
  return Expect(Tok::kRParen, "',' or ')'");
}

// param           ::= value ':' (tensor-param | tensormap-param | scalar-type)
// tensor-param    ::= 'global' dtype '[' index-exprs ']' tensor-attrs?
// tensormap-param ::= 'tensormap' dtype '[' integers ']' 'of' value
//                     map-attrs?
// (the value: a tensor parameter before it, or an `alloc.workspace` of the
// body)
absl::Status Parser::ParseParam(Kernel& kernel) {
  if (!tok().is(Tok::kValueName)) return Unexpected("a parameter name");
  Token name = tok();
  KIR_RETURN_IF_ERROR(CheckNameFree(name));
  Advance();
  KIR_RETURN_IF_ERROR(Expect(Tok::kColon, "':' and the parameter type"));
  Param param;
  Type type;
  if (ConsumeIdentifier("global")) {
    param.kind = Param::Kind::kTensor;
    DType dtype;
    KIR_RETURN_IF_ERROR(ParseDType(/*allow_mbarrier=*/false, &dtype));
    KIR_RETURN_IF_ERROR(Expect(Tok::kLBracket, "'[' and the shape"));
    std::vector<IndexExpr> shape;
    KIR_RETURN_IF_ERROR(ParseIndexExprList(&shape, "a shape extent"));
    KIR_RETURN_IF_ERROR(Expect(Tok::kRBracket, "',' or ']'"));
    int rank = static_cast<int>(shape.size());
    type = Type::Buffer(MemorySpace::kGlobal, dtype, std::move(shape));
    if (tok().is(Tok::kLBrace)) {
      KIR_RETURN_IF_ERROR(ParseTensorAttrs(rank, param));
    }
  } else if (ConsumeIdentifier("tensormap")) {
    param.kind = Param::Kind::kTensorMap;
    DType dtype;
    KIR_RETURN_IF_ERROR(ParseDType(/*allow_mbarrier=*/false, &dtype));
    KIR_RETURN_IF_ERROR(Expect(Tok::kLBracket, "'[' and the box shape"));
    std::vector<int64_t> box;
    do {
      int64_t extent = 0;
      KIR_RETURN_IF_ERROR(ParseIntInRange(
          1, std::numeric_limits<int32_t>::max(), &extent, "box extent"));
      box.push_back(extent);
    } while (Consume(Tok::kComma));
    KIR_RETURN_IF_ERROR(Expect(Tok::kRBracket, "',' or ']'"));
    type = Type::TensorMap(dtype, std::move(box));
    KIR_RETURN_IF_ERROR(ExpectIdentifier("of"));
    if (!tok().is(Tok::kValueName)) {
      return Unexpected("the tensor parameter or workspace the map covers");
    }
    Value* tensor = FindValue(tok().ValueName());
    if (tensor == nullptr) {
      // A workspace allocated in the body: resolved after it.
      workspace_maps_.emplace_back(kernel.params().size(), tok());
    } else {
      const Param* covered = kernel.FindParam(tensor);
      if (covered == nullptr || covered->kind != Param::Kind::kTensor) {
        return ErrorAt(tok()) << tok().text
                              << " is not a global tensor parameter or a "
                                 "workspace (alloc.workspace)";
      }
      param.tensor = tensor;
    }
    Advance();
    if (tok().is(Tok::kLBrace)) KIR_RETURN_IF_ERROR(ParseMapAttrs(param));
  } else if (std::optional<DType> scalar = ScalarTypeFromName(tok().text);
             scalar && tok().is(Tok::kIdentifier)) {
    param.kind = Param::Kind::kScalar;
    type = Type::Scalar(*scalar);
    Advance();
  } else {
    return Unexpected(
        "a parameter type ('global', 'tensormap' or a scalar type)");
  }
  Param& added = kernel.AddParam(std::string(name.ValueName()), std::move(type),
                                 std::move(param), Loc(name));
  Define(name, added.value);
  return absl::OkStatus();
}

// tensor-attrs ::= '{' tensor-attr (',' tensor-attr)* '}'
// tensor-attr  ::= 'layout' '=' ('row_major' | 'col_major')
//                | 'strides' '=' '[' index-exprs ']'
//                | 'align' '=' integer
absl::Status Parser::ParseTensorAttrs(int rank, Param& param) {
  KIR_RETURN_IF_ERROR(Expect(Tok::kLBrace));
  bool seen_layout = false, seen_strides = false, seen_align = false;
  Token layout_token;
  do {
    Token name = tok();
    if (!name.is(Tok::kIdentifier)) return Unexpected("a tensor attribute");
    bool* seen = name.text == "layout"    ? &seen_layout
                 : name.text == "strides" ? &seen_strides
                 : name.text == "align"   ? &seen_align
                                          : nullptr;
    if (seen == nullptr) {
      return ErrorAt(name).Note(Loc(name),
                                "tensor attributes are 'layout', 'strides' "
                                "and 'align'")
             << "unknown tensor attribute '" << name.text << "'";
    }
    if (*seen) {
      return ErrorAt(name) << "duplicate tensor attribute '" << name.text
                           << "'";
    }
    *seen = true;
    Advance();
    KIR_RETURN_IF_ERROR(Expect(Tok::kEqual, "'='"));
    if (name.text == "layout") {
      if (seen_strides) {
        return ErrorAt(name)
               << "a tensor takes 'layout' or 'strides', not both";
      }
      if (tok().IsIdentifier("row_major")) {
        param.layout = TensorLayout::kRowMajor;
      } else if (tok().IsIdentifier("col_major")) {
        param.layout = TensorLayout::kColumnMajor;
      } else {
        return Unexpected("'row_major' or 'col_major'");
      }
      Advance();
    } else if (name.text == "strides") {
      if (seen_layout) {
        return ErrorAt(name)
               << "a tensor takes 'layout' or 'strides', not both";
      }
      Token open = tok();
      KIR_RETURN_IF_ERROR(Expect(Tok::kLBracket, "'[' and the strides"));
      std::vector<IndexExpr> strides;
      KIR_RETURN_IF_ERROR(ParseIndexExprList(&strides, "a stride"));
      KIR_RETURN_IF_ERROR(Expect(Tok::kRBracket, "',' or ']'"));
      if (static_cast<int>(strides.size()) != rank) {
        return ErrorAt(open)
               << "a rank-" << rank << " tensor takes "
               << Plural(rank, "stride") << ", got " << strides.size();
      }
      param.layout = TensorLayout::kStrided;
      param.strides = std::move(strides);
    } else {
      KIR_RETURN_IF_ERROR(
          ParseIntInRange(1, int64_t{1} << 30, &param.align, "alignment"));
    }
  } while (Consume(Tok::kComma));
  return Expect(Tok::kRBrace, "',' or '}'");
}

// map-attrs ::= '{' map-attr (',' map-attr)* '}'
// map-attr  ::= 'swizzle' '=' ('0' | '32' | '64' | '128')
//             | 'oob' '=' ('zero' | 'nan')
absl::Status Parser::ParseMapAttrs(Param& param) {
  KIR_RETURN_IF_ERROR(Expect(Tok::kLBrace));
  bool seen_swizzle = false, seen_oob = false;
  do {
    Token name = tok();
    if (!name.is(Tok::kIdentifier)) {
      return Unexpected("a tensor map attribute");
    }
    bool* seen = name.text == "swizzle" ? &seen_swizzle
                 : name.text == "oob"   ? &seen_oob
                                        : nullptr;
    if (seen == nullptr) {
      return ErrorAt(name).Note(Loc(name),
                                "tensor map attributes are 'swizzle' and 'oob'")
             << "unknown tensor map attribute '" << name.text << "'";
    }
    if (*seen) {
      return ErrorAt(name) << "duplicate tensor map attribute '" << name.text
                           << "'";
    }
    *seen = true;
    Advance();
    KIR_RETURN_IF_ERROR(Expect(Tok::kEqual, "'='"));
    if (name.text == "swizzle") {
      Token at = tok();
      int64_t swizzle = 0;
      KIR_RETURN_IF_ERROR(ParseInteger(&swizzle, "a swizzle width"));
      if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128) {
        return ErrorAt(at).Note(Loc(at), "expected 0, 32, 64 or 128")
               << "invalid swizzle " << swizzle;
      }
      param.swizzle = static_cast<int>(swizzle);
    } else {
      if (tok().IsIdentifier("zero")) {
        param.oob = OobFill::kZero;
      } else if (tok().IsIdentifier("nan")) {
        param.oob = OobFill::kNan;
      } else {
        return Unexpected("'zero' or 'nan'");
      }
      Advance();
    }
  } while (Consume(Tok::kComma));
  return Expect(Tok::kRBrace, "',' or '}'");
}

// launch ::= ('grid' | 'block' | 'cluster') '(' index-expr (',' index-expr)*
// ')'
absl::Status Parser::ParseLaunch(Kernel& kernel, bool seen[3], Token first[3]) {
  Token name = tok();
  int which = name.text == "grid"      ? 0
              : name.text == "block"   ? 1
              : name.text == "cluster" ? 2
                                       : -1;
  if (which < 0) {
    return Unexpected("'grid', 'block', 'cluster' or '{' to start the body");
  }
  if (seen[which]) {
    return ErrorAt(name).Note(Loc(first[which]), "first given here")
           << "duplicate '" << name.text << "' dimensions";
  }
  seen[which] = true;
  first[which] = name;
  Advance();
  KIR_RETURN_IF_ERROR(Expect(Tok::kLParen));
  Dim3& dims = which == 0   ? kernel.grid
               : which == 1 ? kernel.block
                            : kernel.cluster;
  dims.loc = Loc(name);
  int count = 0;
  do {
    if (count == 3) {
      return ErrorAt(tok())
             << "'" << name.text << "' takes at most 3 dimensions (x, y, z)";
    }
    dims.dim_loc[count] = Loc(tok());
    KIR_RETURN_IF_ERROR(ParseIndexExpr(&dims[count]));
    ++count;
  } while (Consume(Tok::kComma));
  return Expect(Tok::kRParen, "',' or ')'");
}

absl::Status Parser::ResolveWorkspaceMaps(Kernel& kernel) {
  for (const auto& [index, token] : workspace_maps_) {
    Value* value = FindValue(token.ValueName());
    if (value == nullptr) {
      return ErrorAt(token) << "use of undefined value " << token.text
                            << " (a tensor map covers a tensor parameter "
                               "declared before it or a workspace of the "
                               "body)";
    }
    const Op* defining = value->defining_op();
    if (defining == nullptr || defining->kind() != OpKind::kAllocWorkspace) {
      return ErrorAt(token) << token.text
                            << " is not a global tensor parameter or a "
                               "workspace (alloc.workspace)";
    }
    kernel.mutable_params()[index].tensor = value;
  }
  workspace_maps_.clear();
  return absl::OkStatus();
}

absl::Status Parser::ResolveForwardUses() {
  for (const ForwardUse& use : forward_uses_) {
    Value* value = nullptr;
    KIR_RETURN_IF_ERROR(LookupValue(use.token, &value));
    use.op->mutable_operand(use.operand).value = value;
  }
  forward_uses_.clear();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Index expressions and types.

// index-exprs ::= index-expr (',' index-expr)*
// Shapes and strides: a constant one must not be negative.
absl::Status Parser::ParseIndexExprList(std::vector<IndexExpr>* exprs,
                                        absl::string_view what) {
  do {
    Token start = tok();
    IndexExpr expr;
    KIR_RETURN_IF_ERROR(ParseIndexExpr(&expr));
    if (expr.is_constant() && expr.constant() < 0) {
      return ErrorAt(start)
             << what << " must not be negative, got " << expr.constant();
    }
    exprs->push_back(std::move(expr));
  } while (Consume(Tok::kComma));
  return absl::OkStatus();
}

absl::Status Parser::MakeBinary(IndexExpr::Kind kind, const Token& op,
                                IndexExpr lhs, IndexExpr rhs, IndexExpr* expr) {
  if (++expr_operators_ > kMaxExpressionOperators) {
    return ErrorAt(op) << "index expression has more than "
                       << kMaxExpressionOperators << " operators";
  }
  const bool divides = kind == IndexExpr::Kind::kDiv ||
                       kind == IndexExpr::Kind::kMod ||
                       kind == IndexExpr::Kind::kCeilDiv;
  if (divides && rhs.is_constant() && rhs.constant() == 0) {
    return ErrorAt(op) << "index expression divides by zero";
  }
  const bool constant = lhs.is_constant() && rhs.is_constant();
  *expr = IndexExpr::Binary(kind, std::move(lhs), std::move(rhs));
  // Binary folds constants unless the result does not fit.
  if (constant && !expr->is_constant()) {
    return ErrorAt(op) << "index expression overflows 64 bits";
  }
  return absl::OkStatus();
}

// index-expr ::= term (('+' | '-') term)*
absl::Status Parser::ParseIndexExpr(IndexExpr* expr) {
  NestingGuard guard(expr_depth_);
  if (guard.too_deep()) {
    return ErrorAt(tok()) << "index expression nests more than " << kMaxNesting
                          << " levels deep";
  }
  if (expr_depth_ == 1) expr_operators_ = 0;
  KIR_RETURN_IF_ERROR(ParseTerm(expr));
  while (tok().is(Tok::kPlus) || tok().is(Tok::kMinus)) {
    Token op = tok();
    Advance();
    IndexExpr rhs;
    KIR_RETURN_IF_ERROR(ParseTerm(&rhs));
    KIR_RETURN_IF_ERROR(MakeBinary(
        op.is(Tok::kPlus) ? IndexExpr::Kind::kAdd : IndexExpr::Kind::kSub, op,
        std::move(*expr), std::move(rhs), expr));
  }
  return absl::OkStatus();
}

// term ::= atom (('*' | '/' | '%') atom)*
absl::Status Parser::ParseTerm(IndexExpr* expr) {
  KIR_RETURN_IF_ERROR(ParseAtom(expr));
  while (tok().is(Tok::kStar) || tok().is(Tok::kSlash) ||
         tok().is(Tok::kPercent)) {
    Token op = tok();
    Advance();
    IndexExpr rhs;
    KIR_RETURN_IF_ERROR(ParseAtom(&rhs));
    IndexExpr::Kind kind = op.is(Tok::kStar)    ? IndexExpr::Kind::kMul
                           : op.is(Tok::kSlash) ? IndexExpr::Kind::kDiv
                                                : IndexExpr::Kind::kMod;
    KIR_RETURN_IF_ERROR(
        MakeBinary(kind, op, std::move(*expr), std::move(rhs), expr));
  }
  return absl::OkStatus();
}

// atom ::= integer | value
//        | ('cdiv' | 'min' | 'max') '(' index-expr ',' index-expr ')'
//        | '(' index-expr ')'
absl::Status Parser::ParseAtom(IndexExpr* expr) {
  if (tok().is(Tok::kInteger) || tok().is(Tok::kMinus)) {
    int64_t value = 0;
    KIR_RETURN_IF_ERROR(ParseInteger(&value, "an integer"));
    *expr = IndexExpr::Constant(value);
    return absl::OkStatus();
  }
  if (tok().is(Tok::kValueName)) {
    Value* value = nullptr;
    KIR_RETURN_IF_ERROR(LookupValue(tok(), &value));
    if (value->kind() != Value::Kind::kSize) {
      return ErrorAt(tok()) << tok().text
                            << " is not a size; index expressions in shapes "
                               "and launch dimensions use only the kernel's "
                               "sizes";
    }
    *expr = IndexExpr::Size(value);
    Advance();
    return absl::OkStatus();
  }
  if (tok().is(Tok::kLParen)) {
    Advance();
    KIR_RETURN_IF_ERROR(ParseIndexExpr(expr));
    return Expect(Tok::kRParen, "')'");
  }
  if (tok().is(Tok::kIdentifier)) {
    Token function = tok();
    IndexExpr::Kind kind;
    if (function.text == "cdiv") {
      kind = IndexExpr::Kind::kCeilDiv;
    } else if (function.text == "min") {
      kind = IndexExpr::Kind::kMin;
    } else if (function.text == "max") {
      kind = IndexExpr::Kind::kMax;
    } else {
      return Unexpected("an index expression");
    }
    Advance();
    KIR_RETURN_IF_ERROR(Expect(Tok::kLParen));
    IndexExpr lhs, rhs;
    KIR_RETURN_IF_ERROR(ParseIndexExpr(&lhs));
    KIR_RETURN_IF_ERROR(Expect(Tok::kComma));
    KIR_RETURN_IF_ERROR(ParseIndexExpr(&rhs));
    KIR_RETURN_IF_ERROR(Expect(Tok::kRParen));
    return MakeBinary(kind, function, std::move(lhs), std::move(rhs), expr);
  }
  return Unexpected("an index expression");
}

// dtype ::= scalar-type | 'mbarrier'
absl::Status Parser::ParseDType(bool allow_mbarrier, DType* dtype) {
  if (tok().is(Tok::kIdentifier)) {
    if (std::optional<DType> parsed = DTypeFromName(tok().text)) {
      if (*parsed != DType::kMbarrier || allow_mbarrier) {
        *dtype = *parsed;
        Advance();
        return absl::OkStatus();
      }
    }
  }
  return Unexpected(allow_mbarrier ? "an element type (i1, i32, i64, index, "
                                     "f16, bf16, f32 or mbarrier)"
                                   : "an element type (i1, i32, i64, index, "
                                     "f16, bf16 or f32)");
}

// type ::= scalar-type | 'vec' '<' integer 'x' dtype '>'
//        | ('global' | 'shared' | 'reg') dtype '[' index-exprs ']'
//        | 'tensormap' dtype '[' integers ']'
//        | 'token' '<' ('bulk' | 'wgmma' | 'cp_async') '>'
absl::Status Parser::ParseType(Type* type) {
  if (!tok().is(Tok::kIdentifier)) return Unexpected("a type");
  absl::string_view name = tok().text;
  if (std::optional<DType> scalar = ScalarTypeFromName(name)) {
    *type = Type::Scalar(*scalar);
    Advance();
    return absl::OkStatus();
  }
  if (name == "vec") {
    Advance();
    KIR_RETURN_IF_ERROR(Expect(Tok::kLess));
    int64_t lanes = 0;
    // A vector of one lane is its scalar: write that instead.
    KIR_RETURN_IF_ERROR(ParseIntInRange(2, std::numeric_limits<int32_t>::max(),
                                        &lanes, "vector lane count"));
    // `4xf32` lexes as `4` `xf32`; `4 x f32` as `4` `x` `f32`.
    if (!tok().is(Tok::kIdentifier) || tok().text[0] != 'x') {
      return Unexpected("'x' and the element type");
    }
    DType dtype;
    if (tok().text == "x") {
      Advance();
      KIR_RETURN_IF_ERROR(ParseDType(/*allow_mbarrier=*/false, &dtype));
    } else {
      absl::string_view element = tok().text.substr(1);
      std::optional<DType> parsed = DTypeFromName(element);
      if (!parsed || *parsed == DType::kMbarrier) {
        return ErrorAt(tok()) << "expected a vector element type after 'x', "
                                 "found '"
                              << element << "'";
      }
      dtype = *parsed;
      Advance();
    }
    KIR_RETURN_IF_ERROR(Expect(Tok::kGreater));
    *type = Type::Vector(dtype, static_cast<int>(lanes));
    return absl::OkStatus();
  }
  if (name == "global" || name == "shared" || name == "reg") {
    MemorySpace space = name == "global"   ? MemorySpace::kGlobal
                        : name == "shared" ? MemorySpace::kShared
                                           : MemorySpace::kRegister;
    Advance();
    DType dtype;
    KIR_RETURN_IF_ERROR(ParseDType(/*allow_mbarrier=*/true, &dtype));
    KIR_RETURN_IF_ERROR(Expect(Tok::kLBracket, "'[' and the shape"));
    std::vector<IndexExpr> shape;
    KIR_RETURN_IF_ERROR(ParseIndexExprList(&shape, "a shape extent"));
    KIR_RETURN_IF_ERROR(Expect(Tok::kRBracket, "',' or ']'"));
    *type = Type::Buffer(space, dtype, std::move(shape));
    return absl::OkStatus();
  }
  if (name == "tensormap") {
    Advance();
    DType dtype;
    KIR_RETURN_IF_ERROR(ParseDType(/*allow_mbarrier=*/false, &dtype));
    KIR_RETURN_IF_ERROR(Expect(Tok::kLBracket, "'[' and the box shape"));
    std::vector<int64_t> box;
    do {
      int64_t extent = 0;
      KIR_RETURN_IF_ERROR(ParseIntInRange(
          1, std::numeric_limits<int32_t>::max(), &extent, "box extent"));
      box.push_back(extent);
    } while (Consume(Tok::kComma));
    KIR_RETURN_IF_ERROR(Expect(Tok::kRBracket, "',' or ']'"));
    *type = Type::TensorMap(dtype, std::move(box));
    return absl::OkStatus();
  }
  if (name == "token") {
    Advance();
    KIR_RETURN_IF_ERROR(Expect(Tok::kLess));
    kir::TokenKind kind;
    if (tok().IsIdentifier("bulk")) {
      kind = kir::TokenKind::kBulk;
    } else if (tok().IsIdentifier("wgmma")) {
      kind = kir::TokenKind::kWgmma;
    } else if (tok().IsIdentifier("cp_async")) {
      kind = kir::TokenKind::kCpAsync;
    } else {
      return Unexpected("a token kind ('bulk', 'wgmma' or 'cp_async')");
    }
    Advance();
    KIR_RETURN_IF_ERROR(Expect(Tok::kGreater));
    *type = Type::Token(kind);
    return absl::OkStatus();
  }
  return Unexpected("a type");
}

// ---------------------------------------------------------------------------
// Regions and ops.

// region ::= '{' op* '}'
absl::Status Parser::ParseRegion(Region& region) {
  NestingGuard guard(region_depth_);
  if (guard.too_deep()) {
    return ErrorAt(tok()) << "regions nest more than " << kMaxNesting
                          << " levels deep";
  }
  Token open = tok();
  KIR_RETURN_IF_ERROR(Expect(Tok::kLBrace, "'{' to start a region"));
  while (!tok().is(Tok::kRBrace)) {
    if (tok().is(Tok::kEof)) {
      return Unexpected("'}' to end the region")
          .Note(Loc(open), "the region starts here");
    }
    KIR_RETURN_IF_ERROR(ParseOp(region));
  }
  Advance();
  return absl::OkStatus();
}

// op      ::= (value (',' value)* '=')? op-body provenance?
// op-body ::= generic-op | for-op | if-op | role-op | splitk-op | ptx-op
absl::Status Parser::ParseOp(Region& region) {
  const Token start = tok();
  names_.clear();
  if (tok().is(Tok::kValueName)) {
    do {
      if (!tok().is(Tok::kValueName)) return Unexpected("a result name");
      KIR_RETURN_IF_ERROR(CheckNameFree(tok(), names_));
      names_.push_back(tok());
      Advance();
    } while (Consume(Tok::kComma));
    if (!Consume(Tok::kEqual)) return Unexpected("',' or '=' after results");
  }
  if (!tok().is(Tok::kIdentifier)) return Unexpected("an operation name");
  const Token mnemonic = tok();
  const auto& table = MnemonicTable();
  auto it = table.find(mnemonic.text);
  if (it == table.end()) {
    return ErrorAt(mnemonic) << "unknown operation '" << mnemonic.text << "'";
  }
  const OpInfo& info = GetOpInfo(it->second);
  Advance();
  Op* op = nullptr;
  switch (info.kind) {
    case OpKind::kFor:
    case OpKind::kIf:
    case OpKind::kRole:
    case OpKind::kSplitK:
      KIR_RETURN_IF_ERROR(CheckResultNames(info, start, names_));
      break;
    default:
      break;
  }
  switch (info.kind) {
    case OpKind::kFor:
      KIR_RETURN_IF_ERROR(ParseFor(region, start, &op));
      break;
    case OpKind::kIf:
      KIR_RETURN_IF_ERROR(ParseIf(region, start, &op));
      break;
    case OpKind::kRole:
      KIR_RETURN_IF_ERROR(ParseRole(region, start, &op));
      break;
    case OpKind::kSplitK:
      KIR_RETURN_IF_ERROR(ParseSplitK(region, start, mnemonic, &op));
      break;
    case OpKind::kPtx:
      KIR_RETURN_IF_ERROR(ParsePtx(region, start, mnemonic, &op));
      break;
    default:
      KIR_RETURN_IF_ERROR(ParseGenericOp(region, start, mnemonic, info, &op));
      break;
  }
  if (tok().IsIdentifier("loc")) KIR_RETURN_IF_ERROR(ParseProvenance(*op));
  return absl::OkStatus();
}

absl::Status Parser::CheckResultNames(const OpInfo& info, const Token& start,
                                      const std::vector<Token>& names) {
  const int expected = info.num_results;
  const int given = static_cast<int>(names.size());
  if (expected < 0 || given == expected) return absl::OkStatus();
  if (given == 0) {
    return ErrorAt(start) << "'" << info.mnemonic << "' has "
                          << Plural(expected, "result")
                          << ", but no result name is given";
  }
  if (expected == 0) {
    return ErrorAt(names[0]) << "'" << info.mnemonic << "' has no results, but "
                             << Plural(given, "result name")
                             << (given == 1 ? " is" : " are") << " given";
  }
  return ErrorAt(names[0]) << "'" << info.mnemonic << "' has "
                           << Plural(expected, "result") << ", but "
                           << Plural(given, "result name")
                           << (given == 1 ? " is" : " are") << " given";
}

// The `: type, ...` list of result types, `num_results` of them.
absl::Status Parser::ParseResultTypes(const OpInfo& info, const Token& mnemonic,
                                      int num_results,
                                      std::vector<Type>* types) {
  if (!tok().is(Tok::kColon)) {
    if (num_results == 0) return absl::OkStatus();
    return Unexpected(absl::StrCat("':' and the result ",
                                   num_results == 1 ? "type" : "types", " of '",
                                   info.mnemonic, "'"));
  }
  const Token colon = tok();
  if (num_results == 0) {
    return ErrorAt(colon) << "'" << info.mnemonic
                          << "' has no results, so it takes no types";
  }
  Advance();
  type_tokens_.clear();
  do {
    type_tokens_.push_back(tok());
    Type type;
    KIR_RETURN_IF_ERROR(ParseType(&type));
    types->push_back(std::move(type));
  } while (Consume(Tok::kComma));
  const int given = static_cast<int>(types->size());
  if (given != num_results) {
    const Token& at = given > num_results ? type_tokens_[num_results] : colon;
    return ErrorAt(at) << "'" << info.mnemonic << "' has "
                       << Plural(num_results, "result") << ", but "
                       << Plural(given, "type") << (given == 1 ? " is" : " are")
                       << " given";
  }
  return absl::OkStatus();
}

Op* Parser::CreateOp(Region& region, OpKind kind, const Token& start,
                     const std::vector<Token>& names,
                     const std::vector<Type>& types, OperandList operands,
                     std::vector<ParsedAttr>& attrs, size_t first_forward_use) {
  result_names_.resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    absl::string_view name = names[i].ValueName();
    result_names_[i].assign(name.data(), name.size());
  }
  Op* op =
      region.Append(kernel_->CreateOp(kind, Loc(start), types, result_names_));
  op->mutable_operands() = std::move(operands);
  for (ParsedAttr& attr : attrs) {
    op->SetAttr(attr.spec->name, std::move(attr.value));
  }
  for (int i = 0; i < op->num_results(); ++i) {
    // The parser checked that the name is free, so it is kept as written.
    KIR_CHECK(op->result(i)->name() == names[i].ValueName());
    Define(names[i], op->result(i));
  }
  for (size_t i = first_forward_use; i < forward_uses_.size(); ++i) {
    forward_uses_[i].op = op;
  }
  return op;
}

InFlightDiagnostic Parser::MissingOperand(const OpInfo& info,
                                          const Token& mnemonic, int index,
                                          OperandSlot slot) const {
  InFlightDiagnostic diagnostic =
      Unexpected(absl::StrCat("operand #", index + 1, " of '", info.mnemonic,
                              "' (", SlotName(slot), ")"));
  diagnostic.Note(Loc(mnemonic),
                  absl::StrCat("'", info.mnemonic,
                               "' takes operands: ", DescribeSlots(info)));
  return diagnostic;
}

// operand ::= value                                   // a value
//           | value '[' (value (',' value)*)? ']'     // a buffer reference
//           | value '@' integer                       // an earlier token
absl::Status Parser::ParseOperand(const OpInfo& info, const Token& mnemonic,
                                  int index, OperandSlot slot,
                                  Operand* operand) {
  if (!tok().is(Tok::kValueName)) {
    return MissingOperand(info, mnemonic, index, slot);
  }
  const Token name = tok();
  Advance();
  Value* value = FindValue(name.ValueName());
  if (slot == OperandSlot::kRef) {
    if (!tok().is(Tok::kLBracket)) {
      return ErrorAt(name).Note(
                 Loc(mnemonic),
                 absl::StrCat("'", info.mnemonic,
                              "' takes operands: ", DescribeSlots(info)))
             << "operand #" << index + 1 << " of '" << info.mnemonic
             << "' must be a buffer reference `" << name.text << "[...]`";
    }
    if (value == nullptr) return LookupValue(name, &value);
    Advance();
    operand->value = value;
    operand->indexed = true;
    if (!tok().is(Tok::kRBracket)) {
      do {
        Value* index_value = nullptr;
        KIR_RETURN_IF_ERROR(ParseValueUse(&index_value, "an index value"));
        operand->indices.push_back(index_value);
      } while (Consume(Tok::kComma));
    }
    return Expect(Tok::kRBracket, "',' or ']'");
  }
  if (tok().is(Tok::kLBracket)) {
    return ErrorAt(tok()) << "operand #" << index + 1 << " of '"
                          << info.mnemonic << "' is a "
                          << (slot == OperandSlot::kBuffer
                                  ? "whole buffer and takes no indices"
                                  : "value, not a buffer reference");
  }
  if (tok().is(Tok::kAt)) {
    if (slot == OperandSlot::kBuffer) {
      return ErrorAt(tok())
             << "operand #" << index + 1 << " of '" << info.mnemonic
             << "' is a buffer; only tokens take '@N'";
    }
    Advance();
    int64_t distance = 0;
    KIR_RETURN_IF_ERROR(ParseIntInRange(0, std::numeric_limits<int32_t>::max(),
                                        &distance, "token distance"));
    operand->distance = static_cast<int>(distance);
    if (value == nullptr) {
      if (distance == 0) {
        return ErrorAt(name) << "use of undefined value " << name.text
                             << " (a token used before its definition names "
                                "an earlier iteration: '@N' with N >= 1)";
      }
      // Defined later in the text (the token of an earlier iteration of the
      // loop that commits it); resolved at the end of the kernel.
      forward_uses_.push_back(ForwardUse{nullptr, index, name});
      return absl::OkStatus();
    }
  }
  if (value == nullptr) return LookupValue(name, &value);
  operand->value = value;
  return absl::OkStatus();
}

// operands ::= operand (',' operand)*                  // slots as in ops.def
absl::Status Parser::ParseOperands(const OpInfo& info, const Token& mnemonic,
                                   OperandList* operands) {
  const int num_slots = static_cast<int>(info.operands.size());
  operands->reserve(num_slots);
  for (int i = 0; i < num_slots; ++i) {
    const OperandSlot slot = info.operands[i];
    if (slot == OperandSlot::kOptional && !tok().is(Tok::kComma)) break;
    if (i > 0 && !Consume(Tok::kComma)) {
      return MissingOperand(info, mnemonic, i, slot);
    }
    operands->emplace_back();
    KIR_RETURN_IF_ERROR(
        ParseOperand(info, mnemonic, i, slot, &operands->back()));
    if (slot == OperandSlot::kVariadic) {
      while (Consume(Tok::kComma)) {
        const int index = static_cast<int>(operands->size());
        operands->emplace_back();
        KIR_RETURN_IF_ERROR(
            ParseOperand(info, mnemonic, index, slot, &operands->back()));
      }
    }
  }
  if (tok().is(Tok::kComma)) {
    return ErrorAt(tok()).Note(
               Loc(mnemonic),
               num_slots == 0
                   ? absl::StrCat("'", info.mnemonic, "' takes no operands")
                   : absl::StrCat("'", info.mnemonic,
                                  "' takes operands: ", DescribeSlots(info)))
           << "too many operands for '" << info.mnemonic << "'";
  }
  return absl::OkStatus();
}

// What an attribute's value should look like, for "expected ..." errors.
std::string DescribeAttrValue(const OpInfo& info, const AttrSpec& spec) {
  std::string what =
      absl::StrCat("the '", spec.name, "' attribute of '", info.mnemonic, "' (",
                   AttrKindName(spec.kind));
  if (spec.kind == AttrKind::kEnum) {
    absl::StrAppend(&what, ": ", absl::StrJoin(spec.enum_values, ", "));
  }
  return what + ")";
}

// attr-value ::= integer | float | string | ident
//              | '[' (integer (',' integer)*)? ']'
absl::Status Parser::ParseAttrValue(const OpInfo& info, const AttrSpec& spec,
                                    Attribute* value) {
  switch (spec.kind) {
    case AttrKind::kInt: {
      if (!tok().is(Tok::kInteger) && !tok().is(Tok::kMinus)) {
        return Unexpected(DescribeAttrValue(info, spec));
      }
      int64_t integer = 0;
      KIR_RETURN_IF_ERROR(ParseInteger(&integer, "an integer"));
      *value = Attribute::Int(integer);
      return absl::OkStatus();
    }
    case AttrKind::kNumber:
      if (!tok().is(Tok::kInteger) && !tok().is(Tok::kMinus) &&
          !tok().is(Tok::kFloat) && !tok().IsIdentifier("inf") &&
          !tok().IsIdentifier("nan")) {
        return Unexpected(DescribeAttrValue(info, spec));
      }
      return ParseNumber(value, "a number");
    case AttrKind::kFlag:
      // Only reachable for a positional flag: its name sets it.
      if (!tok().IsIdentifier(spec.name)) {
        return Unexpected(DescribeAttrValue(info, spec));
      }
      Advance();
      *value = Attribute::Flag(true);
      return absl::OkStatus();
    case AttrKind::kString: {
      if (!tok().is(Tok::kString)) {
        return Unexpected(DescribeAttrValue(info, spec));
      }
      std::string text;
      KIR_RETURN_IF_ERROR(ParseString(&text, "a string"));
      *value = Attribute::String(std::move(text));
      return absl::OkStatus();
    }
    case AttrKind::kInts: {
      if (!tok().is(Tok::kLBracket)) {
        return Unexpected(DescribeAttrValue(info, spec));
      }
      Advance();
      std::vector<int64_t> ints;
      if (!tok().is(Tok::kRBracket)) {
        do {
          int64_t integer = 0;
          KIR_RETURN_IF_ERROR(ParseInteger(&integer, "an integer"));
          ints.push_back(integer);
        } while (Consume(Tok::kComma));
      }
      KIR_RETURN_IF_ERROR(Expect(Tok::kRBracket, "',' or ']'"));
      *value = Attribute::Ints(std::move(ints));
      return absl::OkStatus();
    }
    case AttrKind::kEnum: {
      if (!tok().is(Tok::kIdentifier)) {
        return Unexpected(DescribeAttrValue(info, spec));
      }
      for (const std::string& allowed : spec.enum_values) {
        if (tok().text == allowed) {
          *value = Attribute::Enum(allowed);
          Advance();
          return absl::OkStatus();
        }
      }
      return ErrorAt(tok()).Note(
                 Loc(tok()),
                 absl::StrCat("expected one of: ",
                              absl::StrJoin(spec.enum_values, ", ")))
             << "invalid value '" << tok().text << "' for attribute '"
             << spec.name << "' of '" << info.mnemonic << "'";
    }
  }
  return Unexpected("an attribute value");
}

// True at an attr-dict rather than at a region: `{` followed by one of the
// op's attribute names, or by an identifier that names no operation.
bool Parser::AtAttrDict(const OpInfo& info) const {
  if (!tok().is(Tok::kLBrace)) return false;
  Token next = PeekNext();
  if (!next.is(Tok::kIdentifier)) return false;
  if (info.FindAttr(next.text) != nullptr) return true;
  return !MnemonicTable().contains(next.text);
}

// attr-dict ::= '{' attr (',' attr)* '}'
// attr      ::= ident ('=' attr-value)?               // bare ident: a flag
absl::Status Parser::ParseAttrDict(const OpInfo& info,
                                   absl::Span<const absl::string_view> custom,
                                   std::vector<ParsedAttr>* attrs) {
  KIR_RETURN_IF_ERROR(Expect(Tok::kLBrace));
  do {
    if (!tok().is(Tok::kIdentifier)) return Unexpected("an attribute name");
    const Token name = tok();
    const AttrSpec* spec = info.FindAttr(name.text);
    if (spec == nullptr) {
      bool any = false;
      for (const AttrSpec& candidate : info.attrs) {
        any |= !candidate.positional;
      }
      return ErrorAt(name).Note(
                 Loc(name),
                 any ? absl::StrCat("'", info.mnemonic,
                                    "' takes attributes: ", DescribeAttrs(info))
                     : absl::StrCat("'", info.mnemonic,
                                    "' takes no attributes in braces"))
             << "'" << info.mnemonic << "' has no attribute '" << name.text
             << "'";
    }
    for (absl::string_view custom_name : custom) {
      if (custom_name == spec->name) {
        return ErrorAt(name)
               << "attribute '" << spec->name << "' of '" << info.mnemonic
               << "' is part of its syntax, not of the braces";
      }
    }
    if (spec->positional) {
      return ErrorAt(name) << "attribute '" << spec->name << "' of '"
                           << info.mnemonic
                           << "' is positional: write it right after '"
                           << info.mnemonic << "'";
    }
    for (const ParsedAttr& earlier : *attrs) {
      if (earlier.spec == spec) {
        return ErrorAt(name).Note(Loc(earlier.name), "first given here")
               << "duplicate attribute '" << spec->name << "'";
      }
    }
    Advance();
    ParsedAttr attr;
    attr.spec = spec;
    attr.name = name;
    if (spec->kind == AttrKind::kFlag) {
      if (tok().is(Tok::kEqual)) {
        return ErrorAt(tok())
               << "flag '" << spec->name << "' takes no value; write just '"
               << spec->name << "' to set it";
      }
      attr.value = Attribute::Flag(true);
    } else {
      if (!Consume(Tok::kEqual)) {
        return Unexpected(
            absl::StrCat("'=' and a value for attribute '", spec->name, "'"));
      }
      KIR_RETURN_IF_ERROR(ParseAttrValue(info, *spec, &attr.value));
    }
    attrs->push_back(std::move(attr));
  } while (Consume(Tok::kComma));
  return Expect(Tok::kRBrace, "',' or '}'");
}

absl::Status Parser::CheckRequiredAttrs(const OpInfo& info,
                                        const Token& mnemonic,
                                        const std::vector<ParsedAttr>& attrs) {
  for (const AttrSpec& spec : info.attrs) {
    if (spec.optional || spec.default_value.has_value()) continue;
    bool given = false;
    for (const ParsedAttr& attr : attrs) given |= attr.spec == &spec;
    if (!given) {
      return ErrorAt(mnemonic).Note(
                 Loc(mnemonic),
                 absl::StrCat("'", info.mnemonic,
                              "' takes attributes: ", DescribeAttrs(info)))
             << "'" << info.mnemonic << "' requires attribute '" << spec.name
             << "'";
    }
  }
  return absl::OkStatus();
}

// generic-op      ::= mnemonic positional-attr* operands? attr-dict?
//                     (':' type (',' type)*)?
// positional-attr ::= ident | integer | float
absl::Status Parser::ParseGenericOp(Region& region, const Token& start,
                                    const Token& mnemonic, const OpInfo& info,
                                    Op** result) {
  KIR_RETURN_IF_ERROR(CheckResultNames(info, start, names_));
  attrs_.clear();
  for (const AttrSpec& spec : info.attrs) {
    if (!spec.positional) continue;
    ParsedAttr attr;
    attr.spec = &spec;
    attr.name = tok();
    KIR_RETURN_IF_ERROR(ParseAttrValue(info, spec, &attr.value));
    attrs_.push_back(std::move(attr));
  }
  const size_t first_forward_use = forward_uses_.size();
  OperandList operands;
  KIR_RETURN_IF_ERROR(ParseOperands(info, mnemonic, &operands));
  if (tok().is(Tok::kLBrace))
    KIR_RETURN_IF_ERROR(ParseAttrDict(info, {}, &attrs_));
  KIR_RETURN_IF_ERROR(CheckRequiredAttrs(info, mnemonic, attrs_));
  types_.clear();
  KIR_RETURN_IF_ERROR(ParseResultTypes(
      info, mnemonic, static_cast<int>(names_.size()), &types_));
  Op* op = CreateOp(region, info.kind, start, names_, types_,
                    std::move(operands), attrs_, first_forward_use);
  // An op kind with regions but no custom syntax: its regions follow.
  for (int i = 0; i < info.num_regions; ++i) {
    kernel_->AddRegion(*op);
    KIR_RETURN_IF_ERROR(ParseRegion(op->region(i)));
  }
  *result = op;
  return absl::OkStatus();
}

// for-op ::= 'for' value '=' value 'to' value 'step' value attr-dict? region
absl::Status Parser::ParseFor(Region& region, const Token& start, Op** result) {
  const OpInfo& info = GetOpInfo(OpKind::kFor);
  if (!tok().is(Tok::kValueName)) return Unexpected("the induction variable");
  const Token induction = tok();
  KIR_RETURN_IF_ERROR(CheckNameFree(induction));
  Advance();
  KIR_RETURN_IF_ERROR(Expect(Tok::kEqual, "'='"));
  Value *lower = nullptr, *upper = nullptr, *step = nullptr;
  KIR_RETURN_IF_ERROR(ParseValueUse(&lower, "the lower bound"));
  KIR_RETURN_IF_ERROR(ExpectIdentifier("to"));
  KIR_RETURN_IF_ERROR(ParseValueUse(&upper, "the upper bound"));
  KIR_RETURN_IF_ERROR(ExpectIdentifier("step"));
  KIR_RETURN_IF_ERROR(ParseValueUse(&step, "the step"));
  std::vector<ParsedAttr> attrs;
  if (AtAttrDict(info)) KIR_RETURN_IF_ERROR(ParseAttrDict(info, {}, &attrs));
  Op* op = CreateOp(region, OpKind::kFor, start, {}, {},
                    {Use(lower), Use(upper), Use(step)}, attrs,
                    forward_uses_.size());
  Region& body = kernel_->AddRegion(*op, {Type::Scalar(DType::kIndex)},
                                    {std::string(induction.ValueName())});
  KIR_CHECK(body.argument(0)->name() == induction.ValueName());
  Define(induction, body.argument(0));
  *result = op;
  return ParseRegion(body);
}

// if-op ::= 'if' value attr-dict? region ('else' region)?
absl::Status Parser::ParseIf(Region& region, const Token& start, Op** result) {
  const OpInfo& info = GetOpInfo(OpKind::kIf);
  Value* condition = nullptr;
  KIR_RETURN_IF_ERROR(ParseValueUse(&condition, "the condition"));
  std::vector<ParsedAttr> attrs;
  if (AtAttrDict(info)) KIR_RETURN_IF_ERROR(ParseAttrDict(info, {}, &attrs));
  Op* op = CreateOp(region, OpKind::kIf, start, {}, {}, {Use(condition)}, attrs,
                    forward_uses_.size());
  kernel_->AddRegion(*op);
  kernel_->AddRegion(*op);
  *result = op;
  KIR_RETURN_IF_ERROR(ParseRegion(op->region(0)));
  if (ConsumeIdentifier("else")) {
    KIR_RETURN_IF_ERROR(ParseRegion(op->region(1)));
  }
  return absl::OkStatus();
}

// role-op ::= 'role' '@' ident 'warps' '[' integer ',' integer ')' region
absl::Status Parser::ParseRole(Region& region, const Token& start,
                               Op** result) {
  const OpInfo& info = GetOpInfo(OpKind::kRole);
  KIR_RETURN_IF_ERROR(Expect(Tok::kAt, "'@' and the role name"));
  if (!tok().is(Tok::kIdentifier)) return Unexpected("the role name");
  std::string name(tok().text);
  Advance();
  KIR_RETURN_IF_ERROR(ExpectIdentifier("warps"));
  KIR_RETURN_IF_ERROR(Expect(Tok::kLBracket, "'[' and the first warp"));
  int64_t begin = 0, end = 0;
  KIR_RETURN_IF_ERROR(ParseIntInRange(0, std::numeric_limits<int32_t>::max(),
                                      &begin, "first warp"));
  KIR_RETURN_IF_ERROR(Expect(Tok::kComma));
  KIR_RETURN_IF_ERROR(ParseIntInRange(0, std::numeric_limits<int32_t>::max(),
                                      &end, "end warp"));
  KIR_RETURN_IF_ERROR(Expect(Tok::kRParen, "')' (warp ranges are half-open)"));
  std::vector<ParsedAttr> attrs(3);
  attrs[0].spec = info.FindAttr("name");
  attrs[0].value = Attribute::String(std::move(name));
  attrs[1].spec = info.FindAttr("warp_begin");
  attrs[1].value = Attribute::Int(begin);
  attrs[2].spec = info.FindAttr("warp_end");
  attrs[2].value = Attribute::Int(end);
  Op* op = CreateOp(region, OpKind::kRole, start, {}, {}, {}, attrs,
                    forward_uses_.size());
  kernel_->AddRegion(*op);
  *result = op;
  return ParseRegion(op->region(0));
}

// splitk-op ::= 'splitk' value attr-dict? 'body' region 'epilogue' region
absl::Status Parser::ParseSplitK(Region& region, const Token& start,
                                 const Token& mnemonic, Op** result) {
  const OpInfo& info = GetOpInfo(OpKind::kSplitK);
  OperandList operands;
  const size_t first_forward_use = forward_uses_.size();
  KIR_RETURN_IF_ERROR(ParseOperands(info, mnemonic, &operands));
  std::vector<ParsedAttr> attrs;
  if (tok().is(Tok::kLBrace)) {
    KIR_RETURN_IF_ERROR(ParseAttrDict(info, {}, &attrs));
  }
  KIR_RETURN_IF_ERROR(ExpectIdentifier("body"));
  Op* op = CreateOp(region, OpKind::kSplitK, start, {}, {}, std::move(operands),
                    attrs, first_forward_use);
  kernel_->AddRegion(*op);
  kernel_->AddRegion(*op);
  *result = op;
  KIR_RETURN_IF_ERROR(ParseRegion(op->region(0)));
  KIR_RETURN_IF_ERROR(ExpectIdentifier("epilogue"));
  return ParseRegion(op->region(1));
}

// ptx-op ::= 'ptx' string '(' (value (',' value)*)? ')'
//            ('reads' '(' value (',' value)* ')')?
//            ('writes' '(' value (',' value)* ')')?
//            attr-dict? (':' type (',' type)*)?
absl::Status Parser::ParsePtx(Region& region, const Token& start,
                              const Token& mnemonic, Op** result) {
  const OpInfo& info = GetOpInfo(OpKind::kPtx);
  const std::vector<Token>& names = names_;  // ptx has no nested ops
  std::vector<ParsedAttr> attrs;
  attrs.emplace_back();
  attrs.back().spec = info.FindAttr("text");
  attrs.back().name = tok();
  std::string text;
  KIR_RETURN_IF_ERROR(ParseString(&text, "the PTX text as a string"));
  attrs.back().value = Attribute::String(std::move(text));

  OperandList operands;
  KIR_RETURN_IF_ERROR(Expect(Tok::kLParen, "'(' and the PTX inputs"));
  if (!tok().is(Tok::kRParen)) {
    do {
      Value* input = nullptr;
      KIR_RETURN_IF_ERROR(ParseValueUse(&input, "an input value"));
      operands.push_back(Use(input));
    } while (Consume(Tok::kComma));
  }
  KIR_RETURN_IF_ERROR(Expect(Tok::kRParen, "',' or ')'"));
  for (absl::string_view clause : {"reads", "writes"}) {
    if (!tok().IsIdentifier(clause)) continue;
    Advance();
    KIR_RETURN_IF_ERROR(Expect(Tok::kLParen));
    int64_t count = 0;
    do {
      Value* buffer = nullptr;
      KIR_RETURN_IF_ERROR(ParseValueUse(&buffer, "a buffer"));
      operands.push_back(Use(buffer));
      ++count;
    } while (Consume(Tok::kComma));
    KIR_RETURN_IF_ERROR(Expect(Tok::kRParen, "',' or ')'"));
    attrs.emplace_back();
    attrs.back().spec = info.FindAttr(clause);
    attrs.back().value = Attribute::Int(count);
  }
  static constexpr absl::string_view kCustom[] = {"text", "reads", "writes"};
  if (tok().is(Tok::kLBrace)) {
    KIR_RETURN_IF_ERROR(ParseAttrDict(info, kCustom, &attrs));
  }
  std::vector<Type> types;
  KIR_RETURN_IF_ERROR(
      ParseResultTypes(info, mnemonic, static_cast<int>(names.size()), &types));
  *result = CreateOp(region, OpKind::kPtx, start, names, types,
                     std::move(operands), attrs, forward_uses_.size());
  return absl::OkStatus();
}

// provenance ::= 'loc' '(' 'inserted' string ('for' line-col (',' line-col)*)?
//                ')'
// line-col   ::= integer ':' integer
absl::Status Parser::ParseProvenance(Op& op) {
  KIR_RETURN_IF_ERROR(ExpectIdentifier("loc"));
  KIR_RETURN_IF_ERROR(Expect(Tok::kLParen));
  KIR_RETURN_IF_ERROR(ExpectIdentifier("inserted"));
  Provenance provenance;
  const Token pass = tok();
  KIR_RETURN_IF_ERROR(
      ParseString(&provenance.pass, "the pass name as a string"));
  if (provenance.pass.empty()) {
    return ErrorAt(pass) << "the pass name must not be empty";
  }
  if (ConsumeIdentifier("for")) {
    do {
      int64_t line = 0, column = 0;
      KIR_RETURN_IF_ERROR(ParseIntInRange(
          0, std::numeric_limits<int32_t>::max(), &line, "line"));
      KIR_RETURN_IF_ERROR(Expect(Tok::kColon, "':' and a column"));
      KIR_RETURN_IF_ERROR(ParseIntInRange(
          0, std::numeric_limits<int32_t>::max(), &column, "column"));
      provenance.because.push_back(
          Loc(static_cast<int>(line), static_cast<int>(column)));
    } while (Consume(Tok::kComma));
  }
  KIR_RETURN_IF_ERROR(Expect(Tok::kRParen, "',' or ')'"));
  op.set_provenance(std::move(provenance));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> ParseModule(
    std::shared_ptr<const SourceFile> source) {
  KIR_CHECK(source != nullptr);
  Parser parser(std::move(source));
  return parser.Parse();
}

absl::StatusOr<std::unique_ptr<Module>> ParseModuleString(
    absl::string_view text, absl::string_view name) {
  auto source = std::make_shared<SourceFile>();
  source->name = std::string(name);
  source->text = std::string(text);
  return ParseModule(std::move(source));
}

}  // namespace kir
