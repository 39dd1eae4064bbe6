#include "sys/docker_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>

#include "core/docker_args.h"

extern char** environ;

namespace gpupin {

namespace {

using Clock = std::chrono::steady_clock;

// Asked inside the state lock, for leases anyone may write: a wedged daemon
// or a directory of planted container leases must not hold every user's
// gpupin. One question gets a few seconds, and one gpupin process spends at
// most a few more on docker in all; past that, "cannot tell" keeps the
// leases, as a daemon that is down does.
constexpr auto kPerQuestion = std::chrono::seconds(3);
constexpr auto kPerProcess = std::chrono::seconds(6);
Clock::duration g_spent{};

// Reads `fd` to its end or until `deadline`; false on the deadline.
bool ReadUntil(int fd, Clock::time_point deadline, std::string& text) {
  char buffer[256];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd ready = {fd, POLLIN, 0};
    int polled = poll(&ready, 1, static_cast<int>(left.count()));
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) return false;
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    if (text.size() < 4096) text.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

std::optional<bool> ContainerRunning(const std::string& container_id) {
  if (!IsContainerId(container_id)) return false;
  if (g_spent >= kPerProcess) return std::nullopt;
  const Clock::time_point began = Clock::now();
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
  std::string format = "{{.State.Running}}";
  char* argv[] = {const_cast<char*>("docker"),
                  const_cast<char*>("inspect"),
                  const_cast<char*>("--type"),
                  const_cast<char*>("container"),
                  const_cast<char*>("--format"),
                  format.data(),
                  const_cast<char*>(container_id.c_str()),
                  nullptr};
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, "docker", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    return std::nullopt;
  }
  std::string text;
  const Clock::duration allowed = std::min<Clock::duration>(kPerQuestion, kPerProcess - g_spent);
  const bool answered = ReadUntil(out[0], began + allowed, text);
  close(out[0]);
  if (!answered) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_spent += Clock::now() - began;
  if (!answered || !WIFEXITED(status)) return std::nullopt;
  // `docker inspect` exits 1 both for "No such container" and for a daemon
  // it cannot reach; only the first means the container is gone.
  if (WEXITSTATUS(status) != 0) {
    return text.find("No such") != std::string::npos ? std::optional<bool>(false) : std::nullopt;
  }
  if (text.starts_with("true")) return true;
  if (text.starts_with("false")) return false;
  return std::nullopt;
}

}  // namespace gpupin
