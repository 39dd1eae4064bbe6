// The stable JSON form of the inventory (`gpupin --json ls`), documented in
// doc/json.md. Numbers in base units (bytes, percent, milliwatts, °C); null
// for what the driver does not support.
#pragma once

#include <nlohmann/json.hpp>

#include "core/gpu.h"
#include "core/gpu_facts.h"

namespace gpupin {

// Bumped on any incompatible change to the JSON of any command.
inline constexpr int kJsonSchemaVersion = 2;

// Only the groups of facts in `facts` (those the snapshot read,
// GpuSource::LastRead): one not read is left out, where null would claim the
// driver does not support it.
nlohmann::ordered_json GpuToJson(const Gpu& gpu, GpuFacts facts);
nlohmann::ordered_json InventoryToJson(const Inventory& inventory, GpuFacts facts);

const char* ComputeModeName(ComputeMode mode);

}  // namespace gpupin
