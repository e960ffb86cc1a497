#include "tools/kir-check/cpu_reference.h"

#include <cmath>
#include <memory>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tools/kir-check/values.h"

namespace kir::check {
namespace {

InputInit Init(InputInit::Kind kind, uint64_t seed, double first,
               double second) {
  InputInit init;
  init.kind = kind;
  init.seed = seed;
  init.first = first;
  init.second = second;
  return init;
}

TEST(InitializeTensor, RandintGivesIntegersInRangeWhateverTheLayout) {
  TensorData row = MakeTensor(DType::kBF16, {16, 8}, RowMajorStrides({16, 8}));
  TensorData column = MakeTensor(DType::kBF16, {16, 8}, {1, 16});
  const InputInit init = Init(InputInit::Kind::kRandInt, 5, -3, 2);
  InitializeTensor(row, init);
  InitializeTensor(column, init);
  const DenseF32 a = TensorToF32(row), b = TensorToF32(column);
  int seen[6] = {};
  for (size_t i = 0; i < a.values.size(); ++i) {
    EXPECT_EQ(a.values[i], b.values[i]);  // element i is the same value
    EXPECT_EQ(a.values[i], std::floor(a.values[i]));
    EXPECT_GE(a.values[i], -3);
    EXPECT_LE(a.values[i], 2);
    ++seen[static_cast<int>(a.values[i]) + 3];
  }
  for (int count : seen) EXPECT_GT(count, 0);  // every value occurs
}

TEST(InitializeTensor, IotaFillAndNormalAreStoredRoundedToTheType) {
  TensorData t = MakeTensor(DType::kI32, {5}, {1});
  InitializeTensor(t, Init(InputInit::Kind::kIota, 0, 1, 0.5));
  const DenseF32 v = TensorToF32(t);
  // rint of 1, 1.5, 2, 2.5, 3: ties to even.
  EXPECT_EQ(v.values, (std::vector<float>{1, 2, 2, 2, 3}));
  TensorData n = MakeTensor(DType::kF32, {1000}, {1});
  InitializeTensor(n, Init(InputInit::Kind::kNormal, 1, 0, 1));
  const DenseF32 w = TensorToF32(n);
  double mean = 0, square = 0;
  for (float x : w.values) {
    mean += x;
    square += x * x;
  }
  mean /= 1000;
  square /= 1000;
  EXPECT_NEAR(mean, 0, 0.15);
  EXPECT_NEAR(square, 1, 0.2);
}

TEST(EvaluateReference, MatmulTransposeAndRounding) {
  DenseF32 a{{2, 3}, {1, 2, 3, 4, 5, 6}};
  DenseF32 b{{2, 3}, {1, 0, -1, 2, 1, 0}};
  auto name = [&](const char* n) {
    auto e = std::make_unique<RefExpr>();
    e->kind = RefExpr::Kind::kName;
    e->name = n;
    return e;
  };
  RefExpr transpose;
  transpose.kind = RefExpr::Kind::kTranspose;
  transpose.operands.push_back(name("b"));
  RefExpr matmul;
  matmul.kind = RefExpr::Kind::kMatmul;
  matmul.operands.push_back(name("a"));
  matmul.operands.push_back(std::make_unique<RefExpr>(std::move(transpose)));
  auto lookup = [&](const std::string& n) -> absl::StatusOr<DenseF32> {
    return n == "a" ? a : b;
  };
  absl::StatusOr<DenseF32> product = EvaluateReference(matmul, lookup);
  ASSERT_TRUE(product.ok()) << product.status();
  EXPECT_EQ(product->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(product->values, (std::vector<float>{-2, 4, -2, 13}));
}

TEST(CompareOutput, NanMatchesOnlyNanAndReportsTheFirstDifference) {
  TensorData got = MakeTensor(DType::kF32, {2, 2}, {2, 1});
  const float values[4] = {1, NAN, 3, 4.5f};
  for (int i = 0; i < 4; ++i)
    StoreLane(DType::kF32, F32ToLane(DType::kF32, values[i]),
              &got.bytes[4 * i]);
  DenseF32 expected{{2, 2}, {1, NAN, 3, 4}};
  absl::StatusOr<OutputComparison> exact =
      CompareOutput(got, expected, true, 0, 0);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->mismatches, 1);
  EXPECT_EQ(exact->first_bad_index, (std::vector<int64_t>{1, 1}));
  absl::StatusOr<OutputComparison> close =
      CompareOutput(got, expected, false, 0.2, 0);
  ASSERT_TRUE(close.ok());
  EXPECT_EQ(close->mismatches, 0);
}

}  // namespace
}  // namespace kir::check
