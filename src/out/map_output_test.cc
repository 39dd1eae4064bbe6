#include "out/map_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "out/inventory_json.h"

namespace gpupin {
namespace {

using ::testing::HasSubstr;

const Terminal kPlain(false, false, false, false);

class MapOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (uint32_t i = 0; i < 2; ++i) {
      Gpu gpu;
      gpu.index = i;
      gpu.uuid = "GPU-" + std::to_string(i) + "0000000-0000-0000-0000-000000000000";
      gpu.pci_bus_id = "00000000:0" + std::to_string(i + 1) + ":00.0";
      gpu.name = "NVIDIA L40S";
      inventory_.gpus.push_back(gpu);
    }
  }

  MapView View(const std::string& cuda_visible_devices) {
    MapView view;
    view.environment_label = "--env";
    view.env.cuda_visible_devices = cuda_visible_devices;
    view.inventory = &inventory_;
    view.resolution = ResolveVisibleDevices(inventory_.gpus, view.env);
    return view;
  }

  Inventory inventory_;
};

TEST_F(MapOutputTest, TableThenDroppedEntries) {
  std::string text = RenderMap(View("1,7,0"), kPlain);
  EXPECT_THAT(text, ::testing::StartsWith(
                        "--env: CUDA_VISIBLE_DEVICES=\"1,7,0\", CUDA_DEVICE_ORDER=unset\n"
                        "CUDA    GPU  BUS ID            UUID                                      "
                        "NAME\n"
                        "cuda:0    1  00000000:02:00.0  GPU-10000000-0000-0000-0000-000000000000  "
                        "NVIDIA L40S\n"
                        "dropped:\n"
                        "  entry 1 \"7\": no such index ("));
  EXPECT_THAT(text, HasSubstr("  entry 2 \"0\": after an invalid entry ("));
}

TEST_F(MapOutputTest, AskedOrdinalShowsOnlyThatDevice) {
  MapView view = View("0,1");
  view.asked_ordinal = 1;
  std::string text = RenderMap(view, kPlain);
  EXPECT_THAT(text, HasSubstr("cuda:1    1  "));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("cuda:0")));
  nlohmann::ordered_json json = MapToJson(view);
  ASSERT_EQ(json["devices"].size(), 1u);
  EXPECT_EQ(json["devices"][0]["cuda_ordinal"], 1);
}

TEST_F(MapOutputTest, JsonHasTheSchemaFields) {
  nlohmann::ordered_json json = MapToJson(View("1,7,0"));
  EXPECT_EQ(json["schema_version"], kJsonSchemaVersion);
  EXPECT_EQ(json["cuda_visible_devices"], "1,7,0");
  EXPECT_TRUE(json["cuda_device_order"].is_null());
  EXPECT_EQ(json["order"], "FASTEST_FIRST");
  EXPECT_EQ(json["devices"][0]["gpu_index"], 1);
  EXPECT_EQ(json["devices"][0]["pci_bus_id"], "00000000:02:00.0");
  EXPECT_EQ(json["devices"][0]["token"], "1");
  EXPECT_EQ(json["dropped"][0]["reason"], "no_such_index");
  EXPECT_EQ(json["dropped"][1]["reason"], "after_invalid");
  EXPECT_TRUE(json["probe"].is_null());
  EXPECT_FALSE(json.contains("uses"));
}

TEST_F(MapOutputTest, UsesFlagAGpuThatIsNotVisible) {
  MapView view = View("0");
  view.pid = 4121;
  view.uses = {{4121, 0, std::nullopt, inventory_.gpus[0].uuid, 1ULL << 30, 0},
               {4122, 1, std::nullopt, inventory_.gpus[1].uuid, std::nullopt, std::nullopt}};
  std::string text = RenderMap(view, kPlain);
  EXPECT_THAT(text, HasSubstr("uses:\n  GPU 0 (cuda:0): pid 4121, 1G\n"
                              "  GPU 1 (not visible): pid 4122, memory unknown\n"));
  EXPECT_THAT(text, HasSubstr("warning: GPU 1 is used but is not visible as any cuda:N under the "
                              "environment its process started with: CUDA_VISIBLE_DEVICES was "
                              "changed inside it (os.environ in Python, which /proc does not "
                              "show), or set after CUDA initialised (e.g. after import torch), "
                              "when it no longer counts\n"));
  nlohmann::ordered_json json = MapToJson(view);
  EXPECT_EQ(json["used_but_not_visible"], nlohmann::ordered_json::array({1}));
  EXPECT_TRUE(json["uses"][1]["cuda_ordinal"].is_null());
}

TEST_F(MapOutputTest, ProbeDisagreementIsSaid) {
  MapView view = View("0,1");
  ProbeResult probe;
  probe.status = ProbeStatus::kOk;
  probe.driver_version = 12040;
  probe.devices = {{0, inventory_.gpus[1].uuid, "0000:02:00.0", "NVIDIA L40S", {}},
                   {1, inventory_.gpus[0].uuid, "0000:01:00.0", "NVIDIA L40S", {}}};
  view.libcuda = "libcuda.so.1";
  view.comparison = CompareProbe(view.resolution, probe);
  view.probe = probe;
  std::string text = RenderMap(view, kPlain);
  EXPECT_THAT(text, HasSubstr("driver (libcuda.so.1, CUDA 12.4):\n"));
  EXPECT_THAT(text, HasSubstr("cuda:0    1  0000:02:00.0"));
  EXPECT_THAT(text, HasSubstr("model and driver DISAGREE"));
  nlohmann::ordered_json json = MapToJson(view);
  EXPECT_EQ(json["probe"]["status"], "ok");
  EXPECT_EQ(json["probe"]["agree"], false);
  EXPECT_EQ(json["probe"]["devices"][0]["gpu_index"], 1);
  EXPECT_EQ(json["probe"]["driver_version"], 12040);
}

TEST_F(MapOutputTest, ProbeWithoutAnswerIsNotCompared) {
  MapView view = View("0");
  ProbeResult probe;
  probe.status = ProbeStatus::kUnavailable;
  probe.detail = "cannot load libcuda.so.1";
  view.comparison = CompareProbe(view.resolution, probe);
  view.probe = probe;
  std::string text = RenderMap(view, kPlain);
  EXPECT_THAT(text, HasSubstr("  cannot load libcuda.so.1\n"));
  EXPECT_THAT(text, HasSubstr("model and driver: not compared"));
  EXPECT_TRUE(MapToJson(view)["probe"]["agree"].is_null());
}

}  // namespace
}  // namespace gpupin
