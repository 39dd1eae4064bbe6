// Arbitrary bytes as a cuda-order-<uid>.json of the shared state directory:
// no crash, no exception, and whatever the reader accepts (an order or a
// failed probe) the writer writes back to the same record, a fixed point of
// reading and writing.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/driver_order.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpupin::Result<gpupin::KeptDriverOrder> kept = gpupin::KeptDriverOrderFromJson(text);
  if (!kept) {
    if (kept.error().message.empty()) std::abort();
    return 0;
  }
  const std::string written = gpupin::KeptDriverOrderToJson(*kept);
  gpupin::Result<gpupin::KeptDriverOrder> again = gpupin::KeptDriverOrderFromJson(written);
  if (!again || !(*again == *kept)) std::abort();
  if (gpupin::KeptDriverOrderToJson(*again) != written) std::abort();
  return 0;
}
