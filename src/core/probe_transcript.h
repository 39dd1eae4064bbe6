// What the CUDA probe's child said, and what it means (sys/cuda_probe). The
// child runs libcuda inside a copy of gpupin, where a driver may write
// anything to any descriptor, so the parent treats the pipe's bytes as
// hostile: any line may be cut short, not JSON, or JSON of the wrong shape,
// and none of it may crash gpupin.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/probe_comparison.h"

namespace gpupin {

// One JSON object per line, as the child sends them: {"event": "loaded"},
// {"event": "initialised"}, {"event": "driver_version", "value": N},
// {"event": "count", "value": N}, {"event": "device", "ordinal": N, "uuid":
// S, "pci_bus_id": S, "name": S, "errors": [S...]}, {"event": "done"}, or
// instead {"event": "unavailable", "detail": S} or {"event": "error",
// "call": S, "result": N, "name": S}.
class ProbeTranscript {
 public:
  // The longest line the child sends is a device with its errors: well
  // under this. A driver printing without end does not fill our memory.
  static constexpr size_t kMaxLine = size_t{64} * 1024;

  // Takes bytes as they arrive; a line counts once its newline has come.
  // Lines that are not JSON objects, or longer than kMaxLine, are dropped.
  void Append(std::string_view bytes);
  // The probe process was killed at the deadline.
  void MarkTimedOut() { timed_out_ = true; }
  // The probe process's status from waitpid.
  void SetWaitStatus(int status) { wait_status_ = status; }

  // The verdict. `timeout` is only quoted in the message of a timed-out probe.
  ProbeResult Interpret(std::chrono::milliseconds timeout) const;

 private:
  std::string Stage() const;

  std::vector<nlohmann::json> events_;
  std::string partial_;         // an unfinished last line
  bool skipping_line_ = false;  // the rest of an overlong line is being dropped
  bool timed_out_ = false;
  int wait_status_ = 0;
};

}  // namespace gpupin
