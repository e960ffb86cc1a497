// Tests for counting the async groups a wait may leave pending.
#include "analysis/async_groups.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "parser/parser.h"

namespace kir {
namespace {

// Parses one kernel whose body is `body` and returns the pending count of
// every wait, in program order.
std::vector<std::optional<int>> PendingCounts(absl::string_view body) {
  std::string text = absl::StrCat(R"(
kernel @k sizes(%N) (%g: global f32[%N, 64], %map: tensormap f32[32, 64] of %g)
    block(128) {
  %c0 = const 0 : index
  %c1 = const 1 : index
  %c4 = const 4 : index
  %tx = thread.id x : index
  %p = cmp lt %tx, %c1 : i1
  %s = alloc.shared : shared f32[32, 64]
)",
                                  body, "\n}\n");
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleString(text);
  EXPECT_TRUE(module.ok()) << module.status();
  std::vector<std::optional<int>> counts;
  if (!module.ok()) return counts;
  Walk((*module)->kernels[0]->body(), [&](const Op& op) {
    if (op.kind() == OpKind::kBulkWait || op.kind() == OpKind::kWgmmaWait ||
        op.kind() == OpKind::kCpAsyncWait) {
      counts.push_back(PendingGroupsAfterWait(op));
    }
  });
  return counts;
}

using Counts = std::vector<std::optional<int>>;
constexpr std::nullopt_t kUnknown = std::nullopt;

// Groups committed by loops with huge trip counts: the count overflows
// int64 (it used to, undefined, in `trips * body` and the sums) and is
// unknown instead; a count that fits is exact.
TEST(AsyncGroupsTest, CountsThatOverflowAreUnknown) {
  EXPECT_EQ(PendingCounts(R"(
  %big = const 4611686018427387904 : index
  %t0 = bulk.commit : token<bulk>
  for %i = %c0 to %big step %c1 {
    for %j = %c0 to %c4 step %c1 {
      %u = bulk.commit : token<bulk>
    }
  }
  bulk.wait %t0
  %t1 = bulk.commit : token<bulk>
  for %k = %c0 to %big step %c1 {
    %v = bulk.commit : token<bulk>
  }
  bulk.wait %t1
)"),
            (Counts{kUnknown, 1 << 30}));
}

TEST(AsyncGroupsTest, StraightLine) {
  EXPECT_EQ(PendingCounts(R"(
  %t0 = bulk.commit : token<bulk>
  %t1 = bulk.commit : token<bulk>
  %t2 = bulk.commit : token<bulk>
  bulk.wait %t0
  bulk.wait %t2
  bulk.wait %t0, %t1
  %t3 = bulk.commit : token<bulk>
  bulk.wait %t1 {read}
)"),
            (Counts{2, 0, 1, 2}));
}

TEST(AsyncGroupsTest, OtherKindsDoNotCount) {
  EXPECT_EQ(PendingCounts(R"(
  %t = bulk.commit : token<bulk>
  %w = wgmma.commit : token<wgmma>
  %c = cp.async.commit : token<cp_async>
  bulk.wait %t
  wgmma.wait %w
  cp.async.wait %c
)"),
            (Counts{0, 0, 0}));
}

TEST(AsyncGroupsTest, DistanceOneOneCommitPerIteration) {
  EXPECT_EQ(PendingCounts(R"(
  for %i = %c0 to %N step %c1 {
    tma.store %map[%i, %c0], %s[%c0, %c0]
    %t = bulk.commit : token<bulk>
    bulk.wait %t@1 {read}
  }
  for %j = %c0 to %N step %c1 {
    bulk.wait %u@1 {read}
    tma.store %map[%j, %c0], %s[%c0, %c0]
    %u = bulk.commit : token<bulk>
  }
)"),
            (Counts{1, 0}));
}

TEST(AsyncGroupsTest, DistanceTwoAndTwoCommitsPerIteration) {
  EXPECT_EQ(PendingCounts(R"(
  for %i = %c0 to %N step %c1 {
    %a = bulk.commit : token<bulk>
    %b = bulk.commit : token<bulk>
    bulk.wait %a@1
    bulk.wait %b@1
    bulk.wait %a@2
    bulk.wait %b@2
    bulk.wait %a
    bulk.wait %a@1, %b@2
  }
  for %j = %c0 to %N step %c1 {
    cp.async %s[%c0, %c0], %g[%j, %c0]
    %c = cp.async.commit : token<cp_async>
    cp.async.wait %c@2
  }
)"),
            (Counts{3, 2, 5, 4, 1, 3, 2}));
}

TEST(AsyncGroupsTest, UseAfterLoopNamesTheLastInstance) {
  EXPECT_EQ(PendingCounts(R"(
  for %i = %c0 to %N step %c1 {
    %t = bulk.commit : token<bulk>
    %later = bulk.commit : token<bulk>
  }
  bulk.wait %later
  bulk.wait %t
  %after = bulk.commit : token<bulk>
  bulk.wait %t
)"),
            (Counts{0, 1, 2}));
}

TEST(AsyncGroupsTest, NestedLoopsAndWaitInLaterLoop) {
  EXPECT_EQ(PendingCounts(R"(
  %t = bulk.commit : token<bulk>
  for %i = %c0 to %c4 step %c1 {
    %u = bulk.commit : token<bulk>
  }
  bulk.wait %t
  for %j = %c0 to %N step %c1 {
    %v = bulk.commit : token<bulk>
    bulk.wait %t
  }
  for %k = %c0 to %N step %c1 {
    %w = bulk.commit : token<bulk>
  }
  bulk.wait %t
)"),
            // The wait inside the loop sees the fewest commits in its first
            // iteration: 4 from the constant loop, 1 of its own.
            (Counts{4, 5, kUnknown}));
}

TEST(AsyncGroupsTest, ConditionalCommitsBetweenAreUnknown) {
  EXPECT_EQ(PendingCounts(R"(
  %t = bulk.commit : token<bulk>
  if %p {
    %u = bulk.commit : token<bulk>
  }
  bulk.wait %t
  %t2 = bulk.commit : token<bulk>
  if %p {
    %v = bulk.commit : token<bulk>
  } else {
    %w = bulk.commit : token<bulk>
  }
  bulk.wait %t2
  %t3 = bulk.commit : token<bulk>
  if %p {
    fence.acq_rel gpu
  }
  bulk.wait %t3
)"),
            (Counts{kUnknown, 1, 0}));
}

TEST(AsyncGroupsTest, CommitAndWaitUnderTheSameGuard) {
  EXPECT_EQ(PendingCounts(R"(
  for %i = %c0 to %N step %c1 {
    if %p {
      tma.store %map[%i, %c0], %s[%c0, %c0]
      %t = bulk.commit : token<bulk>
      bulk.wait %t@1 {read}
    }
  }
  for %j = %c0 to %N step %c1 {
    if %p {
      %u = bulk.commit : token<bulk>
    }
    if %p {
      bulk.wait %u@2
    }
  }
  for %k = %c0 to %N step %c1 {
    %q = cmp lt %k, %c4 : i1
    if %q {
      %v = bulk.commit : token<bulk>
      bulk.wait %v@1
      bulk.wait %v@2
    }
  }
)"),
            // %p is the same in every iteration, so the guarded commit runs
            // in the iterations in between too; %q may change.
            (Counts{1, 2, 1, kUnknown}));
}

TEST(AsyncGroupsTest, InvalidReferencesAreUnknown) {
  EXPECT_EQ(PendingCounts(R"(
  %t = bulk.commit : token<bulk>
  bulk.wait %t@1
  for %i = %c0 to %N step %c1 {
    %u = bulk.commit : token<bulk>
  }
  bulk.wait %u@1
)"),
            (Counts{kUnknown, kUnknown}));
}

TEST(AsyncGroupsTest, SplitKBodyRunsBeforeItsEpilogue) {
  EXPECT_EQ(PendingCounts(R"(
  %acc = alloc.reg : reg f32[4]
  splitk %acc body {
    %t = bulk.commit : token<bulk>
    %t2 = bulk.commit : token<bulk>
  } epilogue {
    %u = bulk.commit : token<bulk>
    bulk.wait %t
  }
)"),
            (Counts{2}));
}

TEST(AsyncGroupsTest, WaitBeforeItsCommitIsUnknown) {
  Kernel kernel("k");
  OpBuilder builder(kernel.body());
  Op* wait = builder.Create(OpKind::kBulkWait, {});
  Value* token = builder
                     .Create(OpKind::kBulkCommit, {}, {},
                             {Type::Token(TokenKind::kBulk)}, {"t"})
                     ->result();
  wait->mutable_operands().push_back(Use(token));
  EXPECT_EQ(PendingGroupsAfterWait(*wait), std::nullopt);
  // A wait of the wrong kind for its token.
  Op* wrong = builder.Create(OpKind::kWgmmaWait, {Use(token)});
  EXPECT_EQ(PendingGroupsAfterWait(*wrong), std::nullopt);
  // Not a wait at all.
  EXPECT_EQ(PendingGroupsAfterWait(*token->defining_op()), std::nullopt);
}

}  // namespace
}  // namespace kir
