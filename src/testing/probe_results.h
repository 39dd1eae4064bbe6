// What a CUDA probe reports, built for tests of the code that reads it.
// Header-only: test code, never part of gpupin_lib.
#pragma once

#include <string>
#include <vector>

#include "core/probe_comparison.h"

namespace gpupin::testing {

// A driver that initialised and listed one device per UUID, in this order.
inline ProbeResult DriverListing(const std::vector<std::string>& uuids) {
  ProbeResult probe;
  probe.status = ProbeStatus::kOk;
  for (size_t i = 0; i < uuids.size(); ++i) {
    ProbedDevice device;
    device.ordinal = static_cast<int>(i);
    device.uuid = uuids[i];
    probe.devices.push_back(device);
  }
  return probe;
}

}  // namespace gpupin::testing
