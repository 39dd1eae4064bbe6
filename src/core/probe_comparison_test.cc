#include "core/probe_comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/probe_results.h"

namespace gpupin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

Resolution Model(std::vector<std::string> uuids, bool guess = false) {
  Resolution model;
  for (size_t i = 0; i < uuids.size(); ++i) {
    VisibleDevice device;
    device.ordinal = static_cast<int>(i);
    device.gpu_index = static_cast<uint32_t>(i);
    device.uuid = uuids[i];
    model.visible.push_back(device);
  }
  model.order_is_guess = guess;
  return model;
}

constexpr char kA[] = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6";
constexpr char kB[] = "GPU-11111111-d72c-4106-c12f-20bd9faed9f6";

TEST(ProbeComparisonTest, SameDevicesInSameOrderAgree) {
  const ProbeComparison c = CompareProbe(Model({kA, kB}), testing::DriverListing({kA, kB}));
  EXPECT_TRUE(c.comparable);
  EXPECT_TRUE(c.agree);
  EXPECT_TRUE(c.differences.empty());
}

TEST(ProbeComparisonTest, ACardNvmlCannotReadIsUncheckedNotADisagreement) {
  const ProbeComparison c = CompareProbe(Model({"", kB}), testing::DriverListing({kA, kB}));
  EXPECT_TRUE(c.comparable);
  EXPECT_TRUE(c.agree);
  EXPECT_TRUE(c.differences.empty());
  EXPECT_THAT(c.unchecked,
              ElementsAre(std::string("cuda:0: NVML cannot read GPU 0 (lost?), so the driver's ") +
                          kA + " is not checked against it"));
  // The cards NVML can read are still compared.
  EXPECT_FALSE(CompareProbe(Model({"", kB}), testing::DriverListing({kA, kA})).agree);
  // And a card the driver has where NVML reads none is no unknown when the
  // model places that card elsewhere.
  const ProbeComparison moved = CompareProbe(Model({"", kB}), testing::DriverListing({kB, kA}));
  EXPECT_FALSE(moved.agree);
  EXPECT_THAT(moved.differences, ::testing::Contains(HasSubstr("cuda:0: gpupin expects GPU 0")));
}

TEST(ProbeComparisonTest, OrderDifferenceIsReportedPerOrdinal) {
  const ProbeComparison c = CompareProbe(Model({kA, kB}, true), testing::DriverListing({kB, kA}));
  EXPECT_FALSE(c.agree);
  ASSERT_EQ(c.differences.size(), 3u);
  EXPECT_THAT(c.differences[0], HasSubstr("was a guess"));
  EXPECT_THAT(c.differences[1], HasSubstr("cuda:0: gpupin expects GPU 0"));
  EXPECT_THAT(c.differences[1], HasSubstr(std::string("the driver has ") + kB));
}

TEST(ProbeComparisonTest, AKeptDriverOrderThatNoLongerHoldsIsNamed) {
  Resolution model = Model({kA, kB});
  model.order_from_driver = true;
  const ProbeComparison c = CompareProbe(model, testing::DriverListing({kB, kA}));
  EXPECT_FALSE(c.agree);
  EXPECT_THAT(c.differences.front(), HasSubstr("cuda-order-UID.json"));
  const ProbeComparison named =
      CompareProbe(model, testing::DriverListing({kB, kA}), "/run/gpupin/cuda-order-0.json");
  EXPECT_THAT(named.differences.front(),
              HasSubstr("kept in /run/gpupin/cuda-order-0.json, and the driver now numbers "
                        "otherwise: remove that file"));
  const ProbeComparison hostile =
      CompareProbe(model, testing::DriverListing({kB, kA}), "/tmp/\x1b[31m\n/cuda-order-0.json");
  EXPECT_THAT(hostile.differences.front(), HasSubstr("kept in /tmp/?[31m?/cuda-order-0.json"));
}

