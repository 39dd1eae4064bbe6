#include "sys/interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <iterator>

namespace gpupin {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

volatile sig_atomic_t g_signal = 0;
int g_wake_pipe[2] = {-1, -1};
struct sigaction g_previous[std::size(kStopSignals)];

void OnSignal(int signal) {
  if (g_signal == 0) g_signal = signal;
  const int saved_errno = errno;
  const char byte = 1;
  // Non-blocking: a full pipe already says "interrupted".
  if (g_wake_pipe[1] >= 0) (void)!write(g_wake_pipe[1], &byte, 1);
  errno = saved_errno;
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  if (pipe2(g_wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_wake_pipe[0] = g_wake_pipe[1] = -1;
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  // No SA_RESTART: a sleeping poll() must return at once with EINTR.
  for (size_t i = 0; i < std::size(kStopSignals); ++i) {
    sigaction(kStopSignals[i], nullptr, &g_previous[i]);
    // An ignored signal stays ignored: `nohup gpupin run --wait ... &` must
    // outlive its terminal, as a background job of a script outlives Ctrl-C.
    if (g_previous[i].sa_handler != SIG_IGN) sigaction(kStopSignals[i], &action, nullptr);
  }
}

InterruptGuard::~InterruptGuard() {
  for (size_t i = 0; i < std::size(kStopSignals); ++i)
    sigaction(kStopSignals[i], &g_previous[i], nullptr);
  for (int& fd : g_wake_pipe) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

bool InterruptGuard::interrupted() const { return g_signal != 0; }

int InterruptGuard::signal() const { return g_signal; }

int InterruptGuard::wake_fd() const { return g_wake_pipe[0]; }

bool InterruptGuard::Sleep(int milliseconds) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(milliseconds);
  while (!interrupted()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return true;
    pollfd wake = {wake_fd(), POLLIN, 0};
    poll(&wake, 1, static_cast<int>(left.count()));
  }
  return false;
}

bool EndsWithoutCore(int signal) {
  constexpr std::array kSignals = {SIGHUP,    SIGINT,    SIGKILL, SIGPIPE, SIGALRM,
                                   SIGTERM,   SIGUSR1,   SIGUSR2, SIGPOLL, SIGPROF,
                                   SIGVTALRM, SIGSTKFLT, SIGPWR};
  return std::find(kSignals.begin(), kSignals.end(), signal) != kSignals.end() ||
         (signal >= SIGRTMIN && signal <= SIGRTMAX);
}

int DieBySignal(int signal) {
  // Dying by a signal skips exit(), which would have flushed stdout.
  std::fflush(nullptr);
  struct sigaction action = {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  raise(signal);
  return 128 + signal;
}

}  // namespace gpupin
