// What the CUDA driver itself said about device numbering (answered by a
// probe child, sys/cuda_probe.h) and where gpupin's model (cuda_visible.h)
// disagrees with it. Pure: plain values in, plain values out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cuda_visible.h"

namespace gpupin {

enum class ProbeStatus {
  kOk,           // cuInit succeeded and every device was listed
  kNoDevice,     // cuInit answered CUDA_ERROR_NO_DEVICE (100): zero devices, a real answer
  kUnavailable,  // libcuda could not be loaded or lacks a needed symbol: no answer at all
  kInitFailed,   // cuInit or cuDeviceGetCount failed with another code
  kTimedOut,     // the driver did not answer in time; the probe process was killed
  kCrashed,      // the probe process died or sent no complete answer
};

// One CUDA device as the driver enumerates it. A query that failed leaves
// its field empty and adds a line to `errors`.
struct ProbedDevice {
  int ordinal = 0;
  std::optional<std::string> uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", from 16 raw bytes
  std::optional<std::string> pci_bus_id;
  std::optional<std::string> name;
  std::vector<std::string> errors;
};

struct ProbeResult {
  ProbeStatus status = ProbeStatus::kUnavailable;
  std::string detail;                 // one line when status is not kOk: what failed and why
  std::optional<int> cuda_error;      // CUresult of the call that failed
  std::optional<int> driver_version;  // cuDriverGetVersion, 1000*major + 10*minor
  std::vector<ProbedDevice> devices;
};

// "CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected" for the
// codes gpupin knows, "CUDA error 12345" otherwise.
std::string DescribeCudaError(int code);

// Whether two UUIDs name the same device, ignoring the GPU-/MIG- prefix: the
// driver hands out 16 raw bytes, formatted GPU- whatever the device is.
bool SameCudaUuid(std::string_view a, std::string_view b);

struct ProbeComparison {
  // False when the probe gave no answer to compare with (unavailable, init
  // failure, time-out, crash); `differences` then holds the reason.
  bool comparable = false;
  bool agree = false;
  std::vector<std::string> differences;  // one line each, "cuda:1: ..."
  // Ordinals whose card NVML cannot read (a lost GPU: no UUID), which the
  // driver's answer cannot be checked against: neither agreement nor not.
  std::vector<std::string> unchecked;  // one line each, "cuda:0: ..."
};

// Device by device: the same count, and at each ordinal the same device (by
// UUID; a probe's GPU- formatted bytes match the model's GPU- or MIG- UUID).
// `order_file`: where the model's driver order was kept, named when the
// driver now numbers otherwise (empty: not read from a file);
// `order_replaced`: gpupin has since kept the driver's new order, so the
// file needs no one to remove it.
ProbeComparison CompareProbe(const Resolution& model, const ProbeResult& probe,
                             std::string_view order_file = {}, bool order_replaced = false);

}  // namespace gpupin
