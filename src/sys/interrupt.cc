#include "sys/interrupt.h"

#include <poll.h>
#include <signal.h>

#include <atomic>
#include <chrono>

namespace gpupin {
namespace {

volatile sig_atomic_t g_interrupted = 0;
struct sigaction g_old_int;
struct sigaction g_old_term;

void OnSignal(int) { g_interrupted = 1; }

}  // namespace

InterruptGuard::InterruptGuard() {
  g_interrupted = 0;
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  // No SA_RESTART: a sleeping poll() must return at once with EINTR.
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

bool InterruptGuard::interrupted() const { return g_interrupted != 0; }

bool InterruptGuard::Sleep(int milliseconds) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(milliseconds);
  while (!interrupted()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return true;
    poll(nullptr, 0, static_cast<int>(left.count()));
  }
  return false;
}

}  // namespace gpupin
