#include "out/gpu_table.h"

#include <gtest/gtest.h>

namespace gpupin {
namespace {

std::vector<Gpu> WithUuids(const std::vector<std::string>& uuids) {
  std::vector<Gpu> gpus;
  for (const std::string& uuid : uuids) {
    Gpu gpu;
    gpu.index = static_cast<uint32_t>(gpus.size());
    gpu.uuid = uuid;
    gpus.push_back(gpu);
  }
  return gpus;
}

TEST(ShortUuidTest, EightHexDigitsWhereTheyNameOneCard) {
  const std::vector<Gpu> gpus = WithUuids(
      {"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "GPU-127ba902-3c55-4d1e-9a0b-1c2d3e4f5a6b"});
  EXPECT_EQ(ShortUuid(gpus[0].uuid, gpus), "GPU-8932f937");
  EXPECT_EQ(ShortUuid(gpus[0].uuid), "GPU-8932f937");
  EXPECT_EQ(ShortUuid("not-a-uuid"), "not-a-uuid");
  EXPECT_EQ(ShortUuid("GPU-12"), "GPU-12");
  EXPECT_EQ(ShortUuid("0123456789abcdef"), "0123456789abcdef") << "no dash: whole";
}

TEST(ShortUuidTest, LongerWhereAnotherCardStartsAlike) {
  const std::vector<Gpu> gpus =
      WithUuids({"GPU-6a4dda00-fd18-6083-1353-fe9b8a2114f2",
                 "GPU-6a4dda00-fd18-7000-1353-fe9b8a2114f2", "GPU-6a4dda01-0000-0000-0000-0000"});
  // Past the dash: a prefix never ends in one.
  EXPECT_EQ(ShortUuid(gpus[0].uuid, gpus), "GPU-6a4dda00-fd18-6");
  EXPECT_EQ(ShortUuid(gpus[1].uuid, gpus), "GPU-6a4dda00-fd18-7");
  EXPECT_EQ(ShortUuid(gpus[2].uuid, gpus), "GPU-6a4dda01");
}

TEST(ShortUuidTest, CardsThatStartAlikeInAnyCaseAreToldApart) {
  // --only matches a UUID whatever its case, so the prefix must name one
  // card whatever the case of the other cards' UUIDs.
  const std::vector<Gpu> gpus = WithUuids(
      {"GPU-6a4dda00-fd18-6083-1353-fe9b8a2114f2", "GPU-6A4DDA00-FD18-7000-1353-FE9B8A2114F2"});
  EXPECT_EQ(ShortUuid(gpus[0].uuid, gpus), "GPU-6a4dda00-fd18-6");
  EXPECT_EQ(ShortUuid(gpus[1].uuid, gpus), "GPU-6A4DDA00-FD18-7");
  // A lease's card is the one of its exact UUID: another case of a present
  // card's UUID names no card here, so it is shown whole.
  EXPECT_EQ(ShortUuid("GPU-6A4DDA00-FD18-6083-1353-FE9B8A2114F2", gpus),
            "GPU-6A4DDA00-FD18-6083-1353-FE9B8A2114F2");
}

}  // namespace
}  // namespace gpupin
