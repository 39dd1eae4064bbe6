// Arbitrary bytes as a Python file: the tokenizer and the checker must not
// crash or hang, and every finding must point at a line of the file.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/python_check.h"
#include "core/python_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  int lines = gpupin::PyLineCount(text);
  // The file also serves as its own local module (`import x` finds x.py),
  // which drives the module resolution and cycle handling.
  std::vector<gpupin::PythonFile> files = {{"x.py", text}};
  for (const auto& finding : gpupin::CheckPythonFiles(files, nullptr)) {
    if (finding.line < 1 || finding.line > lines) std::abort();
  }
  return 0;
}
