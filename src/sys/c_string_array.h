// Strings together with the NULL-terminated array of pointers to them that
// execve, its argv and envp, and `environ` take.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpupin {

class CStringArray {
 public:
  explicit CStringArray(std::vector<std::string> strings = {});
  // A copy would point into the original's strings. A move keeps every
  // pointer valid: the strings stay where they are, in the moved buffer.
  CStringArray(const CStringArray&) = delete;
  CStringArray& operator=(const CStringArray&) = delete;
  CStringArray(CStringArray&&) noexcept = default;
  CStringArray& operator=(CStringArray&&) noexcept = default;

  // Writable, as execve's and environ's types are; ends with nullptr.
  char** data() { return pointers_.data(); }
  size_t size() const { return strings_.size(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

// NAME=VALUE for each variable, as an environment block.
CStringArray EnvironmentBlock(const std::map<std::string, std::string>& variables);

}  // namespace gpupin
