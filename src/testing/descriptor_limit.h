// Lowers this process's limit on open descriptors (RLIMIT_NOFILE) for a
// scope, as a user's `ulimit -n` or a flood of watched processes would use
// it up. Header-only: test code, never part of gpupin_lib.
#pragma once

#include <sys/resource.h>

#include <filesystem>

namespace gpupin::testing {

// How many descriptors this process has open.
inline int OpenDescriptors() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    ++count;
  return count - 1;  // the iterator's own
}

class DescriptorLimit {
 public:
  // At most `soft` open descriptors; 0: no new one at all.
  explicit DescriptorLimit(rlim_t soft) {
    getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    setrlimit(RLIMIT_NOFILE, &lowered);
  }
  ~DescriptorLimit() { setrlimit(RLIMIT_NOFILE, &saved_); }
  DescriptorLimit(const DescriptorLimit&) = delete;
  DescriptorLimit& operator=(const DescriptorLimit&) = delete;

 private:
  rlimit saved_{};
};

}  // namespace gpupin::testing
