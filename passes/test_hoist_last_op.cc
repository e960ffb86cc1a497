// Moves the last top-level op to the front; see test_hoist_last_op.h.
#include "passes/test_hoist_last_op.h"

namespace kir {

absl::Status TestHoistLastOp(Kernel& kernel, const PassOptions& options,
                             PassContext& context) {
  absl::StatusOr<bool> claim_unchanged = options.GetBool("claim-unchanged");
  if (!claim_unchanged.ok()) return claim_unchanged.status();
  // A false claim, to test that the runner skips the verifier after a pass
  // that changed nothing and that --verify-analyses catches the lie.
  if (*claim_unchanged) context.PreserveAll();
  Region& body = kernel.body();
  if (body.size() < 2) return absl::OkStatus();
  body.Insert(0, body.Take(body.size() - 1));
  context.stats.Add("ops-moved");
  return absl::OkStatus();
}

}  // namespace kir
