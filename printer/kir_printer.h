// Prints a Module in the kir text format (see ir/language.md). The output
// parses back to a structurally equal module, and printing is deterministic:
// it depends only on program order and value names.
#ifndef KIR_PRINTER_KIR_PRINTER_H_
#define KIR_PRINTER_KIR_PRINTER_H_

#include <string>

#include "ir/ir.h"

namespace kir {

struct PrintOptions {
  // Print `loc(inserted "pass" for L:C, ...)` on ops a pass inserted.
  bool provenance = false;
  // Append `// pending: N` to each wait: the groups it leaves in flight.
  bool pending_counts = false;
};

std::string PrintModule(const Module& module, const PrintOptions& options = {});
std::string PrintKernel(const Kernel& kernel, const PrintOptions& options = {});
// One op (and its regions) at the given indentation depth, without newline
// at the end; for diagnostics and --print-effects.
std::string PrintOp(const Op& op, const PrintOptions& options = {},
                    int indent = 0);

}  // namespace kir

#endif  // KIR_PRINTER_KIR_PRINTER_H_
