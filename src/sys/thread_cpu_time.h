// CPU time of the calling thread: what handling something cost, not the
// time spent blocked on a lock or waiting on a watch.
#pragma once

#include <chrono>

namespace gpupin {

std::chrono::nanoseconds ThreadCpuTime();

}  // namespace gpupin
