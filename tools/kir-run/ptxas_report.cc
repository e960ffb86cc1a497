#include "tools/kir-run/ptxas_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "re2/re2.h"

namespace kir {

SpillReport ReadSpillReport(absl::string_view log, absl::string_view symbol,
                            bool from_cache) {
  SpillReport report;
  // "Compiling entry function 'kir_x' ..." then "N bytes spill stores, M
  // bytes spill loads" for each function.
  const std::string entry = absl::StrCat("'", symbol, "'");
  const size_t at = log.find(entry);
  int64_t stores = 0, loads = 0;
  if (at != absl::string_view::npos &&
      RE2::PartialMatch(re2::StringPiece(log.data() + at, log.size() - at),
                        R"((\d+) bytes spill stores, (\d+) bytes spill loads)",
                        &stores, &loads)) {
    report.store_bytes = stores;
    report.load_bytes = loads;
    return report;
  }
  // NVRTC's own cache used to leave the report out (NvrtcOptions::
  // ptxas_report now turns it off); if something else does, the note says
  // what the log held.
  report.missing =
      absl::StrCat("ptxas -v reported no spills for ", entry, " (NVRTC log of ",
                   log.size(), " bytes", from_cache ? ", from the cache" : "",
                   at == absl::string_view::npos ? ", without that entry" : "",
                   ")", log.empty() ? "" : ": ",
                   absl::StrReplaceAll(log.substr(0, 300), {{"\n", " | "}}));
  return report;
}

}  // namespace kir
