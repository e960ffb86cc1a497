// A pass that fails on purpose, to test error reporting and reproducers.
//
// Pass: test-fail
// Requires: nothing.
// Ensures: fails with a located error at the first op (program order) whose
//   mnemonic is the `op` option; with `op` empty, at the kernel's first op.
//   Succeeds without changes when there is no such op.
#ifndef KIR_PASSES_TEST_FAIL_H_
#define KIR_PASSES_TEST_FAIL_H_

#include "absl/status/status.h"
#include "ir/ir.h"
#include "passes/pass.h"

namespace kir {

absl::Status TestFail(Kernel& kernel, const PassOptions& options,
                      PassContext& context);

}  // namespace kir

#endif  // KIR_PASSES_TEST_FAIL_H_
