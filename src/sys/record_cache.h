// What one reader made of the record files of a directory (the record, or
// why it was skipped), kept for as long as each file stays the same version
// (SameVersion). A waiter reads the whole queue at every wake-up: with the
// cache, an unchanged ticket costs only the listing's lstat, not an open, a
// read and a parse, and a user's junk files cost each reader one parse
// rather than one at every read.
//
// What a file says is kept, and that the processes it names are gone once
// a read found them gone (a process never comes back under the same pid
// and start time); that they live is asked anew at each read. Parsed
// records are kept up to kMaxCachedBytes of file text in all, so a
// directory full of large records costs a reader about that much memory at
// most; verdicts are kept whatever the size of the file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "sys/state_dir.h"

namespace gpupin {

template <class Record>
class RecordCache {
 public:
  static constexpr size_t kMaxCachedBytes = size_t{4} << 20;

  // What a read made of one file.
  struct Entry {
    FileInfo info;                 // the version that was read
    std::optional<Record> record;  // when valid and within the memory bound
    std::string skipped;           // why it was skipped; empty when valid
    bool processes_gone = false;
  };

  // The entry for `name`, if it was made of the version `listed` shows.
  const Entry* Find(const std::string& name, const FileInfo& listed) const {
    auto it = entries_.find(name);
    if (it == entries_.end() || !SameVersion(it->second.info, listed)) return nullptr;
    return &it->second;
  }

  // Keeps what a read made of `name`, replacing what an older version
  // gave; a record beyond the memory bound is dropped, its verdicts kept.
  void Keep(const std::string& name, Entry entry) {
    if (auto it = entries_.find(name); it != entries_.end()) {
      if (SameVersion(it->second.info, entry.info))
        entry.processes_gone = entry.processes_gone || it->second.processes_gone;
      Erase(it);
    }
    if (entry.record) {
      const size_t bytes = static_cast<size_t>(std::max<int64_t>(entry.info.size, 0));
      if (cached_bytes_ + bytes > kMaxCachedBytes) {
        entry.record.reset();
      } else {
        cached_bytes_ += bytes;
      }
    }
    entries_.emplace(name, std::move(entry));
  }

  // Notes that the processes the version of `name` kept names are gone.
  void ProcessesGone(const std::string& name) {
    if (auto it = entries_.find(name); it != entries_.end()) it->second.processes_gone = true;
  }

  // Forgets every file but those of the latest listing, `listed`.
  void KeepOnly(const std::set<std::string>& listed) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (listed.contains(it->first)) {
        ++it;
      } else {
        it = Erase(it);
      }
    }
  }

  size_t size() const { return entries_.size(); }

 private:
  using Entries = std::map<std::string, Entry>;

  typename Entries::iterator Erase(typename Entries::iterator it) {
    if (it->second.record)
      cached_bytes_ -= static_cast<size_t>(std::max<int64_t>(it->second.info.size, 0));
    return entries_.erase(it);
  }

  Entries entries_;
  size_t cached_bytes_ = 0;
};

}  // namespace gpupin
