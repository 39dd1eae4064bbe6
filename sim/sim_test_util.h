// Helpers for the simulator's tests: temporary directories and the
// simulated libraries opened with dlopen, as gpupin opens the real ones.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace gpupin::sim {

inline std::string BinPath(const std::string& name) {
  return std::string(GPUPIN_TEST_BIN_DIR) + "/" + name;
}
inline std::string SourcePath(const std::string& name) {
  return std::string(GPUPIN_TEST_SOURCE_DIR) + "/" + name;
}

// The UUIDs of a scenario's GPUs by NVML index (empty when it does not load).
inline std::vector<std::string> ScenarioUuids(const std::string& source_relative_path) {
  std::vector<std::string> uuids;
  auto scenario = LoadScenario(SourcePath(source_relative_path));
  EXPECT_TRUE(scenario.ok());
  if (scenario.ok()) {
    for (const auto& gpu : scenario->gpus) uuids.push_back(gpu.uuid);
  }
  return uuids;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "gpupin-sim-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::string path_;
};

// A simulated library opened with dlopen.
class Library {
 public:
  explicit Library(const std::string& name)
      : handle_(dlopen(BinPath(name).c_str(), RTLD_NOW | RTLD_LOCAL)) {
    EXPECT_NE(handle_, nullptr) << dlerror();
  }
  ~Library() {
    if (handle_) dlclose(handle_);
  }
  bool Has(const char* symbol) const { return handle_ && dlsym(handle_, symbol) != nullptr; }
  // The symbol as a function pointer of type F; fails the test when missing.
  template <class F>
  F Fn(const char* symbol) const {
    void* p = handle_ ? dlsym(handle_, symbol) : nullptr;
    EXPECT_NE(p, nullptr) << symbol;
    return reinterpret_cast<F>(p);
  }

 private:
  void* handle_;
};

}  // namespace gpupin::sim
