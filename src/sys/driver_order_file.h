// The driver's numbering (core/driver_order.h) kept in the shared state
// directory: one file per user, `cuda-order-<uid>.json`, written by that
// user's gpupin after a probe. Another user may plant any file under any
// name there, so a reader trusts only its own file and root's, each only
// when that user owns it and nobody else may write it (doc/security.md).
// Another user who takes the name first (the directory is sticky: it cannot
// be replaced) does not stop a user from keeping the order: it is kept
// under `cuda-order-<uid>-<16 hex>.json` instead, a name nobody can know
// before it exists, and found by listing the directory.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

#include "core/driver_order.h"
#include "sys/state_dir.h"

namespace gpupin {

// "cuda-order-1000.json": the file user `uid` writes.
std::string DriverOrderFileName(uint32_t uid);

// What ReadDriverOrder found, and the file it was in ("DIR/NAME").
struct FoundDriverOrder {
  KeptDriverOrder kept;
  std::string path;
};

// What is kept for `key` (this machine now) in the reader's own file and
// root's (under a random name too, when another user's file holds the
// name): an order from either (the reader's first), else a failure (the
// reader's first), else nullopt. A file that is missing, not a regular file (a
// symlink is not followed), larger than 64 KiB, owned by anyone but the
// user it is named for, writable by group or others, unparsable, or for
// another key is passed over, with one line to `verbose` saying why.
std::optional<FoundDriverOrder> ReadDriverOrder(
    const StateDir& dir, uint32_t reader_uid, const DriverOrderKey& key,
    const std::function<void(const std::string&)>& verbose);

// Replaces user `uid`'s file with `kept`, atomically (mode 0644), under a
// random name when another user's file holds `cuda-order-<uid>.json` (root
// replaces such a file) or a directory does (for root too), and removes
// the user's earlier random-named ones.
Status WriteDriverOrder(const StateDir& dir, uint32_t uid, const KeptDriverOrder& kept);

}  // namespace gpupin
