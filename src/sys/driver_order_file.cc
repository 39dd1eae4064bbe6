#include "sys/driver_order_file.h"

#include <fmt/format.h>

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "core/hex.h"

namespace gpupin {
namespace {

// A record of 1024 GPUs (the most the reader takes) is about 45 KiB; no
// server comes near, and a larger file is not read at all.
constexpr size_t kMaxDriverOrderBytes = size_t{64} * 1024;
// The writer leaves one record under a random name; more than one of the
// user's own exist only while a writer replaces it.
constexpr size_t kMostRandomNamesRead = 4;
constexpr size_t kRandomNameBytes = 8;
constexpr std::string_view kSuffix = ".json";

std::string RandomNamePrefix(uint32_t uid) { return fmt::format("cuda-order-{}-", uid); }

// "cuda-order-1000-0123456789abcdef.json", exactly.
bool IsRandomName(std::string_view name, uint32_t uid) {
  const std::string prefix = RandomNamePrefix(uid);
  if (name.size() != prefix.size() + 2 * kRandomNameBytes + kSuffix.size() ||
      !name.starts_with(prefix) || !name.ends_with(kSuffix)) {
    return false;
  }
  return IsLowerHex(name.substr(prefix.size(), 2 * kRandomNameBytes), 2 * kRandomNameBytes);
}

struct OwnRecord {
  std::string name;
  int64_t change_time_ns = 0;
};

// User `uid`'s records under random names, owned by that user: at most
// `most` of them, however many names others planted. Only names of that
// user's form are looked at, and at most kMostNames of them: a flood of
// other names costs the reading of the folder, one of such names as many
// lstats as a folder's listing may hold.
std::vector<OwnRecord> OwnRandomNames(const StateDir& dir, uint32_t uid, size_t most) {
  std::vector<OwnRecord> own;
  size_t looked_at = 0;
  (void)dir.ForEachName([&](const char* name) {
    if (!IsRandomName(name, uid)) return true;
    Result<FileInfo> info = dir.Info(name);
    if (info.ok() && info->owner_uid == uid) own.push_back({name, info->change_time_ns});
    return own.size() < most && ++looked_at < kMostNames;
  });
  return own;
}

// Whether what holds user `uid`'s own name keeps that user from writing
// there: another user's file (in the sticky directory only root may replace
// it), or a directory (no file can be renamed over one, by root either).
bool NameTaken(const FileInfo& named, uint32_t uid) {
  return named.directory || (named.owner_uid != uid && uid != 0);
}

// Where user `uid`'s record may be: its own name when a file is there, and,
// when another user's file or a directory took that name, its random
// names.
std::vector<std::string> RecordNames(const StateDir& dir, uint32_t uid) {
  std::vector<std::string> names;
  Result<FileInfo> named = dir.Info(DriverOrderFileName(uid));
  // No file (the usual case, root's most of all) is nothing to say.
  if (!named.ok()) return names;
  names.push_back(DriverOrderFileName(uid));
  if (named->owner_uid != uid || named->directory) {
    for (OwnRecord& own : OwnRandomNames(dir, uid, kMostRandomNamesRead))
      names.push_back(std::move(own.name));
  }
  return names;
}

// The file `name`, if it can be trusted as user `uid`'s word.
Result<KeptDriverOrder> ReadOne(const StateDir& dir, const std::string& name, uint32_t uid) {
  Result<FileRead> file = dir.ReadFile(name, kMaxDriverOrderBytes);
  if (!file.ok()) return file.error();
  if (file->info.owner_uid != uid) {
    return MakeError(ExitCode::kError,
                     fmt::format("belongs to uid {}, not to uid {}", file->info.owner_uid, uid));
  }
  if ((file->mode & 022) != 0) {
    return MakeError(ExitCode::kError, fmt::format("mode {:04o} lets others write it", file->mode));
  }
  return KeptDriverOrderFromJson(file->text);
}

}  // namespace

std::string DriverOrderFileName(uint32_t uid) { return fmt::format("cuda-order-{}.json", uid); }

std::optional<FoundDriverOrder> ReadDriverOrder(
    const StateDir& dir, uint32_t reader_uid, const DriverOrderKey& key,
    const std::function<void(const std::string&)>& verbose) {
  std::vector<uint32_t> uids{reader_uid};
  if (reader_uid != 0) uids.push_back(0);
  // Either user's order beats a failure: one user's probe may have failed
  // where another's, later, did not.
  std::optional<FoundDriverOrder> failure;
  for (uint32_t uid : uids) {
    for (const std::string& name : RecordNames(dir, uid)) {
      const std::string where = fmt::format("{}/{}", dir.path(), name);
      Result<KeptDriverOrder> kept = ReadOne(dir, name, uid);
      if (!kept.ok()) {
        verbose(fmt::format("{} skipped: {}", where, kept.error().message));
        continue;
      }
      if (KeyOf(*kept) != key) {
        verbose(fmt::format("{} is for another boot, driver or set of GPUs", where));
        continue;
      }
      if (std::holds_alternative<DriverOrder>(*kept))
        return FoundDriverOrder{std::move(*kept), where};
      if (!failure) failure = FoundDriverOrder{std::move(*kept), where};
    }
  }
  return failure;
}

Status WriteDriverOrder(const StateDir& dir, uint32_t uid, const KeptDriverOrder& kept) {
  std::string name = DriverOrderFileName(uid);
  Result<FileInfo> named = dir.Info(name);
  if (named.ok() && NameTaken(*named, uid)) {
    name = RandomNamePrefix(uid) + RandomHex(kRandomNameBytes) + std::string(kSuffix);
  }
  Status written = dir.WriteFileAtomic(name, KeptDriverOrderToJson(kept));
  if (!written.ok()) return written;
  // Records under random names written before this one are stale now
  // (another user's file that took our name may have gone since, and then
  // ours is there). One written since, by another gpupin of ours, stays:
  // two writers at once each leave the later record, not none.
  Result<FileInfo> ours = dir.Info(name);
  if (!ours.ok()) return Ok{};
  for (const OwnRecord& own : OwnRandomNames(dir, uid, SIZE_MAX)) {
    if (own.name != name && own.change_time_ns < ours->change_time_ns) (void)dir.Remove(own.name);
  }
  return Ok{};
}

}  // namespace gpupin
