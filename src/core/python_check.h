// The static Python check of `gpupin doctor FILE.py…` (doc/commands.md,
// doctor): CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER set after a framework that
// may already have initialised CUDA was imported, and nn.DataParallel
// without device_ids. Works on tokens (core/python_tokenizer), so strings,
// comments and docstrings never count. Pure: files arrive as text, and the
// local modules a file imports are read through the given reader.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpupin {

struct PythonFile {
  std::string path;  // as the user wrote it; used in findings and to find local modules
  std::string text;
};

enum class PythonFindingKind {
  // CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER set after importing a framework
  // that may initialise CUDA at import (tensorflow, transformers, ...).
  kVisibilitySetAfterImport,
  // ... set after a call that initialises CUDA (torch.cuda.init(),
  // set_device(), is_available(), device_count(), current_device()) or puts
  // a tensor or model on the GPU (.cuda(), .to("cuda"), device="cuda"):
  // ignored.
  kVisibilitySetAfterCudaInit,
  // ... set after a bare `import torch`: harmless, since torch initialises
  // CUDA at its first use, not at import. Said so, not failed.
  kVisibilitySetAfterHarmlessImport,
  kDataParallelWithoutDeviceIds,  // nn.DataParallel(model) spreads over every visible GPU
};

// "visibility_set_after_import", "visibility_set_after_cuda_init",
// "visibility_set_after_harmless_import", "data_parallel_without_device_ids".
const char* PythonFindingKindName(PythonFindingKind kind);

struct PythonFinding {
  std::string path;
  int line = 0;  // 1-based
  PythonFindingKind kind = PythonFindingKind::kVisibilitySetAfterImport;
  std::string message;  // what is wrong, one line, without the location
  std::string fix;      // what to do, one line
};

// Reads a file beside a checked one (a local module that may import a
// framework); nullopt when there is none. May be empty: then only the
// checked files themselves are considered as local modules.
using PythonFileReader = std::function<std::optional<std::string>(const std::string& path)>;

// Checks each file. A module imported by a checked file counts as a
// framework import when it is, or (at module level, transitively) imports,
// torch, tensorflow, jax, transformers, accelerate, lightning, keras, vllm,
// cupy, numba, tensorrt, onnxruntime and the like; `import mymod` is looked up beside the importing
// file (through `read`) and then among `files` by name. Findings come sorted by path and line.
std::vector<PythonFinding> CheckPythonFiles(const std::vector<PythonFile>& files,
                                            const PythonFileReader& read);

// "train.py:12: <message>; <fix>", the way a compiler reports.
std::string FormatPythonFinding(const PythonFinding& finding);

}  // namespace gpupin
