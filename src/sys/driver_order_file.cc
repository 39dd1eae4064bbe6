#include "sys/driver_order_file.h"

#include <fmt/format.h>

namespace gpupin {
namespace {

// A record of 1024 GPUs (the most the reader takes) is about 45 KiB; no
// server comes near, and a larger file is not read at all.
constexpr size_t kMaxDriverOrderBytes = size_t{64} * 1024;

// The file of user `uid`, if it can be trusted as that user's word.
Result<KeptDriverOrder> ReadOne(const StateDir& dir, uint32_t uid) {
  Result<FileRead> file = dir.ReadFile(DriverOrderFileName(uid), kMaxDriverOrderBytes);
  if (!file.ok()) return file.error();
  if (file->owner_uid != uid) {
    return MakeError(ExitCode::kError,
                     fmt::format("belongs to uid {}, not to uid {}", file->owner_uid, uid));
  }
  if ((file->mode & 022) != 0) {
    return MakeError(ExitCode::kError, fmt::format("mode {:04o} lets others write it", file->mode));
  }
  return KeptDriverOrderFromJson(file->text);
}

}  // namespace

std::string DriverOrderFileName(uint32_t uid) { return fmt::format("cuda-order-{}.json", uid); }

std::optional<KeptDriverOrder> ReadDriverOrder(
    const StateDir& dir, uint32_t reader_uid, const DriverOrderKey& key,
    const std::function<void(const std::string&)>& verbose) {
  std::vector<uint32_t> uids{reader_uid};
  if (reader_uid != 0) uids.push_back(0);
  // Either file's order beats a failure: one user's probe may have failed
  // where another's, later, did not.
  std::optional<DriverOrderFailure> failure;
  for (uint32_t uid : uids) {
    // No file (the usual case, root's most of all) is nothing to say.
    if (!dir.Info(DriverOrderFileName(uid)).ok()) continue;
    const std::string where = fmt::format("{}/{}", dir.path(), DriverOrderFileName(uid));
    Result<KeptDriverOrder> kept = ReadOne(dir, uid);
    if (!kept.ok()) {
      verbose(fmt::format("{} skipped: {}", where, kept.error().message));
      continue;
    }
    if (KeyOf(*kept) != key) {
      verbose(fmt::format("{} is for another boot, driver or set of GPUs", where));
      continue;
    }
    if (auto* order = std::get_if<DriverOrder>(&*kept)) return std::move(*order);
    auto& failed = std::get<DriverOrderFailure>(*kept);
    if (!failure) failure = std::move(failed);
  }
  if (failure) return std::move(*failure);
  return std::nullopt;
}

Status WriteDriverOrder(const StateDir& dir, uint32_t uid, const KeptDriverOrder& kept) {
  return dir.WriteFileAtomic(DriverOrderFileName(uid), KeptDriverOrderToJson(kept));
}

}  // namespace gpupin
