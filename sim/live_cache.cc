#include "sim/live_cache.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "sys/pidfd.h"

namespace gpupin::sim {
namespace {

// Beyond this many entries the rest are checked through /proc, so a crowded
// registry cannot fill the host program's descriptor table.
constexpr size_t kMaxPidfds = 256;

int64_t Nanoseconds(const timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

// The entries ListLive would consider, as they are now; none when the
// directory cannot be read (ListLive then finds none either). An entry
// rewritten by rename (as RegisterLive does) has a new inode; one written in
// place a new size or new times; a chmod a new mode and ctime.
std::vector<LiveCache::Stamp> StampsNow(const std::string& dir) {
  std::vector<LiveCache::Stamp> stamps;
  ForEachEntryName(dir, [&](int dir_fd, const char* name) {
    LiveCache::Stamp stamp{name};
    struct stat st {};
    // A file gone meanwhile keeps the zero stamp: differs next time.
    if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      stamp.ino = st.st_ino;
      stamp.size = st.st_size;
      stamp.mtime_ns = Nanoseconds(st.st_mtim);
      stamp.ctime_ns = Nanoseconds(st.st_ctim);
      stamp.mode = st.st_mode;
    }
    stamps.push_back(std::move(stamp));
  });
  std::sort(stamps.begin(), stamps.end(),
            [](const LiveCache::Stamp& a, const LiveCache::Stamp& b) { return a.name < b.name; });
  return stamps;
}

}  // namespace

LiveCache::LiveCache(std::string dir) : dir_(std::move(dir)) {}

LiveCache::~LiveCache() { ClosePidfds(); }

const std::vector<LiveProcess>& LiveCache::List() {
  // Stamped before listing: a change while ListLive reads shows as a
  // difference next time.
  auto stamps = StampsNow(dir_);
  if (listed_ && stamps == stamps_) {
    DropDead();
  } else {
    Relist(std::move(stamps));
  }
  return live_;
}

const std::vector<LiveProcess>& LiveCache::Last() { return listed_ ? live_ : List(); }

void LiveCache::Relist(std::vector<Stamp> stamps) {
  ClosePidfds();
  stamps_ = std::move(stamps);
  listed_ = true;
  live_ = ListLive(dir_);
  for (const auto& p : live_) {
    int fd = pidfds_.size() < kMaxPidfds ? PidfdOpen(p.pid) : -1;
    // The pid may have been reused since ListLive looked: keep the pidfd
    // only if it names the process of the entry.
    if (fd >= 0 && ProcessStartTime(p.pid) != p.start_time_ticks) {
      close(fd);
      fd = -1;
    }
    pidfds_.push_back(fd);
  }
}

void LiveCache::DropDead() {
  std::vector<pollfd> polls;
  for (int fd : pidfds_) {
    if (fd >= 0) polls.push_back(pollfd{fd, POLLIN, 0});
  }
  if (!polls.empty() && poll(polls.data(), polls.size(), 0) < 0) {
    Relist(StampsNow(dir_));
    return;
  }
  // A pidfd turns readable when its process exits (a zombie holds no GPU
  // memory); entries without one are checked as ListLive does.
  std::vector<bool> dead(live_.size());
  bool any_dead = false;
  for (size_t i = 0, polled = 0; i < live_.size(); ++i) {
    dead[i] = pidfds_[i] >= 0 ? polls[polled++].revents != 0
                              : ProcessStartTime(live_[i].pid) != live_[i].start_time_ticks;
    any_dead = any_dead || dead[i];
  }
  if (!any_dead) return;
  std::vector<LiveProcess> live;
  std::vector<int> pidfds;
  for (size_t i = 0; i < live_.size(); ++i) {
    if (dead[i]) {
      UnregisterLive(dir_, live_[i]);
      if (pidfds_[i] >= 0) close(pidfds_[i]);
    } else {
      live.push_back(std::move(live_[i]));
      pidfds.push_back(pidfds_[i]);
    }
  }
  live_ = std::move(live);
  pidfds_ = std::move(pidfds);
}

void LiveCache::ClosePidfds() {
  for (int fd : pidfds_) {
    if (fd >= 0) close(fd);
  }
  pidfds_.clear();
}

}  // namespace gpupin::sim
