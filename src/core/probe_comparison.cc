#include "core/probe_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "core/printable.h"

namespace gpupin {
namespace {

// The hex digits of a UUID, without its GPU-/MIG- prefix: the driver hands
// out 16 raw bytes and cannot tell us which prefix nvidia-smi would print.
std::string_view UuidDigits(std::string_view uuid) {
  if (uuid.starts_with("GPU-") || uuid.starts_with("MIG-")) uuid.remove_prefix(4);
  return uuid;
}

std::string ModelDevice(const VisibleDevice& device) {
  std::string text = "GPU " + std::to_string(device.gpu_index);
  if (device.mig_index) text += " MIG " + std::to_string(*device.mig_index);
  return text + " (" + device.uuid + ")";
}

}  // namespace

bool SameCudaUuid(std::string_view a, std::string_view b) { return UuidDigits(a) == UuidDigits(b); }

std::string DescribeCudaError(int code) {
  struct Known {
    int code;
    const char* name;
    const char* meaning;
  };
  // From cuda.h's CUresult; the ones a probe of device numbering can meet.
  static constexpr Known kKnown[] = {
      {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
      {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
      {3, "CUDA_ERROR_NOT_INITIALIZED", "the driver is not initialised"},
      {4, "CUDA_ERROR_DEINITIALIZED", "the driver is shutting down"},
      {34, "CUDA_ERROR_STUB_LIBRARY", "libcuda is the toolkit's stub, not the driver's library"},
      {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "every CUDA device is busy or unavailable"},
      {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
      {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
      {304, "CUDA_ERROR_OPERATING_SYSTEM", "an operating system call failed"},
      {500, "CUDA_ERROR_NOT_FOUND", "a named symbol was not found"},
      {800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
      {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
      {802, "CUDA_ERROR_SYSTEM_NOT_READY", "the system is not ready (fabric manager?)"},
      {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
       "libcuda and the kernel driver have different versions"},
      {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
  };
  for (const Known& known : kKnown) {
    if (known.code == code) {
      return std::string(known.name) + " (" + std::to_string(code) + "): " + known.meaning;
    }
  }
  return "CUDA error " + std::to_string(code);
}

ProbeComparison CompareProbe(const Resolution& model, const ProbeResult& probe,
                             std::string_view order_file, bool order_replaced) {
  ProbeComparison comparison;
  // A device named twice makes cuInit fail with CUDA_ERROR_INVALID_DEVICE
  // (seen with driver 580, CUDA 13.0): the driver's answer to a list the
  // model voids, zero devices, rather than a failure to answer.
  constexpr int kCudaErrorInvalidDevice = 101;
  const bool refused_repeated_device = probe.status == ProbeStatus::kInitFailed &&
                                       probe.cuda_error == kCudaErrorInvalidDevice &&
                                       model.names_a_device_twice();
  if (probe.status != ProbeStatus::kOk && probe.status != ProbeStatus::kNoDevice &&
      !refused_repeated_device) {
    comparison.differences.push_back("the driver gave no answer to compare with: " + probe.detail);
    return comparison;
  }
  comparison.comparable = true;
  const size_t model_count = model.visible.size();
  const size_t driver_count = probe.devices.size();
  if (model_count != driver_count) {
    comparison.differences.push_back("gpupin expects " + std::to_string(model_count) +
                                     " CUDA device(s), the driver enumerates " +
                                     std::to_string(driver_count));
  }
  for (size_t i = 0; i < std::max(model_count, driver_count); ++i) {
    const std::string where = "cuda:" + std::to_string(i) + ": ";
    if (i >= driver_count) {
      comparison.differences.push_back(where + "gpupin expects " + ModelDevice(model.visible[i]) +
                                       ", the driver has no such device");
      continue;
    }
    const ProbedDevice& driver = probe.devices[i];
    const std::string driver_text =
        driver.uuid ? *driver.uuid : "a device whose UUID could not be read";
    if (i >= model_count) {
      comparison.differences.push_back(
          fmt::format("{}the driver has {}, gpupin expects no device", where, driver_text));
      continue;
    }
    // Unreadable to NVML, the card may still be the driver's, unless the
    // driver's card there is one the model places elsewhere.
    const bool placed_elsewhere =
        driver.uuid &&
        std::any_of(model.visible.begin(), model.visible.end(), [&](const VisibleDevice& device) {
          return !device.uuid.empty() && SameCudaUuid(*driver.uuid, device.uuid);
        });
    if (model.visible[i].uuid.empty() && !placed_elsewhere) {
      comparison.unchecked.push_back(
          fmt::format("{}NVML cannot read GPU {} (lost?), so the driver's {} is not checked "
                      "against it",
                      where, model.visible[i].gpu_index, driver_text));
      continue;
    }
    if (!driver.uuid || !SameCudaUuid(*driver.uuid, model.visible[i].uuid)) {
      comparison.differences.push_back(fmt::format("{}gpupin expects {}, the driver has {}", where,
                                                   ModelDevice(model.visible[i]), driver_text));
    }
  }
  comparison.agree = comparison.differences.empty();
  // Why they differ goes first: a short listing (doctor's) keeps the first
  // few lines, and this one says what to do.
  if (!comparison.agree && model.order_is_guess) {
    comparison.differences.insert(
        comparison.differences.begin(),
        "gpupin's FASTEST_FIRST order was a guess; the driver's order is the truth, so set "
        "CUDA_DEVICE_ORDER=PCI_BUS_ID or use UUIDs");
  }
  if (!comparison.agree && model.order_from_driver) {
    comparison.differences.insert(
        comparison.differences.begin(),
        fmt::format("gpupin's FASTEST_FIRST order is the driver's as kept in {}, and the driver "
                    "now numbers otherwise: {}",
                    order_file.empty() ? "the state directory (cuda-order-UID.json)"
                                       : PrintableWhole(order_file),
                    order_replaced ? "gpupin now keeps the driver's new order, which the "
                                     "commands after this one follow"
                                   : "remove that file (its owner or root can)"));
  }
  return comparison;
}

}  // namespace gpupin
