// The analysis cache; see analysis_manager.h.
#include "analysis/analysis_manager.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace kir {

void AnalysisManager::Invalidate(const PreservedAnalyses& preserved) {
  if (preserved.IsAll()) return;
  // In build order, an analysis comes after those it was built from, so one
  // pass drops the dependents of everything dropped before them.
  std::set<AnalysisId> dropped;
  std::vector<AnalysisId> kept;
  for (AnalysisId id : order_) {
    const Concept& entry = *entries_.at(id);
    bool drop = !preserved.IsPreserved(id);
    for (AnalysisId dependency : entry.dependencies) {
      drop = drop || dropped.count(dependency) > 0;
    }
    if (drop) {
      dropped.insert(id);
    } else {
      kept.push_back(id);
    }
  }
  for (AnalysisId id : dropped) entries_.erase(id);
  order_ = std::move(kept);
}

absl::Status AnalysisManager::VerifyCached() {
  AnalysisManager fresh(kernel_);
  for (AnalysisId id : order_) {
    const Concept& entry = *entries_.at(id);
    std::string difference = entry.Difference(fresh);
    if (!difference.empty()) {
      return absl::InternalError(absl::StrCat(
          "the cached ", entry.name(), " of kernel @", kernel_.name(),
          " differs from one built from scratch: ", difference));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> AnalysisManager::CachedNames() const {
  std::vector<std::string> names;
  for (AnalysisId id : order_) names.push_back(entries_.at(id)->name());
  return names;
}

}  // namespace kir
