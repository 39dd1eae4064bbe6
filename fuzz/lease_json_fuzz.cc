// Arbitrary bytes as a file of the shared state directory, read both as a
// lease and as a queue ticket: no crash, no exception, and whatever a reader
// accepts is written back by the writer to the same record (so a lease that
// was read is never silently changed by the next write).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/lease_json.h"
#include "core/queue_ticket.h"

namespace {

template <class Record, class Parse, class Write>
void CheckRoundTrip(std::string_view text, Parse parse, Write write) {
  gpupin::Result<Record> record = parse(text);
  if (!record) {
    if (record.error().message.empty()) std::abort();
    return;
  }
  const std::string written = write(*record);
  gpupin::Result<Record> again = parse(written);
  if (!again || !(*again == *record)) std::abort();
  // The writer's output is a fixed point: writing it again changes nothing.
  if (write(*again) != written) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckRoundTrip<gpupin::Lease>(text, gpupin::LeaseFromJson, gpupin::LeaseToJson);
  CheckRoundTrip<gpupin::QueueTicket>(text, gpupin::TicketFromJson, gpupin::TicketToJson);
  return 0;
}