TEST(ProbeComparisonTest, AKeptDriverOrderAlreadyReplacedNeedsNoRemoval) {
  Resolution model = Model({kA, kB});
  model.order_from_driver = true;
  const ProbeComparison c = CompareProbe(model, testing::DriverListing({kB, kA}),
                                         "/run/gpupin/cuda-order-0.json", /*order_replaced=*/true);
  EXPECT_FALSE(c.agree);
  EXPECT_THAT(c.differences.front(), HasSubstr("gpupin now keeps the driver's new order"));
  EXPECT_THAT(c.differences.front(), Not(HasSubstr("remove")));
}

TEST(ProbeComparisonTest, CountDifference) {
  const ProbeComparison c = CompareProbe(Model({kA}), testing::DriverListing({kA, kB}));
  EXPECT_FALSE(c.agree);
  EXPECT_THAT(c.differences,
              ElementsAre(HasSubstr("expects 1 CUDA device(s), the driver enumerates 2"),
                          HasSubstr("cuda:1: the driver has")));
}

TEST(ProbeComparisonTest, MigUuidMatchesTheDriversBytes) {
  const ProbeComparison c =
      CompareProbe(Model({"MIG-c788539f-c1ea-5a36-8b4d-9b07d024b1bb"}),
                   testing::DriverListing({"GPU-c788539f-c1ea-5a36-8b4d-9b07d024b1bb"}));
  EXPECT_TRUE(c.agree);
}

TEST(ProbeComparisonTest, NoDeviceAnswerAgreesWithAnEmptyModel) {
  ProbeResult probe;
  probe.status = ProbeStatus::kNoDevice;
  EXPECT_TRUE(CompareProbe(Model({}), probe).agree);
  EXPECT_FALSE(CompareProbe(Model({kA}), probe).agree);
}

// Driver 580 answers a repeated device with cuInit failing as
// CUDA_ERROR_INVALID_DEVICE: zero devices, as the model says, for a list the
// model voids; for any other list it is no answer.
TEST(ProbeComparisonTest, InvalidDeviceAtInitAgreesWithAVoidedList) {
  ProbeResult probe;
  probe.status = ProbeStatus::kInitFailed;
  probe.cuda_error = 101;
  probe.detail = "cuInit: CUDA_ERROR_INVALID_DEVICE (101): invalid device ordinal";
  Resolution voided = Model({});
  voided.dropped.push_back({1, "0", kA, DropReason::kDuplicate, "named again"});
  ProbeComparison c = CompareProbe(voided, probe);
  EXPECT_TRUE(c.comparable);
  EXPECT_TRUE(c.agree);
  c = CompareProbe(Model({}), probe);
  EXPECT_FALSE(c.comparable);
  probe.cuda_error = 999;
  EXPECT_FALSE(CompareProbe(voided, probe).comparable);
}

TEST(ProbeComparisonTest, NoAnswerIsNotComparable) {
  ProbeResult probe;
  probe.status = ProbeStatus::kUnavailable;
  probe.detail = "cannot load libcuda.so.1";
  const ProbeComparison c = CompareProbe(Model({kA}), probe);
  EXPECT_FALSE(c.comparable);
  EXPECT_FALSE(c.agree);
  EXPECT_THAT(c.differences, ElementsAre(HasSubstr("cannot load libcuda.so.1")));
}

TEST(ProbeComparisonTest, CudaErrorsAreNamed) {
  EXPECT_EQ(DescribeCudaError(100),
            "CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected");
  EXPECT_EQ(DescribeCudaError(4242), "CUDA error 4242");
}

TEST(SameCudaUuidTest, IgnoresOnlyTheGpuOrMigPrefix) {
  EXPECT_TRUE(SameCudaUuid("GPU-8932f937-d72c", "GPU-8932f937-d72c"));
  EXPECT_TRUE(SameCudaUuid("MIG-8932f937-d72c", "GPU-8932f937-d72c"));
  EXPECT_FALSE(SameCudaUuid("GPU-8932f937-d72c", "GPU-8932f937-d72d"));
  EXPECT_FALSE(SameCudaUuid("GPU-8932f937", "GPU-8932f937-d72c"));
}

}  // namespace
}  // namespace gpupin
