// Parsing and lowering for the kir-check driver: the one place the tool
// reaches the passes, through the compile path kir-opt and kir-run share
// (tools/compile), to produce the kernels it then checks. The checker
// itself (kir_check_core) never uses them.
#ifndef KIR_TOOLS_KIR_CHECK_LOWER_H_
#define KIR_TOOLS_KIR_CHECK_LOWER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ir/ir.h"

namespace kir::check {

// The file at `path` as a source (named by the path); null if unreadable.
std::shared_ptr<SourceFile> ReadSourceFile(const std::string& path);

// Parses and verifies `source`, then runs `pipeline` over it ("" runs no
// pass; "default" is the default pipeline), verifying after each pass.
// `verify` false skips the verifier (no pipeline may run then): to check a
// kernel the verifier rejects, such as a collective under a divergent
// condition, and see what goes wrong.
absl::StatusOr<std::unique_ptr<Module>> ParseAndLower(
    const std::shared_ptr<const SourceFile>& source,
    const std::string& pipeline, bool verify = true);

}  // namespace kir::check

#endif  // KIR_TOOLS_KIR_CHECK_LOWER_H_
