// The analyses of one kernel, computed on first use and kept until a pass
// changes what they describe (MLIR's analysis manager is the model).
//
// An analysis is a class A with
//   static constexpr char kName[]   its name in reports ("thread-analysis");
//   A(const Kernel&, AnalysisManager&)   or   A(const Kernel&)
//                                   builds it (the first form may Get other
//                                   analyses, which it then depends on);
//   std::string Difference(const A& fresh) const
//                                   "" when `fresh`, built from scratch on
//                                   the same kernel, gives the same answers;
//                                   else the first difference, in words.
//
// A pass gets analyses from its PassContext and says which ones it left
// valid (PreservedAnalyses); the pipeline runner drops the others after the
// pass, and with them every analysis that was built from one of them. A pass
// that keeps an analysis while it changes the kernel updates it itself (an
// inserted barrier: ThreadAnalysis::AddOp); `--verify-analyses` rebuilds
// every kept analysis after each pass and compares, so a wrong claim is an
// error rather than a silently stale answer.
#ifndef KIR_ANALYSIS_ANALYSIS_MANAGER_H_
#define KIR_ANALYSIS_ANALYSIS_MANAGER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "ir/check.h"
#include "ir/ir.h"

namespace kir {

class AnalysisManager;

// One address per analysis type identifies it.
using AnalysisId = const void*;
template <typename A>
AnalysisId AnalysisIdOf() {
  static const char id = 0;
  return &id;
}

// The analyses a pass left valid: none unless it says otherwise.
class PreservedAnalyses {
 public:
  static PreservedAnalyses All() {
    PreservedAnalyses preserved;
    preserved.all_ = true;
    return preserved;
  }
  static PreservedAnalyses None() { return PreservedAnalyses(); }

  template <typename A>
  void Preserve() {
    ids_.insert(AnalysisIdOf<A>());
  }
  void PreserveAll() { all_ = true; }
  bool IsAll() const { return all_; }
  bool IsPreserved(AnalysisId id) const { return all_ || ids_.count(id) > 0; }

 private:
  bool all_ = false;
  std::set<AnalysisId> ids_;
};

// How often an analysis was built and found in the cache, and the time its
// builds took.
struct AnalysisCounts {
  int64_t builds = 0;
  int64_t hits = 0;
  double seconds = 0;
  AnalysisCounts& operator+=(const AnalysisCounts& other) {
    builds += other.builds;
    hits += other.hits;
    seconds += other.seconds;
    return *this;
  }
};

class AnalysisManager {
 public:
  explicit AnalysisManager(const Kernel& kernel) : kernel_(kernel) {}
  AnalysisManager(const AnalysisManager&) = delete;
  AnalysisManager& operator=(const AnalysisManager&) = delete;

  const Kernel& kernel() const { return kernel_; }

  // The analysis, built now unless it is cached.
  template <typename A>
  A& Get() {
    const AnalysisId id = AnalysisIdOf<A>();
    if (!building_.empty()) RecordDependency(id);
    auto it = entries_.find(id);
    if (it != entries_.end()) {
      ++counts_[A::kName].hits;
      return *static_cast<Model<A>&>(*it->second).analysis;
    }
    building_.push_back(id);
    const auto start = std::chrono::steady_clock::now();
    auto model = std::make_unique<Model<A>>(Build<A>());
    const std::chrono::duration<double> took =
        std::chrono::steady_clock::now() - start;
    building_.pop_back();
    AnalysisCounts& counts = counts_[A::kName];
    ++counts.builds;
    counts.seconds += took.count();
    model->dependencies = std::move(pending_dependencies_[id]);
    pending_dependencies_.erase(id);
    A& analysis = *model->analysis;
    entries_[id] = std::move(model);
    order_.push_back(id);
    return analysis;
  }

  // The analysis if it is cached, else null; builds nothing.
  template <typename A>
  A* GetCached() {
    auto it = entries_.find(AnalysisIdOf<A>());
    if (it == entries_.end()) return nullptr;
    return static_cast<Model<A>&>(*it->second).analysis.get();
  }

  // Drops every analysis `preserved` does not name, and every analysis
  // built from a dropped one.
  void Invalidate(const PreservedAnalyses& preserved);
  void InvalidateAll() { Invalidate(PreservedAnalyses::None()); }

  // Rebuilds every cached analysis from scratch and compares its answers
  // with the cached one's; an internal error naming the first that differs.
  absl::Status VerifyCached();

  // Names of the cached analyses, in the order they were built.
  std::vector<std::string> CachedNames() const;

  // Builds and hits since the last call, by analysis name.
  std::map<std::string, AnalysisCounts> TakeCounts() {
    return std::exchange(counts_, {});
  }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual const char* name() const = 0;
    // "" when a fresh build gives the same answers.
    virtual std::string Difference(AnalysisManager& fresh) const = 0;
    std::vector<AnalysisId> dependencies;
  };
  template <typename A>
  struct Model : Concept {
    explicit Model(std::unique_ptr<A> built) : analysis(std::move(built)) {}
    const char* name() const override { return A::kName; }
    std::string Difference(AnalysisManager& fresh) const override {
      return analysis->Difference(fresh.Get<A>());
    }
    std::unique_ptr<A> analysis;
  };

  template <typename A>
  std::unique_ptr<A> Build() {
    if constexpr (std::is_constructible_v<A, const Kernel&, AnalysisManager&>) {
      return std::make_unique<A>(kernel_, *this);
    } else {
      return std::make_unique<A>(kernel_);
    }
  }

  // Records that the analysis being built uses `id`.
  void RecordDependency(AnalysisId id) {
    pending_dependencies_[building_.back()].push_back(id);
  }

  const Kernel& kernel_;
  std::map<AnalysisId, std::unique_ptr<Concept>> entries_;
  std::vector<AnalysisId> order_;  // build order of the cached entries
  std::vector<AnalysisId> building_;
  std::map<AnalysisId, std::vector<AnalysisId>> pending_dependencies_;
  std::map<std::string, AnalysisCounts> counts_;
};

}  // namespace kir

#endif  // KIR_ANALYSIS_ANALYSIS_MANAGER_H_
