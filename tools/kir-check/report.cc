#include "tools/kir-check/report.h"

#include "absl/strings/str_cat.h"

namespace kir::check {

const char* HazardKindName(HazardKind kind) {
  switch (kind) {
    case HazardKind::kRace:
      return "race";
    case HazardKind::kProxy:
      return "proxy";
    case HazardKind::kEarlyRead:
      return "early-read";
    case HazardKind::kSourceOverwritten:
      return "source-overwritten";
    case HazardKind::kAsyncRace:
      return "async-race";
    case HazardKind::kEarlyRelease:
      return "early-release";
    case HazardKind::kPartialCollective:
      return "partial-collective";
    case HazardKind::kMultipleIssue:
      return "multiple-issue";
    case HazardKind::kMbarrierCount:
      return "mbarrier-count";
    case HazardKind::kBarrierCount:
      return "barrier-count";
    case HazardKind::kMbarrierInit:
      return "mbarrier-init";
    case HazardKind::kRegister:
      return "register";
    case HazardKind::kPendingAtExit:
      return "pending-at-exit";
    case HazardKind::kDeadlock:
      return "deadlock";
    case HazardKind::kOutput:
      return "output";
  }
  return "?";
}

void HazardLog::Add(Hazard hazard) {
  const auto key = std::make_tuple(static_cast<int>(hazard.kind), hazard.op,
                                   hazard.other, hazard.key);
  auto found = index_.find(key);
  if (found != index_.end()) {
    hazards_[found->second].occurrences += hazard.occurrences;
    return;
  }
  index_.emplace(key, hazards_.size());
  hazards_.push_back(std::move(hazard));
}

void HazardLog::Merge(const HazardLog& other) {
  for (const Hazard& hazard : other.hazards_) Add(hazard);
}

Diagnostic RenderHazard(const Hazard& hazard, const Kernel& kernel,
                        const std::string& suffix) {
  Diagnostic diagnostic;
  diagnostic.severity = Severity::kError;
  diagnostic.loc = hazard.op != nullptr ? hazard.op->loc() : kernel.loc();
  diagnostic.message = absl::StrCat("[", HazardKindName(hazard.kind), "] ",
                                    hazard.message, suffix);
  if (hazard.other != nullptr) {
    Diagnostic note;
    note.severity = Severity::kNote;
    note.loc = hazard.other->loc();
    note.message = hazard.note;
    diagnostic.notes.push_back(std::move(note));
  }
  for (const auto& [op, text] : hazard.extra_notes) {
    Diagnostic note;
    note.severity = Severity::kNote;
    note.loc = op != nullptr ? op->loc() : kernel.loc();
    note.message = text;
    diagnostic.notes.push_back(std::move(note));
  }
  return diagnostic;
}

}  // namespace kir::check
