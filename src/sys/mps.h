#pragma once

namespace gpupin {

// Whether an MPS control daemon is listening: its control pipe exists in
// CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps).
bool MpsRunning();

}  // namespace gpupin
