// Checks the invariants every kernel must satisfy, after parsing and after
// every pass. Rules are numbered V1..Vn below; each diagnostic names its rule
// ("[V7] ...") and each rule has an invalid golden in testdata/verifier/.
//
// (The rule list is maintained with the implementation.)
#ifndef KIR_IR_VERIFIER_H_
#define KIR_IR_VERIFIER_H_

#include "absl/status/status.h"
#include "ir/ir.h"

namespace kir {

// Returns OK or every violation found, joined into one status.
absl::Status Verify(const Kernel& kernel);
absl::Status Verify(const Module& module);

}  // namespace kir

#endif  // KIR_IR_VERIFIER_H_
