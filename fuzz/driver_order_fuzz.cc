// Arbitrary bytes as a cuda-order-<uid>.json of the shared state directory:
// no crash, no exception, and whatever the reader accepts the writer writes
// back to the same record, a fixed point of reading and writing.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/driver_order.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gpupin::Result<gpupin::DriverOrder> order = gpupin::DriverOrderFromJson(text);
  if (!order) {
    if (order.error().message.empty()) std::abort();
    return 0;
  }
  const std::string written = gpupin::DriverOrderToJson(*order);
  gpupin::Result<gpupin::DriverOrder> again = gpupin::DriverOrderFromJson(written);
  if (!again || !(*again == *order)) std::abort();
  if (gpupin::DriverOrderToJson(*again) != written) std::abort();
  return 0;
}
