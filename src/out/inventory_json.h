// The stable JSON form of the inventory (`gpupin --json ls`), documented in
// doc/json.md. Numbers in base units (bytes, percent, milliwatts, °C); null
// for what the driver does not support.
#pragma once

#include <nlohmann/json.hpp>

#include "core/gpu.h"

namespace gpupin {

// Bumped on any incompatible change to the JSON of any command.
inline constexpr int kJsonSchemaVersion = 1;

nlohmann::ordered_json GpuToJson(const Gpu& gpu);
nlohmann::ordered_json InventoryToJson(const Inventory& inventory);

const char* ComputeModeName(ComputeMode mode);

}  // namespace gpupin
