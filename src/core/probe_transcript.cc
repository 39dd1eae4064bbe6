#include "core/probe_transcript.h"

#include <sys/wait.h>

#include <limits>
#include <optional>
#include <string>

namespace gpupin {
namespace {

using json = nlohmann::json;

constexpr int kCudaErrorNoDevice = 100;

// The accessors never throw: a field that is absent or of another type
// reads as absent.
std::optional<std::string> Text(const json& event, const char* key) {
  auto it = event.find(key);
  if (it == event.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<int> Int(const json& event, const char* key) {
  auto it = event.find(key);
  if (it == event.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) {
    auto value = it->get<uint64_t>();
    if (value > static_cast<uint64_t>(std::numeric_limits<int>::max())) return std::nullopt;
    return static_cast<int>(value);
  }
  auto value = it->get<int64_t>();
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
    return std::nullopt;
  return static_cast<int>(value);
}

std::string Kind(const json& event) { return Text(event, "event").value_or(""); }

std::string CudaFailure(const json& event, int code) {
  std::string text = DescribeCudaError(code);
  if (std::optional<std::string> name = Text(event, "name"); name && text.starts_with("CUDA error"))
    text = *name + " (" + std::to_string(code) + ")";
  return Text(event, "call").value_or("?") + ": " + text;
}

ProbedDevice DeviceFrom(const json& event, int default_ordinal) {
  ProbedDevice device;
  device.ordinal = Int(event, "ordinal").value_or(default_ordinal);
  device.uuid = Text(event, "uuid");
  device.pci_bus_id = Text(event, "pci_bus_id");
  device.name = Text(event, "name");
  if (auto errors = event.find("errors"); errors != event.end() && errors->is_array()) {
    for (const json& error : *errors) {
      if (error.is_string()) device.errors.push_back(error.get<std::string>());
    }
  }
  return device;
}

}  // namespace

void ProbeTranscript::Append(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (!skipping_line_) partial_.append(piece);
    if (partial_.size() > kMaxLine) {
      partial_.clear();
      skipping_line_ = true;
    }
    if (newline == std::string_view::npos) return;
    if (!skipping_line_) {
      json event = json::parse(partial_, nullptr, false);
      if (!event.is_discarded() && event.is_object()) events_.push_back(std::move(event));
    }
    partial_.clear();
    skipping_line_ = false;
    bytes.remove_prefix(newline + 1);
  }
}

std::string ProbeTranscript::Stage() const {
  if (events_.empty()) return "while loading libcuda";
  const std::string last = Kind(events_.back());
  if (last == "loaded") return "in cuInit";
  if (last == "initialised" || last == "driver_version") return "in cuDeviceGetCount";
  return "while listing devices";
}

ProbeResult ProbeTranscript::Interpret(std::chrono::milliseconds timeout) const {
  ProbeResult result;
  bool done = false;
  for (const json& event : events_) {
    const std::string kind = Kind(event);
    if (kind == "unavailable") {
      result.status = ProbeStatus::kUnavailable;
      std::optional<std::string> detail = Text(event, "detail");
      result.detail = detail && !detail->empty() ? *detail : "libcuda could not be loaded";
      return result;
    }
    if (kind == "error") {
      const int code = Int(event, "result").value_or(-1);
      result.cuda_error = code;
      result.detail = CudaFailure(event, code);
      result.status = code == kCudaErrorNoDevice && Text(event, "call") == "cuInit"
                          ? ProbeStatus::kNoDevice
                          : ProbeStatus::kInitFailed;
      return result;
    }
    if (kind == "driver_version") {
      if (std::optional<int> version = Int(event, "value")) result.driver_version = version;
    }
    if (kind == "device")
      result.devices.push_back(DeviceFrom(event, static_cast<int>(result.devices.size())));
    done = done || kind == "done";
  }
  if (timed_out_) {
    result.status = ProbeStatus::kTimedOut;
    result.detail = "the CUDA driver did not answer within " + std::to_string(timeout.count()) +
                    " ms (stuck " + Stage() + "); the probe process was killed";
  } else if (!done) {
    result.status = ProbeStatus::kCrashed;
    result.detail = "the probe process " +
                    (WIFSIGNALED(wait_status_)
                         ? "died of signal " + std::to_string(WTERMSIG(wait_status_))
                         : "exited with status " + std::to_string(WEXITSTATUS(wait_status_))) +
                    " " + Stage();
  } else {
    result.status = ProbeStatus::kOk;
  }
  return result;
}

}  // namespace gpupin
