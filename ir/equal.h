// Structural equality of modules: same kernels, params, launch, ops,
// operands (matched by definition position, not by pointer), attributes,
// types and regions. Names are compared too, since they are part of the
// text; locations are not.
#ifndef KIR_IR_EQUAL_H_
#define KIR_IR_EQUAL_H_

#include <string>

#include "ir/ir.h"

namespace kir {

// On a mismatch returns false and, if `why` is not null, describes the first
// difference.
bool StructurallyEqual(const Module& a, const Module& b,
                       std::string* why = nullptr);

}  // namespace kir

#endif  // KIR_IR_EQUAL_H_
