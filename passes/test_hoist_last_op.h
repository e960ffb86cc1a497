// A pass that breaks the IR on purpose, to test --verify-each and the
// reproducer written when verification after a pass fails.
//
// Pass: test-hoist-last-op
// Requires: nothing.
// Ensures: the last op of the kernel body is now the first. When it uses a
//   value defined in the body, the kernel no longer verifies. With
//   claim-unchanged=1 it also says, falsely, that it preserved every
//   analysis.
#ifndef KIR_PASSES_TEST_HOIST_LAST_OP_H_
#define KIR_PASSES_TEST_HOIST_LAST_OP_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "passes/pass.h"

namespace kir {

absl::Status TestHoistLastOp(Kernel& kernel, const PassOptions& options,
                             PassContext& context);

}  // namespace kir

#endif  // KIR_PASSES_TEST_HOIST_LAST_OP_H_
