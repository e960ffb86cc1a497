// The C++ enums of enum attributes (ir/attrs.def), and their spellings.
//
//   FenceSpace space = op.space();          // typed accessor (ir/ir.h)
//   EnumName(space)                         // "shared_cta"
//   ParseEnum("global", &space)             // true, space == kGlobal
//   for (FenceSpace s : EnumValues<FenceSpace>()) ...
//
// Enumerators are numbered from 0 in declaration order, so a spelling is an
// index into a table and a switch over an enum names every value (the build
// fails on a missing case: -Werror=switch).
#ifndef KIR_IR_ATTRS_H_
#define KIR_IR_ATTRS_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace kir {

// One byte each: effects and attributes hold several.
#define KIR_ENUM(Type) enum class Type : uint8_t {
#define KIR_ENUM_VALUE(Type, enumerator, spelling) enumerator,
#define KIR_ENUM_END(Type) \
  }                        \
  ;
#include "ir/attrs.def"

// The spelling of each enumerator, in order.
template <typename E>
struct EnumTraits;

#define KIR_ENUM(Type)      \
  template <>               \
  struct EnumTraits<Type> { \
    static constexpr const char* kNames[] = {
#define KIR_ENUM_VALUE(Type, enumerator, spelling) spelling,
#define KIR_ENUM_END(Type) \
  }                        \
  ;                        \
  }                        \
  ;
#include "ir/attrs.def"

template <typename E>
constexpr size_t EnumSize() {
  return std::size(EnumTraits<E>::kNames);
}

template <typename E>
const char* EnumName(E value) {
  return EnumTraits<E>::kNames[static_cast<size_t>(value)];
}

// Sets `*value` to the enumerator spelled `text`; false if there is none.
template <typename E>
bool ParseEnum(absl::string_view text, E* value) {
  for (size_t i = 0; i < EnumSize<E>(); ++i) {
    if (text == EnumTraits<E>::kNames[i]) {
      *value = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

// Every enumerator, in order.
template <typename E>
std::array<E, EnumSize<E>()> EnumValues() {
  std::array<E, EnumSize<E>()> values{};
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<E>(i);
  return values;
}

}  // namespace kir

#endif  // KIR_IR_ATTRS_H_
