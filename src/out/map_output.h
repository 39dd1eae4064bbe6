// The answer of `gpupin map`, as a table for people and as JSON (schema in
// doc/commands.md). Pure rendering: cli/map gathers the values.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda_visible.h"
#include "core/gpu.h"
#include "core/gpu_use.h"
#include "core/probe_comparison.h"
#include "out/terminal.h"

namespace gpupin {

struct MapView {
  // Whose environment: "this shell's environment", "--env", "pid 4121 (python train.py)".
  std::string environment_label;
  VisibilityEnv env;
  const Inventory* inventory = nullptr;  // never null when rendered
  Resolution resolution;                 // gpupin's model of the CUDA runtime
  std::optional<int> asked_ordinal;      // `map cuda:N`: show only that device
  // For --pid: the process and what NVML lists it (and its descendants) on.
  std::optional<int> pid;
  std::vector<GpuUse> uses;
  std::vector<uint32_t> unknown_process_gpus;  // GPUs whose process lists NVML would not give
  // For --probe: the driver's own answer and how the model compares.
  std::optional<std::string> libcuda;
  std::optional<ProbeResult> probe;
  std::optional<ProbeComparison> comparison;
};

std::string RenderMap(const MapView& view, const Terminal& terminal);
nlohmann::ordered_json MapToJson(const MapView& view);

// A stable JSON id for a drop reason: "no_such_index", "duplicate", ...
const char* DropReasonId(DropReason reason);

}  // namespace gpupin
