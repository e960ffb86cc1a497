// Fails at a chosen op; see test_fail.h.
#include "passes/test_fail.h"

#include <string>

#include "absl/status/statusor.h"
#include "ir/diagnostics.h"

namespace kir {

absl::Status TestFail(Kernel& kernel, const PassOptions& options,
                      PassContext& context) {
  absl::StatusOr<std::string> mnemonic = options.GetString("op");
  if (!mnemonic.ok()) return mnemonic.status();
  const Op* target = nullptr;
  Walk(static_cast<const Region&>(kernel.body()), [&](const Op& op) {
    if (target == nullptr &&
        (mnemonic->empty() || op.mnemonic() == *mnemonic)) {
      target = &op;
    }
  });
  if (target == nullptr) return absl::OkStatus();
  return Error(target->loc())
         << "test-fail: failing at '" << target->mnemonic() << "' as asked";
}

}  // namespace kir
