// Arbitrary bytes as the CUDA probe's child could send them (a driver may
// write anything on the pipe), cut into pieces at arbitrary places: no crash,
// no exception, and the verdict keeps the promises of core/probe_transcript.h.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/probe_transcript.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpupin;
  if (size < 2) return 0;
  // The first byte sets how it ended, the second how the bytes arrive.
  const bool timed_out = (data[0] & 1) != 0;
  const int wait_status = data[0] >> 1;
  const size_t piece = 1 + data[1] % 64;
  std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);

  ProbeTranscript transcript;
  for (size_t at = 0; at < text.size(); at += piece) transcript.Append(text.substr(at, piece));
  if (timed_out) transcript.MarkTimedOut();
  transcript.SetWaitStatus(wait_status);
  ProbeResult result = transcript.Interpret(std::chrono::milliseconds(5000));

  Check(result.status == ProbeStatus::kOk || !result.detail.empty());
  if (timed_out) {
    Check(result.status == ProbeStatus::kTimedOut || result.status == ProbeStatus::kUnavailable ||
          result.status == ProbeStatus::kNoDevice || result.status == ProbeStatus::kInitFailed);
  }
  // A device line comes from a complete line of the input.
  Check(result.devices.size() <= text.size() / 8);
  return 0;
}
