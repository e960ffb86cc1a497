// What ptxas's `-v` report (in NVRTC's log) says about one kernel. No CUDA:
// the log is text.
#ifndef KIR_TOOLS_KIR_RUN_PTXAS_REPORT_H_
#define KIR_TOOLS_KIR_RUN_PTXAS_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace kir {

struct SpillReport {
  // Bytes of spill stores and loads of the entry function, when reported.
  std::optional<int64_t> store_bytes, load_bytes;
  // Otherwise why not, with the start of the log, for the bench report.
  std::string missing;
};

// The spills ptxas reported for entry function `symbol` in `log`;
// `from_cache`: the log was read back with a cached cubin (the note says so).
SpillReport ReadSpillReport(absl::string_view log, absl::string_view symbol,
                            bool from_cache);

}  // namespace kir

#endif  // KIR_TOOLS_KIR_RUN_PTXAS_REPORT_H_
